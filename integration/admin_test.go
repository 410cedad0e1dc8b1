package integration

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

func newAdmin(t *testing.T, c *cluster) admin.Admin {
	t.Helper()
	a, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{c.nsAddr})))
	if err != nil {
		t.Fatalf("new admin: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// topicListed polls FetchAllTopicList until the topic's presence equals want.
// Registration with the nameserver is asynchronous after a topic change.
func topicListed(t *testing.T, a admin.Admin, topic string, want bool, timeout time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		list, err := a.FetchAllTopicList(ctx)
		cancel()
		if err == nil && slices.Contains(list.TopicList, topic) == want {
			return true
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Logf("FetchAllTopicList: %v", err)
			}
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAdminTopicLifecycle creates a topic through a follower (which forwards to the
// leader), checks the topic list and the route's queue numbers, uses every queue,
// then deletes it and checks it is gone from the list and the route.
func TestAdminTopicLifecycle(t *testing.T) {
	c := shared(t)
	a := newAdmin(t, c)
	topic := unique(t, "AT")
	leader, err := c.waitLeader(10*time.Second, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	follower := c.clientAddrs[(leader+1)%groupSize]

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The Go admin ignores the response code, so success is judged by the effects.
	if err := a.CreateTopic(ctx, admin.WithTopicCreate(topic), admin.WithBrokerAddrCreate(follower),
		admin.WithReadQueueNums(6), admin.WithWriteQueueNums(6)); err != nil {
		t.Fatalf("CreateTopic via follower %s: %v", follower, err)
	}
	if !topicListed(t, a, topic, true, 10*time.Second) {
		t.Fatalf("topic %s not in FetchAllTopicList after CreateTopic via follower", topic)
	}
	route, err := c.nsClient.GetRoute(ctx, c.nsAddr, topic)
	if err != nil {
		t.Fatalf("route of %s: %v", topic, err)
	}
	if len(route.QueueDatas) != 1 || route.QueueDatas[0].BrokerName != groupName ||
		route.QueueDatas[0].ReadQueueNums != 6 || route.QueueDatas[0].WriteQueueNums != 6 {
		t.Fatalf("route of %s: queueDatas %+v, want one %s entry with 6/6 queues", topic, route.QueueDatas, groupName)
	}

	// The producer spreads over all six queues round robin.
	p := newProducer(t, c)
	used := map[int]int{}
	for _, res := range sendBodies(t, p, topic, bodies("q", 12)) {
		used[res.MessageQueue.QueueId]++
	}
	for q := range 6 {
		if used[q] != 2 {
			t.Errorf("queue %d got %d of 12 round-robin sends, want 2 (all: %v)", q, used[q], used)
		}
	}

	if err := a.DeleteTopic(ctx, admin.WithTopicDelete(topic), admin.WithBrokerAddrDelete(c.clientAddrs[leader]),
		admin.WithNameSrvAddr([]string{c.nsAddr})); err != nil {
		t.Fatalf("DeleteTopic: %v", err)
	}
	if !topicListed(t, a, topic, false, 10*time.Second) {
		t.Fatalf("topic %s still in FetchAllTopicList after DeleteTopic", topic)
	}
	// A later registration must not bring it back: the broker forgot it too.
	time.Sleep(500 * time.Millisecond)
	if r, err := c.nsClient.GetRoute(ctx, c.nsAddr, topic); err == nil && len(r.QueueDatas) > 0 {
		t.Errorf("route of deleted topic %s still has queues: %+v", topic, r.QueueDatas)
	}
}

// TestAdminSubscriptionGroups: a consumer group announced by heartbeat is listed by
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG on the leader.
func TestAdminSubscriptionGroups(t *testing.T) {
	c := shared(t)
	a := newAdmin(t, c)
	topic := unique(t, "T")
	group := unique(t, "CG")
	p := newProducer(t, c)
	sendBodies(t, p, topic, []string{"seed"})
	col := newCollector()
	newPushConsumer(t, c, group, topic, selectAll, col)
	col.expectExactly(t, "consumer", []string{"seed"}, deliverTimeout, 0)

	leader, err := c.waitLeader(10*time.Second, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := a.GetAllSubscriptionGroup(ctx, c.clientAddrs[leader], 3*time.Second)
	if err != nil {
		t.Fatalf("GetAllSubscriptionGroup: %v", err)
	}
	if _, ok := w.SubscriptionGroupTable[group]; !ok {
		t.Errorf("group %s not in subscription groups (%d listed)", group, len(w.SubscriptionGroupTable))
	}
}
