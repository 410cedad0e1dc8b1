package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// newPullConsumer starts a pull consumer subscribed to topic (which must exist).
func newPullConsumer(t *testing.T, c *cluster, topic string) rocketmq.PullConsumer {
	t.Helper()
	pc, err := rocketmq.NewPullConsumer(
		consumer.WithNameServer([]string{c.nsAddr}),
		consumer.WithGroupName(unique(t, "PC")),
		consumer.WithInstance(unique(t, "pci")),
	)
	if err != nil {
		t.Fatalf("new pull consumer: %v", err)
	}
	if err := pc.Subscribe(topic, selectAll); err != nil {
		t.Fatalf("pull consumer subscribe: %v", err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("start pull consumer: %v", err)
	}
	t.Cleanup(func() { _ = pc.Shutdown() })
	return pc
}

// pullRange reads queue q from offset from up to (not including) to with PullFrom,
// in batches of batch, and fails on any gap.
func pullRange(t *testing.T, pc rocketmq.PullConsumer, topic string, q int, from, to int64, batch int) []*primitive.MessageExt {
	t.Helper()
	mq := &primitive.MessageQueue{Topic: topic, BrokerName: groupName, QueueId: q}
	var out []*primitive.MessageExt
	for off := from; off < to; {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := pc.PullFrom(ctx, mq, off, batch)
		cancel()
		if err != nil {
			t.Fatalf("PullFrom queue %d offset %d: %v", q, off, err)
		}
		if res.Status != primitive.PullFound {
			t.Fatalf("PullFrom queue %d offset %d: status %v (min %d max %d next %d), want FOUND",
				q, off, res.Status, res.MinOffset, res.MaxOffset, res.NextBeginOffset)
		}
		msgs := res.GetMessageExts()
		if len(msgs) == 0 || len(msgs) > batch {
			t.Fatalf("PullFrom queue %d offset %d batch %d: %d messages", q, off, batch, len(msgs))
		}
		for i, m := range msgs {
			if m.QueueOffset != off+int64(i) {
				t.Fatalf("PullFrom queue %d offset %d: message %d has queue offset %d", q, off, i, m.QueueOffset)
			}
		}
		out = append(out, msgs...)
		if res.NextBeginOffset != off+int64(len(msgs)) {
			t.Fatalf("PullFrom queue %d offset %d: nextBeginOffset %d after %d messages", q, off, res.NextBeginOffset, len(msgs))
		}
		off = res.NextBeginOffset
	}
	return out
}

// TestOrderedSendsPulledInOrder sends interleaved sequences for several sharding keys
// with the hash queue selector, then reads every queue by offset with a pull consumer:
// each key lives in one queue and its sequence comes back in send order, gap-free.
func TestOrderedSendsPulledInOrder(t *testing.T) {
	c := shared(t)
	topic := unique(t, "T")
	p := newProducer(t, c, producer.WithQueueSelector(producer.NewHashQueueSelector()))
	const keys, perKey = 6, 15

	queueOf := map[string]int{}      // sharding key → queue acked
	lastOffset := map[string]int64{} // sharding key → last acked offset
	sentPerQueue := map[int]int{}    // queue → messages acked
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for seq := range perKey {
		for k := range keys {
			key := fmt.Sprintf("order-%d", k)
			m := primitive.NewMessage(topic, []byte(fmt.Sprintf("%s/%d", key, seq)))
			m.WithShardingKey(key)
			res, err := p.SendSync(ctx, m)
			if err != nil {
				t.Fatalf("send %s/%d: %v", key, seq, err)
			}
			q := res.MessageQueue.QueueId
			if prev, ok := queueOf[key]; ok && prev != q {
				t.Fatalf("key %s went to queue %d, earlier to %d", key, q, prev)
			}
			if prev, ok := lastOffset[key]; ok && res.QueueOffset <= prev {
				t.Fatalf("key %s seq %d acked at offset %d, not after %d", key, seq, res.QueueOffset, prev)
			}
			queueOf[key], lastOffset[key] = q, res.QueueOffset
			sentPerQueue[q]++
		}
	}

	pc := newPullConsumer(t, c, topic)
	mqs, err := pc.GetTopicRouteInfo(topic)
	if err != nil || len(mqs) == 0 {
		t.Fatalf("route of %s: %v (%d queues)", topic, err, len(mqs))
	}
	nextSeq := map[string]int{}
	for q, n := range sentPerQueue {
		for _, m := range pullRange(t, pc, topic, q, 0, int64(n), 7) {
			key, seqText, _ := strings.Cut(string(m.Body), "/")
			seq, _ := strconv.Atoi(seqText)
			if queueOf[key] != q {
				t.Errorf("queue %d holds %s, which was acked in queue %d", q, m.Body, queueOf[key])
			}
			if m.GetShardingKey() != key {
				t.Errorf("%s: sharding key property %q", m.Body, m.GetShardingKey())
			}
			if seq != nextSeq[key] {
				t.Errorf("queue %d offset %d: %s, want %s/%d next", q, m.QueueOffset, m.Body, key, nextSeq[key])
			}
			nextSeq[key] = seq + 1
		}
	}
	for k := range keys {
		key := fmt.Sprintf("order-%d", k)
		if nextSeq[key] != perKey {
			t.Errorf("key %s: read %d of %d messages", key, nextSeq[key], perKey)
		}
	}
}

// fixedQueue sends every message to one queue, so offsets are predictable.
type fixedQueue int

func (f fixedQueue) Select(_ *primitive.Message, mqs []*primitive.MessageQueue, _ string) *primitive.MessageQueue {
	for _, mq := range mqs {
		if mq.QueueId == int(f) {
			return mq
		}
	}
	return mqs[0]
}

// TestOffsetForTimestamp: SEARCH_OFFSET_BY_TIMESTAMP returns the first offset stored
// at or after the timestamp; before everything gives the min offset, after everything
// the max offset. Pulling from the answer yields exactly the later batch.
func TestOffsetForTimestamp(t *testing.T) {
	requireLong(t)
	c := shared(t)
	topic := unique(t, "T")
	const q = 1
	p := newProducer(t, c, producer.WithQueueSelector(fixedQueue(q)))

	before := time.Now().Add(-time.Minute).UnixMilli()
	sendBodies(t, p, topic, bodies("old", 5))
	time.Sleep(50 * time.Millisecond)
	split := time.Now().UnixMilli()
	time.Sleep(50 * time.Millisecond)
	res := sendBodies(t, p, topic, bodies("new", 5))
	time.Sleep(50 * time.Millisecond)
	after := time.Now().Add(time.Minute).UnixMilli()
	if res[0].MessageQueue.QueueId != q {
		t.Fatalf("fixed selector sent to queue %d", res[0].MessageQueue.QueueId)
	}
	firstNew := res[0].QueueOffset

	pc := newPullConsumer(t, c, topic)
	mq := &primitive.MessageQueue{Topic: topic, BrokerName: groupName, QueueId: q}
	for _, tc := range []struct {
		name string
		ts   int64
		want int64
	}{
		{"before all", before, 0},
		{"between batches", split, firstNew},
		{"after all", after, firstNew + 5},
	} {
		got, err := pc.OffsetForTimestamp(mq, tc.ts)
		if err != nil {
			t.Fatalf("OffsetForTimestamp %s: %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("OffsetForTimestamp %s (%d): %d, want %d", tc.name, tc.ts, got, tc.want)
		}
	}
	off, _ := pc.OffsetForTimestamp(mq, split)
	for i, m := range pullRange(t, pc, topic, q, off, firstNew+5, 10) {
		if want := fmt.Sprintf("new-%04d", i); string(m.Body) != want {
			t.Errorf("pulled from timestamp offset: message %d is %s, want %s", i, m.Body, want)
		}
		if m.StoreTimestamp < split {
			t.Errorf("%s: store timestamp %d before the searched %d", m.Body, m.StoreTimestamp, split)
		}
	}
}
