package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// messageQueue is MessageQueue.java as the MessageQueue-keyed tables spell
// their keys.
type messageQueue struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
}

// decodeMQTable decodes a {"offsetTable":{<MessageQueue>: V}} body the way
// fastjson does: each key is the queue, written bare as Apache writes it
// ({{"brokerName":…}:…}) or as a string holding that object.
func decodeMQTable[V any](t *testing.T, body []byte) map[messageQueue]V {
	t.Helper()
	var raw struct {
		OffsetTable map[string]V `json:"offsetTable"`
	}
	if err := json.Unmarshal(fastjsonToJSON(t, body), &raw); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	out := make(map[messageQueue]V, len(raw.OffsetTable))
	for k, v := range raw.OffsetTable {
		var mq messageQueue
		if err := json.Unmarshal([]byte(k), &mq); err != nil || mq.Topic == "" || mq.BrokerName == "" {
			t.Fatalf("offsetTable key %q is not a MessageQueue (%v)", k, err)
		}
		out[mq] = v
	}
	return out
}

// fastjsonToJSON reads fastjson's text, where an object key may be a bare
// object, as JSON (transport.QuoteObjectKeys); anything else fails the test.
func fastjsonToJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	out, err := transport.QuoteObjectKeys(b)
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return out
}

// assertBareQueueKeys: the table's keys are bare MessageQueue objects, the
// only form the Java 5.5 tools (fastjson2) decode into Map<MessageQueue,…>.
func assertBareQueueKeys(t *testing.T, body []byte) {
	t.Helper()
	if !bytes.HasPrefix(body, []byte(`{"offsetTable":{{"brokerName":"`)) {
		t.Errorf("offsetTable keys are not bare MessageQueue objects: %.120s", body)
	}
}

func sendN(t *testing.T, rb *raftBroker, topic string, queueID, n int) {
	t.Helper()
	for i := range n {
		ext := sendExt(topic, queueID, props(store.PropertyUniqKey, topic+strconv.Itoa(queueID)+"-"+strconv.Itoa(i)))
		mustOK(t, "send", rb.call(t, transport.SendMessage, ext, []byte("m")))
	}
	if err := rb.b.store.WaitDispatched(context.Background(), rb.b.store.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
}

// TestTopicStatsInfoOverTheWire: GET_TOPIC_STATS_INFO (202, mqadmin
// topicStatus) lists every queue with min and max offset and the store time of
// its newest message, keyed by MessageQueue.
func TestTopicStatsInfoOverTheWire(t *testing.T) {
	rb := startRaftBroker(t)
	before := time.Now().UnixMilli()
	sendN(t, rb, "Stats", 0, 3)
	sendN(t, rb, "Stats", 2, 1)
	after := time.Now().UnixMilli()
	type topicOffset struct {
		MinOffset, MaxOffset, LastUpdateTimestamp int64
	}
	r := mustOK(t, "topic stats", rb.call(t, transport.GetTopicStatsInfo, map[string]string{"topic": "Stats"}, nil))
	assertBareQueueKeys(t, r.Body)
	table := decodeMQTable[topicOffset](t, r.Body)
	if len(table) != 4 { // auto-created with defaultTopicQueueNums 4
		t.Fatalf("%d queues in %s, want 4", len(table), r.Body)
	}
	for q, wantMax := range []int64{3, 0, 1, 0} {
		o, ok := table[messageQueue{"Stats", "broker-a", int32(q)}]
		if !ok || o.MinOffset != 0 || o.MaxOffset != wantMax {
			t.Errorf("queue %d: %+v (present %v), want min 0 max %d", q, o, ok, wantMax)
		}
		if wantMax > 0 && (o.LastUpdateTimestamp < before-1000 || o.LastUpdateTimestamp > after+1000) {
			t.Errorf("queue %d: lastUpdateTimestamp %d, want the newest message's store time in [%d, %d]", q, o.LastUpdateTimestamp, before, after)
		}
		if wantMax == 0 && o.LastUpdateTimestamp != 0 {
			t.Errorf("empty queue %d has lastUpdateTimestamp %d", q, o.LastUpdateTimestamp)
		}
	}
	if r := rb.call(t, transport.GetTopicStatsInfo, map[string]string{"topic": "Missing"}, nil); r.ResponseCode() != transport.TopicNotExist {
		t.Errorf("missing topic: %s %q, want TOPIC_NOT_EXIST", r.ResponseCode(), r.Remark)
	}
	if r := rb.call(t, transport.GetTopicStatsInfo, nil, nil); r.ResponseCode() != transport.InvalidParameter {
		t.Errorf("no topic: %s %q, want INVALID_PARAMETER", r.ResponseCode(), r.Remark)
	}
}

// TestConsumeStatsOverTheWire: GET_CONSUME_STATS (208, mqadmin consumerProgress)
// reports per read queue the broker's max offset, the group's committed offset
// (pending on the leader or replicated) and the store time of the last message
// it consumed; topic and topicList narrow it, and the topics the connected
// members do not subscribe to are left out.
func TestConsumeStatsOverTheWire(t *testing.T) {
	rb := startRaftBroker(t)
	sendN(t, rb, "CS", 0, 4)
	sendN(t, rb, "Other", 1, 2)
	commit := func(topic string, q, off int) {
		ext := map[string]string{"consumerGroup": "csGroup", "topic": topic, "queueId": strconv.Itoa(q), "commitOffset": strconv.Itoa(off)}
		mustOK(t, "commit", rb.call(t, transport.UpdateConsumerOffset, ext, nil))
	}
	commit("CS", 0, 3)
	commit("Other", 1, 2)
	type offsetWrapper struct {
		BrokerOffset, ConsumerOffset, PullOffset, LastTimestamp int64
	}
	stats := func(ext map[string]string) map[messageQueue]offsetWrapper {
		t.Helper()
		r := mustOK(t, "consume stats", rb.call(t, transport.GetConsumeStats, ext, nil))
		if !bytes.HasPrefix(r.Body, []byte(`{"offsetTable":{}`)) {
			assertBareQueueKeys(t, r.Body)
		}
		var tps struct {
			ConsumeTps *float64 `json:"consumeTps"`
		}
		if err := json.Unmarshal(fastjsonToJSON(t, r.Body), &tps); err != nil || tps.ConsumeTps == nil {
			t.Fatalf("no consumeTps in %s", r.Body)
		}
		return decodeMQTable[offsetWrapper](t, r.Body)
	}
	all := stats(map[string]string{"consumerGroup": "csGroup"})
	if len(all) != 4+4 {
		t.Fatalf("%d queues, want the 8 of CS and Other: %v", len(all), all)
	}
	cs0 := all[messageQueue{"CS", "broker-a", 0}]
	if cs0.BrokerOffset != 4 || cs0.ConsumerOffset != 3 || cs0.PullOffset != 3 || cs0.LastTimestamp <= 0 {
		t.Errorf("CS queue 0: %+v, want broker 4, consumer 3, the time of message 2", cs0)
	}
	if cs1 := all[messageQueue{"CS", "broker-a", 1}]; cs1 != (offsetWrapper{}) {
		t.Errorf("CS queue 1 (nothing committed): %+v, want zeros", cs1)
	}
	if o1 := all[messageQueue{"Other", "broker-a", 1}]; o1.BrokerOffset != 2 || o1.ConsumerOffset != 2 {
		t.Errorf("Other queue 1: %+v", o1)
	}
	if only := stats(map[string]string{"consumerGroup": "csGroup", "topic": "Other"}); len(only) != 4 {
		t.Errorf("topic=Other gave %d queues, want 4", len(only))
	}
	if list := stats(map[string]string{"consumerGroup": "csGroup", "topicList": "CS;Other;Missing"}); len(list) != 8 {
		t.Errorf("topicList gave %d queues, want 8 (Missing skipped)", len(list))
	}
	// A connected member subscribing to CS only: Other is left out.
	mustOK(t, "heartbeat", rb.call(t, transport.HeartBeat, nil, consumerHeartbeat(t, "10.0.0.8@1", "csGroup", "CLUSTERING", "CS")))
	if sub := stats(map[string]string{"consumerGroup": "csGroup"}); len(sub) != 4 {
		t.Errorf("with a CS-only subscription: %d queues, want 4", len(sub))
	}
	if none := stats(map[string]string{"consumerGroup": "nobody"}); len(none) != 0 {
		t.Errorf("a group with no offsets: %v", none)
	}
	if r := rb.call(t, transport.GetConsumeStats, nil, nil); r.ResponseCode() != transport.InvalidParameter {
		t.Errorf("no group: %s %q", r.ResponseCode(), r.Remark)
	}
}

// TestSubscriptionGroupUpdateAndDeleteOverTheWire: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
// (200) replaces a group's config through raft with what mqadmin updateSubGroup
// sends, the next heartbeat's %RETRY% topic takes its retryQueueNums, and
// DELETE_SUBSCRIPTIONGROUP (207) removes it, with cleanOffset its offsets too.
func TestSubscriptionGroupUpdateAndDeleteOverTheWire(t *testing.T) {
	rb := startRaftBroker(t)
	// mqadmin updateSubGroup's body (fastjson, 5.x fields this side ignores included).
	body := []byte(`{"brokerId":0,"consumeBroadcastEnable":false,"consumeEnable":true,"consumeFromMinEnable":false,` +
		`"consumeMessageOrderly":false,"consumeTimeoutMinute":15,"groupName":"subG","groupRetryPolicy":{"type":"CUSTOMIZED"},` +
		`"groupSysFlag":0,"notifyConsumerIdsChangedEnable":true,"retryMaxTimes":5,"retryQueueNums":3,` +
		`"subscriptionDataSet":null,"whichBrokerWhenConsumeSlowly":1,"attributes":{}}`)
	mustOK(t, "update group", rb.call(t, transport.UpdateAndCreateSubscriptionGroup, nil, body))
	var g struct {
		RetryQueueNums, RetryMaxTimes int32
		ConsumeBroadcastEnable        bool
	}
	found := false
	for _, sg := range rb.rep.SubscriptionGroups() {
		if sg.GroupName == "subG" {
			found = true
			g.RetryQueueNums, g.RetryMaxTimes, g.ConsumeBroadcastEnable = sg.RetryQueueNums, sg.RetryMaxTimes, sg.ConsumeBroadcastEnable
		}
	}
	if !found || g.RetryQueueNums != 3 || g.RetryMaxTimes != 5 || g.ConsumeBroadcastEnable {
		t.Fatalf("replicated group: found %v %+v", found, g)
	}
	mustOK(t, "heartbeat", rb.call(t, transport.HeartBeat, nil, consumerHeartbeat(t, "10.0.0.9@1", "subG", "CLUSTERING", "T")))
	if rt, ok := rb.rep.Topic("%RETRY%subG"); !ok || rt.ReadQueueNums != 3 || rt.WriteQueueNums != 3 {
		t.Errorf("%%RETRY%%subG = %+v (%v), want the group's 3 retry queues", rt, ok)
	}
	for _, bad := range [][]byte{[]byte(`{"groupName":"bad/name"}`), []byte(`{"groupName":""}`), []byte(`{"groupName":`)} {
		if r := rb.call(t, transport.UpdateAndCreateSubscriptionGroup, nil, bad); r.ResponseCode() != transport.InvalidParameter {
			t.Errorf("body %s: %s %q, want INVALID_PARAMETER", bad, r.ResponseCode(), r.Remark)
		}
	}

	// Offsets, replicated and pending, then delete without and with cleanOffset.
	commit := func(off int) {
		mustOK(t, "commit", rb.call(t, transport.UpdateConsumerOffset,
			map[string]string{"consumerGroup": "subG", "topic": "T", "queueId": "0", "commitOffset": strconv.Itoa(off)}, nil))
	}
	query := func() *transport.Command {
		return rb.call(t, transport.QueryConsumerOffset,
			map[string]string{"consumerGroup": "subG", "topic": "T", "queueId": "0", "setZeroIfNotFound": "false"}, nil)
	}
	commit(5)
	deadline := time.Now().Add(10 * time.Second)
	for off, ok := rb.rep.ConsumerOffset("subG", "T", 0); !ok || off != 5; off, ok = rb.rep.ConsumerOffset("subG", "T", 0) {
		if time.Now().After(deadline) {
			t.Fatal("the committed offset was never replicated")
		}
		time.Sleep(50 * time.Millisecond)
	}
	commit(6) // pending on the leader
	mustOK(t, "delete group", rb.call(t, transport.DeleteSubscriptionGroup, map[string]string{"groupName": "subG"}, nil))
	for _, sg := range rb.rep.SubscriptionGroups() {
		if sg.GroupName == "subG" {
			t.Fatal("group still replicated after DELETE_SUBSCRIPTIONGROUP")
		}
	}
	if q := query(); q.ResponseCode() != transport.Success || q.Field("offset") != "6" {
		t.Fatalf("offset without cleanOffset: %s %v, want 6 kept", q.ResponseCode(), q.Fields())
	}
	mustOK(t, "recreate", rb.call(t, transport.UpdateAndCreateSubscriptionGroup, nil, []byte(`{"groupName":"subG","retryQueueNums":1}`)))
	mustOK(t, "delete group with offsets", rb.call(t, transport.DeleteSubscriptionGroup,
		map[string]string{"groupName": "subG", "cleanOffset": "true"}, nil))
	if q := query(); q.ResponseCode() != transport.QueryNotFound {
		t.Fatalf("offset after cleanOffset: %s %v, want QUERY_NOT_FOUND", q.ResponseCode(), q.Fields())
	}
	// mqadmin 4.9 names the flag removeOffset.
	commit(7)
	mustOK(t, "recreate", rb.call(t, transport.UpdateAndCreateSubscriptionGroup, nil, []byte(`{"groupName":"subG"}`)))
	mustOK(t, "delete group, 4.9 spelling", rb.call(t, transport.DeleteSubscriptionGroup,
		map[string]string{"groupName": "subG", "removeOffset": "true"}, nil))
	if q := query(); q.ResponseCode() != transport.QueryNotFound {
		t.Fatalf("offset after removeOffset: %s %v, want QUERY_NOT_FOUND", q.ResponseCode(), q.Fields())
	}
	time.Sleep(1500 * time.Millisecond) // past the next offset flush: nothing pending comes back
	if off, ok := rb.rep.ConsumerOffset("subG", "T", 0); ok {
		t.Fatalf("replicated offset %d after cleanOffset", off)
	}
	mustOK(t, "delete a missing group", rb.call(t, transport.DeleteSubscriptionGroup, map[string]string{"groupName": "neverThere"}, nil))
	if r := rb.call(t, transport.DeleteSubscriptionGroup, nil, nil); r.ResponseCode() != transport.InvalidParameter {
		t.Errorf("no groupName: %s %q", r.ResponseCode(), r.Remark)
	}
}

// TestConnectionListsOverTheWire: GET_CONSUMER_CONNECTION_LIST (203) and
// GET_PRODUCER_CONNECTION_LIST (204) report what the heartbeats said, with the
// client's address and the language and version of its request headers.
func TestConnectionListsOverTheWire(t *testing.T) {
	rb := startRaftBroker(t)
	java := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	defer java.Close()
	hb := transport.NewRequest(transport.HeartBeat, nil, consumerHeartbeat(t, "10.0.0.5@4242", "connG", "CLUSTERING", "T", "%RETRY%connG"))
	hb.Language, hb.Version = "JAVA", 479
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if r, err := java.Invoke(ctx, rb.b.Addr(), hb); err != nil || r.ResponseCode() != transport.Success {
		t.Fatalf("heartbeat: %v %v", r, err)
	}
	r := mustOK(t, "consumer connections", rb.call(t, transport.GetConsumerConnectionList, map[string]string{"consumerGroup": "connG"}, nil))
	var cc struct {
		ConnectionSet []struct {
			ClientID, ClientAddr, Language string
			Version                        int
		}
		SubscriptionTable map[string]struct {
			Topic, SubString, ExpressionType string
			TagsSet                          []string
			CodeSet                          []int32
		}
		ConsumeType, MessageModel, ConsumeFromWhere string
	}
	if err := json.Unmarshal(r.Body, &cc); err != nil {
		t.Fatalf("%s: %v", r.Body, err)
	}
	if len(cc.ConnectionSet) != 1 || cc.ConnectionSet[0].ClientID != "10.0.0.5@4242" || cc.ConnectionSet[0].Language != "JAVA" ||
		cc.ConnectionSet[0].Version != 479 || cc.ConnectionSet[0].ClientAddr == "" {
		t.Errorf("connectionSet %+v (body %s)", cc.ConnectionSet, r.Body)
	}
	if s, ok := cc.SubscriptionTable["T"]; !ok || s.SubString != "*" || s.ExpressionType != "TAG" || s.TagsSet == nil || s.CodeSet == nil ||
		len(cc.SubscriptionTable) != 2 {
		t.Errorf("subscriptionTable %+v", cc.SubscriptionTable)
	}
	if cc.ConsumeType != "CONSUME_PASSIVELY" || cc.MessageModel != "CLUSTERING" || cc.ConsumeFromWhere != "CONSUME_FROM_LAST_OFFSET" {
		t.Errorf("group info %s %s %s", cc.ConsumeType, cc.MessageModel, cc.ConsumeFromWhere)
	}
	p := mustOK(t, "producer connections", rb.call(t, transport.GetProducerConnectionList, map[string]string{"producerGroup": "CLIENT_INNER_PRODUCER"}, nil))
	var pc struct {
		ConnectionSet []struct {
			ClientID, Language string
			Version            int
		}
	}
	if err := json.Unmarshal(p.Body, &pc); err != nil || len(pc.ConnectionSet) != 1 || pc.ConnectionSet[0].ClientID != "10.0.0.5@4242" ||
		pc.ConnectionSet[0].Language != "JAVA" || pc.ConnectionSet[0].Version != 479 {
		t.Errorf("producer connections %s (%v)", p.Body, err)
	}
	if r := rb.call(t, transport.GetConsumerConnectionList, map[string]string{"consumerGroup": "offline"}, nil); r.ResponseCode() != transport.ConsumerNotOnline {
		t.Errorf("offline group: %s %q, want CONSUMER_NOT_ONLINE", r.ResponseCode(), r.Remark)
	}
	if r := rb.call(t, transport.GetProducerConnectionList, map[string]string{"producerGroup": "nobody"}, nil); r.ResponseCode() != transport.SystemError {
		t.Errorf("unknown producer group: %s %q, want SYSTEM_ERROR", r.ResponseCode(), r.Remark)
	}
	// The member leaves: the group is not online any more.
	java.Close()
	deadline := time.Now().Add(5 * time.Second)
	for rb.call(t, transport.GetConsumerConnectionList, map[string]string{"consumerGroup": "connG"}, nil).ResponseCode() != transport.ConsumerNotOnline {
		if time.Now().After(deadline) {
			t.Fatal("the group stayed online after its only connection closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
