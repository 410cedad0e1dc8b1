package broker

import (
	"testing"

	"github.com/rocketraft/rocketraft/transport"
)

// Sends run on the connection's reader goroutine. One that has to create a
// topic through raft first (its own, with autoCreateTopicEnable; the delay
// levels' system topic; the half topic of a transaction) is handed to a
// goroutine instead, and every one of them is stored and answered over TCP,
// with the connection still serving what comes after.
func TestInlineSendsThatCreateTopics(t *testing.T) {
	rb := startRaftBroker(t)
	send := func(topic, props string, sysFlag string) *transport.Command {
		return rb.call(t, transport.SendMessageV2, map[string]string{
			"a": "pg", "b": topic, "c": "TBW102", "d": "4", "e": "0", "f": sysFlag,
			"g": "1764000000000", "h": "0", "i": props, "j": "0", "k": "false", "m": "false",
		}, []byte("body"))
	}
	for _, c := range []struct {
		name, topic, props, sysFlag, created string
	}{
		{"a new topic", "InlineNew", "UNIQ_KEY\x01A1\x02", "0", "InlineNew"},
		{"the same topic again", "InlineNew", "UNIQ_KEY\x01A2\x02", "0", ""},
		{"a delayed message", "InlineNew", "UNIQ_KEY\x01A3\x02DELAY\x013\x02", "0", "SCHEDULE_TOPIC_XXXX"},
		{"a prepared transaction message", "InlineNew", "UNIQ_KEY\x01A4\x02TRAN_MSG\x01true\x02PGROUP\x01pg\x02", "4", "RMQ_SYS_TRANS_HALF_TOPIC"},
	} {
		if resp := send(c.topic, c.props, c.sysFlag); resp.ResponseCode() != transport.Success {
			t.Fatalf("%s: %s %q", c.name, resp.ResponseCode(), resp.Remark)
		}
		if c.created != "" {
			if _, ok := rb.rep.Topic(c.created); !ok {
				t.Fatalf("%s: topic %s was not created", c.name, c.created)
			}
		}
		if resp := rb.call(t, transport.HeartBeat, nil, []byte(`{"clientID":"c1","producerDataSet":[],"consumerDataSet":[]}`)); resp.ResponseCode() != transport.Success {
			t.Fatalf("after %s: heartbeat %s", c.name, resp.ResponseCode())
		}
	}
}
