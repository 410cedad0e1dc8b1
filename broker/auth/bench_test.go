package auth

import (
	"net/netip"
	"testing"

	tsign "github.com/rocketraft/rocketraft/transport/sign"

	"github.com/rocketraft/rocketraft/transport"
)

// sendExtFields is what the Go client sends with a SEND_MESSAGE (§1.4 of the
// security reference).
func sendExtFields() map[string]string {
	return map[string]string{"producerGroup": "PG_demo", "topic": "TopicTest", "queueId": "0", "sysFlag": "0",
		"bornTimestamp": "1700000000000", "flag": "0", "reconsumeTimes": "0", "unitMode": "false",
		"maxReconsumeTimes": "0", "batch": "false", "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"properties": "UNIQ_KEY\x01AC110001000018B4AAC2\x02WAIT\x01true\x02", "bname": "broker-a"}
}

// BenchmarkCheckSignedSend is the broker's cost of authenticating and
// authorising one signed 1 KiB send; BenchmarkCheckAllowListed the cheapest
// path (an allow-listed address), for comparison in the same run.
func BenchmarkCheckSignedSend(b *testing.B) {
	acl, err := Parse([]byte("accounts: [{accessKey: RocketMQ, secretKey: \"12345678\", defaultTopicPerm: PUB}]\n"))
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 1024)
	ext := tsign.Credentials{AccessKey: "RocketMQ", SecretKey: "12345678"}.SignExt(sendExtFields(), body)
	remote := netip.MustParseAddr("172.16.0.9")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := acl.Check(transport.SendMessage, ext, body, remote); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckAllowListed(b *testing.B) {
	acl, err := Parse([]byte("globalWhiteRemoteAddresses: [\"172.16.*.*\"]\n"))
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 1024)
	ext := sendExtFields()
	remote := netip.MustParseAddr("172.16.0.9")
	b.ReportAllocs()
	for b.Loop() {
		if err := acl.Check(transport.SendMessage, ext, body, remote); err != nil {
			b.Fatal(err)
		}
	}
}
