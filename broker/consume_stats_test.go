package broker

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/rocketraft/rocketraft/transport"
)

// TestConsumeStatsPullOffsetAndTps: GET_CONSUME_STATS reports, per queue, the
// next offset the group was told to pull (ahead of its committed offset while
// messages are in flight, the committed offset for a queue it never pulled
// here) and, as consumeTps, the messages per second it pulled over the last
// minute; a group that pulled nothing reads 0.
func TestConsumeStatsPullOffsetAndTps(t *testing.T) {
	rb := startRaftBroker(t)
	sendN(t, rb, "CT", 0, 6)
	sendN(t, rb, "CT", 1, 2)
	pull := func(q int, offset int64, n int) *transport.Command {
		ext := pullExt("ctGroup", "CT", q, offset, 0)
		ext["maxMsgNums"], ext["sysFlag"], ext["subscription"] = strconv.Itoa(n), strconv.Itoa(pullFlagSubscription), "*"
		return mustOK(t, "pull", rb.call(t, transport.PullMessage, ext, nil))
	}
	if r := pull(0, 0, 4); r.Field("nextBeginOffset") != "4" {
		t.Fatalf("pull of 4: next %s", r.Field("nextBeginOffset"))
	}
	mustOK(t, "commit", rb.call(t, transport.UpdateConsumerOffset,
		map[string]string{"consumerGroup": "ctGroup", "topic": "CT", "queueId": "0", "commitOffset": "2"}, nil))
	mustOK(t, "commit", rb.call(t, transport.UpdateConsumerOffset,
		map[string]string{"consumerGroup": "ctGroup", "topic": "CT", "queueId": "1", "commitOffset": "1"}, nil))

	type offsetWrapper struct {
		BrokerOffset, ConsumerOffset, PullOffset int64
	}
	stats := func(group string) (map[messageQueue]offsetWrapper, float64) {
		t.Helper()
		r := mustOK(t, "consume stats", rb.call(t, transport.GetConsumeStats, map[string]string{"consumerGroup": group, "topic": "CT"}, nil))
		var tps struct {
			ConsumeTps float64 `json:"consumeTps"`
		}
		if err := json.Unmarshal(fastjsonToJSON(t, r.Body), &tps); err != nil {
			t.Fatal(err)
		}
		return decodeMQTable[offsetWrapper](t, r.Body), tps.ConsumeTps
	}
	table, tps := stats("ctGroup")
	if q0 := table[messageQueue{"CT", "broker-a", 0}]; q0 != (offsetWrapper{6, 2, 4}) {
		t.Errorf("queue 0 after a pull of 4 and a commit of 2: %+v, want broker 6, consumer 2, pull 4", q0)
	}
	if q1 := table[messageQueue{"CT", "broker-a", 1}]; q1 != (offsetWrapper{2, 1, 1}) {
		t.Errorf("queue 1, never pulled here: %+v, want the committed offset as pull offset", q1)
	}
	// 4 messages within the minute view, which spans at least its first 10 s sample.
	if tps <= 0 || tps > 4.0/10 {
		t.Errorf("consumeTps %v after 4 messages pulled just now, want (0, 0.4]", tps)
	}

	// Pulling on moves the pull offset; a reset below it leaves the committed one.
	pull(0, 4, 32)
	if table, _ = stats("ctGroup"); table[messageQueue{"CT", "broker-a", 0}].PullOffset != 6 {
		t.Errorf("after pulling to the end: %+v", table[messageQueue{"CT", "broker-a", 0}])
	}
	mustOK(t, "commit", rb.call(t, transport.UpdateConsumerOffset,
		map[string]string{"consumerGroup": "other", "topic": "CT", "queueId": "0", "commitOffset": "3"}, nil))
	if table, tps = stats("other"); tps != 0 || table[messageQueue{"CT", "broker-a", 0}] != (offsetWrapper{6, 3, 3}) {
		t.Errorf("a group that pulled nothing: tps %v, queue 0 %+v", tps, table[messageQueue{"CT", "broker-a", 0}])
	}
}
