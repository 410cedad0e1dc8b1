package broker

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/rocketraft/rocketraft/transport"
)

// TestHeartbeatCreatesRetryTopicInRoutesAndLists: a consumer's first heartbeat
// with a clustering subscription makes the leader create %RETRY%<group> through
// raft with Apache's defaults (1 read and 1 write queue, perm RW) and its
// subscription group, and the topic shows in the nameserver's route and topic
// list, where mqadmin consumerProgress and consumerConnection look for it.
func TestHeartbeatCreatesRetryTopicInRoutesAndLists(t *testing.T) {
	rb := startRaftBroker(t)
	hb := mustOK(t, "heartbeat", rb.call(t, transport.HeartBeat, nil, consumerHeartbeat(t, "10.0.0.7@1", "orders", "CLUSTERING", "Orders")))
	// Java gates SQL92 pulls on the heartbeat answer's version (≥ V4_1_0, 232).
	if hb.Version < 232 {
		t.Errorf("heartbeat answered version %d; Java SQL92 consumers need ≥ 232", hb.Version)
	}
	if hb.Field("IS_SUPPORT_HEART_BEAT_V2") == "true" {
		t.Error("heartbeat v2 announced; the registry does not keep subscriptions for withoutSub heartbeats")
	}
	cfg, ok := rb.rep.Topic("%RETRY%orders")
	if !ok {
		t.Fatalf("the heartbeat did not create %s", "%RETRY%orders")
	}
	if cfg.ReadQueueNums != 1 || cfg.WriteQueueNums != 1 || cfg.Perm != 6 {
		t.Errorf("%%RETRY%%orders = %+v, want 1/1 queues, perm 6", cfg)
	}
	rd := rb.waitRoute(t, "%RETRY%orders")
	if len(rd.QueueDatas) != 1 || rd.QueueDatas[0].ReadQueueNums != 1 || rd.QueueDatas[0].WriteQueueNums != 1 || rd.QueueDatas[0].Perm != 6 {
		t.Errorf("route of %%RETRY%%orders: %+v", rd.QueueDatas)
	}
	list := mustOK(t, "topic list", rb.callAt(t, rb.ns.Addr(), transport.GetAllTopicListFromNameServer, nil, nil))
	var tl struct {
		TopicList []string `json:"topicList"`
	}
	if err := json.Unmarshal(list.Body, &tl); err != nil || !slices.Contains(tl.TopicList, "%RETRY%orders") {
		t.Errorf("topic list %s (%v) lacks %%RETRY%%orders", list.Body, err)
	}
	// Apache does the same for a broadcasting group (mqadmin finds every group
	// through its %RETRY% topic).
	mustOK(t, "broadcast heartbeat", rb.call(t, transport.HeartBeat, nil, consumerHeartbeat(t, "10.0.0.7@1", "fanout", "BROADCASTING", "Orders")))
	if _, ok := rb.rep.Topic("%RETRY%fanout"); !ok {
		t.Errorf("no %s for a broadcasting group", "%RETRY%fanout")
	}
	groups := mustOK(t, "subscription groups", rb.call(t, transport.GetAllSubscriptionGroupConfig, nil, nil))
	var sg struct {
		SubscriptionGroupTable map[string]json.RawMessage `json:"subscriptionGroupTable"`
	}
	if err := json.Unmarshal(groups.Body, &sg); err != nil || sg.SubscriptionGroupTable["orders"] == nil {
		t.Errorf("subscription groups %s (%v) lack orders", groups.Body, err)
	}
}
