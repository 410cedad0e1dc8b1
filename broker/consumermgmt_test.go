package broker

import (
	"github.com/rocketraft/rocketraft/broker/replica"

	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// fakeConsumer is a client connection that heartbeats as a consumer of group and
// answers what a broker sends it.
type fakeConsumer struct {
	client *transport.Client
	resets chan *transport.Command
}

// newFakeConsumer heartbeats as a Go client; lang, when given, is the
// language its heartbeat announces instead (the broker answers per language).
func newFakeConsumer(t *testing.T, tb *testBroker, group, clientID string, lang ...string) *fakeConsumer {
	t.Helper()
	fc := &fakeConsumer{resets: make(chan *transport.Command, 4)}
	fc.client = transport.NewClient(transport.ClientConfig{DialTimeout: time.Second,
		OnRequest: transport.HandlerFunc(func(_ context.Context, _ *transport.Conn, req *transport.Command) *transport.Command {
			switch req.RequestCode() {
			case transport.ResetConsumerClientOffset:
				fc.resets <- req
				return nil
			case transport.GetConsumerRunningInfo:
				r := transport.NewResponse(transport.Success, "")
				r.Body = []byte(`{"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY","client":"` + req.Field("clientId") + `"}}`)
				return r
			}
			return transport.NewResponse(transport.RequestCodeNotSupported, "")
		})})
	t.Cleanup(func() { fc.client.Close() })
	body, _ := json.Marshal(map[string]any{"clientID": clientID, "producerDataSet": []any{},
		"consumerDataSet": []any{map[string]any{"groupName": group, "consumeType": "CONSUME_PASSIVELY", "messageModel": "CLUSTERING",
			"consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "subscriptionDataSet": []any{}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hb := transport.NewRequest(transport.HeartBeat, nil, body)
	if len(lang) > 0 {
		hb.Language = lang[0]
	}
	if _, err := fc.client.Invoke(ctx, tb.b.Addr(), hb); err != nil {
		t.Fatal(err)
	}
	return fc
}

func TestResetOffsetOverTheWire(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	for i := range 3 {
		tb.call(t, transport.SendMessage, sendExt("R", 0, props(store.PropertyUniqKey, "U"+strconv.Itoa(i))), []byte("r"))
	}
	waitDispatched(t, tb, "R", 3)
	fc := newFakeConsumer(t, tb, "rg", "10.0.0.9@1")
	r := tb.call(t, transport.InvokeBrokerToResetOffset, map[string]string{"topic": "R", "group": "rg", "timestamp": "0", "isForce": "true"}, nil)
	if r.ResponseCode() != transport.Success {
		t.Fatalf("reset: %v %s", r.ResponseCode(), r.Remark)
	}
	// Apache's ResetOffsetBody: bare MessageQueue keys, what Java's mqadmin decodes
	// (5.5's fastjson2 reads no other form).
	assertBareQueueKeys(t, r.Body)
	ans := decodeMQTable[int64](t, r.Body)
	if off, ok := ans[messageQueue{"R", "broker-a", 0}]; len(ans) == 0 || !ok || off != 0 {
		t.Fatalf("reset answer %s", r.Body)
	}
	if off, ok := tb.replica.ConsumerOffset("rg", "R", 0); !ok || off != 0 {
		t.Fatalf("replicated offset of queue 0 = %d %v, want 0", off, ok)
	}
	select {
	case req := <-fc.resets:
		// The fake consumer speaks GO: the gson array form its client parses.
		if req.Field("group") != "rg" || req.Field("topic") != "R" || !json.Valid(req.Body) || !strings.HasPrefix(string(req.Body), `{"offsetTable":[[`) {
			t.Fatalf("RESET_CONSUMER_CLIENT_OFFSET ext %v body %s", req.Fields(), req.Body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the connected consumer was not told to reset")
	}
	// A Java member of the group is told in Apache's fastjson form, which its
	// ResetOffsetBody decoder reads (the array form fails there).
	jc := newFakeConsumer(t, tb, "rg", "10.0.0.9@java", "JAVA")
	tb.call(t, transport.InvokeBrokerToResetOffset, map[string]string{"topic": "R", "group": "rg", "timestamp": "0", "isForce": "true"}, nil)
	select {
	case req := <-jc.resets:
		assertBareQueueKeys(t, req.Body)
		if got := decodeMQTable[int64](t, req.Body); len(got) == 0 || got[messageQueue{"R", "broker-a", 0}] != 0 {
			t.Fatalf("Java client's RESET_CONSUMER_CLIENT_OFFSET body %s", req.Body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the Java consumer was not told to reset")
	}
	// To the end: every queue's max offset.
	r = tb.call(t, transport.InvokeBrokerToResetOffset, map[string]string{"topic": "R", "group": "rg", "timestamp": "-1", "isForce": "true"}, nil)
	if end := decodeMQTable[int64](t, r.Body); end[messageQueue{"R", "broker-a", 0}] != 3 {
		t.Fatalf("reset to the end: %s", r.Body)
	}
	if r := tb.call(t, transport.InvokeBrokerToResetOffset, map[string]string{"topic": "nope", "group": "rg", "timestamp": "0", "isForce": "true"}, nil); r.ResponseCode() != transport.TopicNotExist {
		t.Fatalf("unknown topic: %v %s", r.ResponseCode(), r.Remark)
	}
}

func TestConsumerRunningInfoRelayed(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	newFakeConsumer(t, tb, "ig", "10.0.0.9@2")
	r := tb.call(t, transport.GetConsumerRunningInfo, map[string]string{"consumerGroup": "ig", "clientId": "10.0.0.9@2"}, nil)
	if r.ResponseCode() != transport.Success || string(r.Body) != `{"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY","client":"10.0.0.9@2"}}` {
		t.Fatalf("relayed answer: %v %s body %s", r.ResponseCode(), r.Remark, r.Body)
	}
	r = tb.call(t, transport.GetConsumerRunningInfo, map[string]string{"consumerGroup": "ig", "clientId": "other@1"}, nil)
	if r.ResponseCode() != transport.SystemError {
		t.Fatalf("unknown client: %v %s", r.ResponseCode(), r.Remark)
	}
}
