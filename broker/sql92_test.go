package broker

import (
	"github.com/rocketraft/rocketraft/broker/replica"

	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// sqlHeartbeat registers group on topic with an SQL92 subscription, as the Go push
// consumer does: the expression travels only in the heartbeat.
func sqlHeartbeat(t *testing.T, tb *testBroker, group, topic, expr string, subVersion int64) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"clientID": "10.0.0.1@1", "producerDataSet": []any{},
		"consumerDataSet": []any{map[string]any{"groupName": group, "consumeType": "CONSUME_PASSIVELY", "messageModel": "CLUSTERING",
			"consumeFromWhere": "CONSUME_FROM_FIRST_OFFSET", "subscriptionDataSet": []any{map[string]any{
				"topic": topic, "subString": expr, "tagsSet": []string{}, "codeSet": []string{}, "expressionType": "SQL92", "subVersion": subVersion}}}},
	})
	if r := tb.call(t, transport.HeartBeat, nil, body); r.ResponseCode() != transport.Success {
		t.Fatalf("heartbeat: %v %s", r.ResponseCode(), r.Remark)
	}
}

// waitDispatched waits until the ConsumeQueue of (topic, 0) holds n entries: the
// store dispatches appended messages asynchronously.
func waitDispatched(t *testing.T, tb *testBroker, topic string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for tb.st.MaxQueueOffset(topic, 0) < store.QueueOffset(n) {
		if time.Now().After(deadline) {
			t.Fatalf("%s queue 0 has %d entries after 5 s, want %d", topic, tb.st.MaxQueueOffset(topic, 0), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func pulledBodies(t *testing.T, r *transport.Command) []string {
	t.Helper()
	if r.ResponseCode() != transport.Success {
		return nil
	}
	var out []string
	for _, m := range primitive.DecodeMessage(r.Body) {
		out = append(out, string(m.Body))
	}
	return out
}

func TestSQL92PushConsumerFilteredByHeartbeatExpression(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	msgs := []struct{ a, b string }{{"7", "x"}, {"3", "x"}, {"9", "y"}, {"", "x"}, {"6", "x"}, {"abc", "x"}}
	for i, m := range msgs {
		kv := []string{store.PropertyUniqKey, "U" + strconv.Itoa(i), "b", m.b}
		if m.a != "" {
			kv = append(kv, "a", m.a)
		}
		if r := tb.call(t, transport.SendMessage, sendExt("S", 0, props(kv...)), []byte("m"+strconv.Itoa(i))); r.ResponseCode() != transport.Success {
			t.Fatalf("send %d: %v %s", i, r.ResponseCode(), r.Remark)
		}
	}
	waitDispatched(t, tb, "S", len(msgs))
	sqlHeartbeat(t, tb, "sg", "S", "a > 5 AND b = 'x'", 42)
	r := tb.call(t, transport.PullMessage, pullExt("sg", "S", 0, 0, 0), nil)
	if got := strings.Join(pulledBodies(t, r), ","); got != "m0,m4" {
		t.Fatalf("pulled %q (code %v %s), want m0,m4", got, r.ResponseCode(), r.Remark)
	}
	tb.call(t, transport.PullMessage, pullExt("sg", "S", 0, 1, 0), nil)
	if n := tb.b.clients.CompiledFilters(); n != 1 {
		t.Fatalf("filter cache holds %d expressions after two pulls of one subscription, want 1", n)
	}
	// A new subscription version with another expression replaces the filter.
	sqlHeartbeat(t, tb, "sg", "S", "a IS NULL OR a = 'abc'", 43)
	r = tb.call(t, transport.PullMessage, pullExt("sg", "S", 0, 0, 0), nil)
	if got := strings.Join(pulledBodies(t, r), ","); got != "m3,m5" {
		t.Fatalf("after resubscribe pulled %q, want m3,m5", got)
	}
}

func TestSQL92InBandPullAndParseFailure(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	for i, a := range []string{"1", "2", "3"} {
		tb.call(t, transport.SendMessage, sendExt("P", 0, props(store.PropertyUniqKey, "U"+a, "a", a)), []byte("p"+strconv.Itoa(i)))
	}
	waitDispatched(t, tb, "P", 3)
	ext := pullExt("pg", "P", 0, 0, 0)
	ext["sysFlag"] = strconv.Itoa(pullFlagSubscription)
	ext["subscription"], ext["expressionType"], ext["subVersion"] = "a BETWEEN 2 AND 3", "SQL92", "1700000000000000000"
	r := tb.call(t, transport.PullMessage, ext, nil)
	if got := strings.Join(pulledBodies(t, r), ","); got != "p1,p2" {
		t.Fatalf("in-band SQL92 pull got %q (code %v %s), want p1,p2", got, r.ResponseCode(), r.Remark)
	}
	ext["subscription"] = "a BETWEEN 2 OR 3"
	r = tb.call(t, transport.PullMessage, ext, nil)
	if r.ResponseCode() != transport.SubscriptionParseFailed || !strings.Contains(r.Remark, "expected AND") {
		t.Fatalf("malformed expression: code %v remark %q, want SUBSCRIPTION_PARSE_FAILED naming the problem", r.ResponseCode(), r.Remark)
	}
	ext["expressionType"] = "CLASS"
	if r := tb.call(t, transport.PullMessage, ext, nil); r.ResponseCode() != transport.SubscriptionParseFailed {
		t.Fatalf("unknown expression type: code %v %s", r.ResponseCode(), r.Remark)
	}
	// TAG filtering still works in-band.
	ext["expressionType"], ext["subscription"], ext["subVersion"] = "TAG", "*", "0"
	if got := pulledBodies(t, tb.call(t, transport.PullMessage, ext, nil)); len(got) != 3 {
		t.Fatalf("TAG * pulled %v", got)
	}
}
