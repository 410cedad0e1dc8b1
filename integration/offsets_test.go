package integration

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"

	"github.com/rocketraft/rocketraft/transport"
)

// TestConsumeFromWhere checks where a consumer group starts, as RocketMQ does it.
//
// A new group asks QUERY_CONSUMER_OFFSET; with no stored offset and the queue still
// starting at offset 0, the broker answers 0 (Java's offset-0 rule,
// ConsumerManageProcessor.queryConsumerOffset), and the client uses that answer before
// consulting ConsumeFromWhere at all. So on a young topic LAST (the default), FIRST
// and TIMESTAMP all start at 0 and see messages produced before the consumer existed.
// A group with a committed offset resumes there whatever its ConsumeFromWhere says.
func TestConsumeFromWhere(t *testing.T) {
	c := shared(t)
	topic := unique(t, "T")
	p := newProducer(t, c)
	early := bodies("early", 12)
	sendBodies(t, p, topic, early)

	cases := []struct {
		name string
		opts []consumer.Option
	}{
		{"default-last", nil},
		{"first", []consumer.Option{consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset)}},
		// A timestamp after every early message: it only matters when the broker
		// answers "no offset" (22), which the offset-0 rule prevents here.
		{"timestamp", []consumer.Option{
			consumer.WithConsumeFromWhere(consumer.ConsumeFromTimestamp),
			consumer.WithConsumeTimestamp(time.Now().Add(time.Hour).UTC().Format("20060102150405")),
		}},
	}
	cols := make([]*collector, len(cases))
	for i, tc := range cases {
		cols[i] = newCollector()
		newPushConsumer(t, c, unique(t, "CG"+tc.name), topic, selectAll, cols[i], tc.opts...)
	}
	for i, tc := range cases {
		cols[i].expectExactly(t, tc.name, early, deliverTimeout, 0)
	}
}

// TestGroupResumesFromCommittedOffset: a group that consumed and shut down (which
// persists its offsets) resumes after them on restart, even with
// CONSUME_FROM_FIRST_OFFSET, and sees what was produced while it was away.
func TestGroupResumesFromCommittedOffset(t *testing.T) {
	c := shared(t)
	topic := unique(t, "T")
	group := unique(t, "CG")
	p := newProducer(t, c)
	first := bodies("first", 10)
	sendBodies(t, p, topic, first)

	col1 := newCollector()
	pc := newPushConsumer(t, c, group, topic, selectAll, col1)
	col1.expectExactly(t, "first run", first, deliverTimeout, 500*time.Millisecond)
	if err := pc.Shutdown(); err != nil {
		t.Fatalf("shutdown first consumer: %v", err)
	}
	// Shutdown persists the offsets with oneway requests and returns before the
	// broker has them; under load a consumer started at once can query first.
	// Resuming is about what the broker holds, so wait until it holds them.
	msgs1, _ := col1.snapshot()
	maxFirst := map[int]int64{}
	for _, m := range msgs1 {
		maxFirst[m.Queue.QueueId] = max(maxFirst[m.Queue.QueueId], m.QueueOffset)
	}
	waitCommitted(t, c, group, topic, maxFirst)

	second := bodies("second", 10)
	sendBodies(t, p, topic, second)

	col2 := newCollector()
	newPushConsumer(t, c, group, topic, selectAll, col2,
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	col2.expectExactly(t, "second run", second, deliverTimeout, settle)

	// Within each queue the resumed run starts exactly where the first run ended.
	msgs2, _ := col2.snapshot()
	perQueue := map[int][]int64{}
	for _, m := range msgs2 {
		perQueue[m.Queue.QueueId] = append(perQueue[m.Queue.QueueId], m.QueueOffset)
	}
	for q, offs := range perQueue {
		slices.Sort(offs)
		if last, ok := maxFirst[q]; ok && offs[0] != last+1 {
			t.Errorf("queue %d: resumed at offset %d, first run ended at %d", q, offs[0], last)
		}
	}
}

// waitCommitted waits until the group's leader answers QUERY_CONSUMER_OFFSET
// with last+1 for every queue of last.
func waitCommitted(t *testing.T, c *cluster, group, topic string, last map[int]int64) {
	t.Helper()
	tc := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	defer tc.Close()
	deadline := time.Now().Add(10 * time.Second)
	var firstLeader string
	if addrs, err := c.brokerAddrs(); err == nil {
		firstLeader = addrs[0]
	}
	for q, off := range last {
		want := strconv.FormatInt(off+1, 10)
		for {
			var got string
			if addrs, err := c.brokerAddrs(); err == nil && addrs[0] != "" {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				resp, err := tc.Invoke(ctx, addrs[0], transport.NewRequest(transport.QueryConsumerOffset,
					map[string]string{"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(q)}, nil))
				cancel()
				if err == nil && resp.ResponseCode() == transport.Success {
					got = resp.Field("offset")
				}
			}
			if got == want {
				break
			}
			if time.Now().After(deadline) {
				// A leader that loses its leadership drops the offsets it had not
				// replicated yet (at-least-once); say so when that is what happened.
				var now string
				if addrs, err := c.brokerAddrs(); err == nil {
					now = addrs[0]
				}
				t.Fatalf("queue %d: broker holds offset %q for %s, want %s after the first run (leader %s at the first query, %s now)",
					q, got, group, want, firstLeader, now)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
