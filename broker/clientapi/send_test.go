package clientapi

import (
	"errors"
	"strings"
	"testing"

	"github.com/rocketraft/rocketraft/broker/route"
)

func TestParseSendHeaderV1AndV2Agree(t *testing.T) {
	v1 := map[string]string{"producerGroup": "pg", "topic": "T", "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": "3", "sysFlag": "1", "bornTimestamp": "1700000000000", "flag": "5", "properties": "TAGS\x01a\x02",
		"reconsumeTimes": "0", "unitMode": "false", "maxReconsumeTimes": "0", "batch": "false", "bname": "broker-a"}
	v2 := map[string]string{"a": "pg", "b": "T", "c": "TBW102", "d": "4", "e": "3", "f": "1", "g": "1700000000000",
		"h": "5", "i": "TAGS\x01a\x02", "j": "0", "k": "false", "l": "0", "m": "false", "n": "broker-a"}
	h1, err1 := parseSendHeader(v1)
	h2, err2 := parseSendHeader(v2)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if h1 != h2 || h1.QueueID != 3 || h1.SysFlag != 1 || h1.BrokerName != "broker-a" || h1.Properties != "TAGS\x01a\x02" {
		t.Fatalf("v1 %+v\nv2 %+v", h1, h2)
	}
}

func TestParseSendHeaderNamesBadKey(t *testing.T) {
	_, err := parseSendHeader(map[string]string{"topic": "T", "queueId": "x1"})
	if !errors.Is(err, route.ErrBadHeader) || !strings.Contains(err.Error(), `queueId="x1"`) {
		t.Fatalf("err = %v", err)
	}
	_, err = parseSendHeader(map[string]string{"queueId": "1"})
	if err == nil || !strings.Contains(err.Error(), "topic") {
		t.Fatalf("missing topic: %v", err)
	}
}

func TestBatchRoundTripAndMalformed(t *testing.T) {
	in := []BatchElement{{Flag: 1, Body: []byte("one"), Properties: "K\x01v\x02"}, {Body: []byte{}, Properties: ""}}
	b := EncodeBatch(in)
	out, err := decodeBatch(b)
	if err != nil || len(out) != 2 || string(out[0].Body) != "one" || out[0].Flag != 1 || out[0].Properties != "K\x01v\x02" {
		t.Fatalf("round trip: %+v %v", out, err)
	}
	for name, bad := range map[string][]byte{
		"empty":      nil,
		"truncated":  b[:len(b)-1],
		"huge total": append([]byte{0x7f, 0xff, 0xff, 0xff}, b[4:]...),
		"trailing":   append(append([]byte{}, b...), 1, 2, 3),
	} {
		if _, err := decodeBatch(bad); !errors.Is(err, route.ErrBatchMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
