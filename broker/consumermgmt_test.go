package broker

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

func TestResetOffsetsRule(t *testing.T) {
	search := func(q int32, ts int64) store.QueueOffset { return store.QueueOffset(ts/10 + int64(q)) }
	maxOff := func(q int32) store.QueueOffset { return 100 + store.QueueOffset(q) }
	current := func(q int32) (store.QueueOffset, bool) {
		if q == 2 {
			return 0, false
		}
		return 5, true
	}
	cases := []struct {
		ts    int64
		force bool
		want  []int64
	}{
		{30, true, []int64{3, 4, 5}},       // by timestamp
		{30, false, []int64{3, 4, 5}},      // backwards only: all are ≤ 5 or have no offset
		{100, false, []int64{5, 5, 12}},    // queues 0 and 1 would move forward: kept at 5
		{100, true, []int64{10, 11, 12}},   // forced forward
		{-1, true, []int64{100, 101, 102}}, // to the end
	}
	for _, c := range cases {
		got := resetOffsets("broker-a", "T", 3, c.ts, c.force, search, maxOff, current)
		for i, e := range got {
			if e.Offset != c.want[i] || e.QueueID != int32(i) || e.Topic != "T" || e.BrokerName != "broker-a" {
				t.Errorf("ts=%d force=%v queue %d: %+v, want offset %d", c.ts, c.force, i, e, c.want[i])
			}
		}
	}
}

func TestGsonOffsetTableGolden(t *testing.T) {
	got := string(gsonOffsetTable([]ResetOffsetEntry{{Topic: "T", BrokerName: "b", QueueID: 0, Offset: 5}, {Topic: "T", BrokerName: "b", QueueID: 1, Offset: 7}}))
	want := `{"offsetTable":[[{"topic":"T","brokerName":"b","queueId":0},5],[{"topic":"T","brokerName":"b","queueId":1},7]]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Fatal("the Go client picks the gson parser only for valid JSON")
	}
}

// fakeConsumer is a client connection that heartbeats as a consumer of group and
// answers what a broker sends it.
type fakeConsumer struct {
	client *transport.Client
	resets chan *transport.Command
}

func newFakeConsumer(t *testing.T, tb *testBroker, group, clientID string) *fakeConsumer {
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
				r.Body = []byte(`{"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY","client":"` + req.ExtFields["clientId"] + `"}}`)
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
	if _, err := fc.client.Invoke(ctx, tb.b.Addr(), transport.NewRequest(transport.HeartBeat, nil, body)); err != nil {
		t.Fatal(err)
	}
	return fc
}

func TestResetOffsetOverTheWire(t *testing.T) {
	tb := startTestBroker(t, RoleLeader, nil)
	for i := range 3 {
		tb.call(t, transport.SendMessage, sendExt("R", 0, props(store.PropertyUniqKey, "U"+strconv.Itoa(i))), []byte("r"))
	}
	waitDispatched(t, tb, "R", 3)
	fc := newFakeConsumer(t, tb, "rg", "10.0.0.9@1")
	r := tb.call(t, transport.InvokeBrokerToResetOffset, map[string]string{"topic": "R", "group": "rg", "timestamp": "0", "isForce": "true"}, nil)
	if r.ResponseCode() != transport.Success {
		t.Fatalf("reset: %v %s", r.ResponseCode(), r.Remark)
	}
	var ans struct {
		OffsetTable []ResetOffsetEntry `json:"offsetTable"`
	}
	if err := json.Unmarshal(r.Body, &ans); err != nil || len(ans.OffsetTable) == 0 || ans.OffsetTable[0].Offset != 0 {
		t.Fatalf("reset answer %s (%v)", r.Body, err)
	}
	if off, ok := tb.replica.ConsumerOffset("rg", "R", 0); !ok || off != 0 {
		t.Fatalf("replicated offset of queue 0 = %d %v, want 0", off, ok)
	}
	select {
	case req := <-fc.resets:
		if req.ExtFields["group"] != "rg" || req.ExtFields["topic"] != "R" || !json.Valid(req.Body) {
			t.Fatalf("RESET_CONSUMER_CLIENT_OFFSET ext %v body %s", req.ExtFields, req.Body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the connected consumer was not told to reset")
	}
	// To the end: every queue's max offset.
	r = tb.call(t, transport.InvokeBrokerToResetOffset, map[string]string{"topic": "R", "group": "rg", "timestamp": "-1", "isForce": "true"}, nil)
	if err := json.Unmarshal(r.Body, &ans); err != nil || ans.OffsetTable[0].Offset != 3 {
		t.Fatalf("reset to the end: %s (%v)", r.Body, err)
	}
	if r := tb.call(t, transport.InvokeBrokerToResetOffset, map[string]string{"topic": "nope", "group": "rg", "timestamp": "0", "isForce": "true"}, nil); r.ResponseCode() != transport.TopicNotExist {
		t.Fatalf("unknown topic: %v %s", r.ResponseCode(), r.Remark)
	}
}

func TestConsumerRunningInfoRelayed(t *testing.T) {
	tb := startTestBroker(t, RoleLeader, nil)
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
