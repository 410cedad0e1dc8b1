package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// deliverTimeout bounds how long a consumer may take to receive what was sent. The
// first rebalance of a Go push consumer happens at Start; pulls are long-polled.
const deliverTimeout = 30 * time.Second

// settle is how long a test keeps listening after the expected set arrived, to catch
// duplicates and messages that should have been filtered.
const settle = 1500 * time.Millisecond

// TestSendKindsConsumedExactlyOnce sends with SendSync, SendAsync, SendOneWay and a
// batch SendSync to a fresh (auto-created) topic; one clustering consumer must get
// every message exactly once, with its keys and tag intact.
func TestSendKindsConsumedExactlyOnce(t *testing.T) {
	c := shared(t)
	topic := unique(t, "T")
	p := newProducer(t, c)

	msg := func(body string) *primitive.Message {
		m := primitive.NewMessage(topic, []byte(body))
		m.WithKeys([]string{"key-" + body, "alt-" + body})
		m.WithTag("TagK")
		return m
	}
	var want []string
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// SendSync: the first one auto-creates the topic from TBW102.
	for _, b := range bodies("sync", 5) {
		res, err := p.SendSync(ctx, msg(b))
		if err != nil {
			t.Fatalf("SendSync %s: %v", b, err)
		}
		if res.Status != primitive.SendOK || res.MessageQueue == nil || res.MessageQueue.BrokerName != groupName ||
			res.MessageQueue.Topic != topic || res.OffsetMsgID == "" || res.MsgID == "" {
			t.Fatalf("SendSync %s: bad result %+v", b, res)
		}
		want = append(want, b)
	}

	col := newCollector()
	newPushConsumer(t, c, unique(t, "CG"), topic, selectAll, col)

	// SendAsync: every callback must report SendOK.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var asyncErrs []string
	for _, b := range bodies("async", 10) {
		wg.Add(1)
		err := p.SendAsync(ctx, func(_ context.Context, res *primitive.SendResult, err error) {
			defer wg.Done()
			if err != nil || res == nil || res.Status != primitive.SendOK {
				mu.Lock()
				asyncErrs = append(asyncErrs, fmt.Sprintf("%s: res=%v err=%v", b, res, err))
				mu.Unlock()
			}
		}, msg(b))
		if err != nil {
			wg.Done()
			t.Fatalf("SendAsync %s: %v", b, err)
		}
		want = append(want, b)
	}
	wg.Wait()
	if len(asyncErrs) > 0 {
		t.Fatalf("SendAsync callbacks failed: %v", asyncErrs)
	}

	// SendOneWay: no acknowledgement, but the messages must still arrive.
	for _, b := range bodies("oneway", 5) {
		if err := p.SendOneWay(ctx, msg(b)); err != nil {
			t.Fatalf("SendOneWay %s: %v", b, err)
		}
		want = append(want, b)
	}

	// Batch: several messages in one SendSync (SEND_BATCH_MESSAGE) land in one queue.
	var batch []*primitive.Message
	for _, b := range bodies("batch", 6) {
		batch = append(batch, msg(b))
		want = append(want, b)
	}
	res, err := p.SendSync(ctx, batch...)
	if err != nil {
		t.Fatalf("batch SendSync: %v", err)
	}
	if res.Status != primitive.SendOK || len(strings.Split(res.OffsetMsgID, ",")) != len(batch) {
		t.Fatalf("batch SendSync: want SendOK with %d offset msg ids, got %+v", len(batch), res)
	}

	col.expectExactly(t, "consumer", want, deliverTimeout, settle)

	msgs, _ := col.snapshot()
	batchOffsets := map[int64]bool{}
	for _, m := range msgs {
		body := string(m.Body)
		if m.Topic != topic {
			t.Errorf("%s: topic %q, want %q", body, m.Topic, topic)
		}
		if got, want := m.GetKeys(), "key-"+body+" alt-"+body; got != want {
			t.Errorf("%s: keys %q, want %q", body, got, want)
		}
		if m.GetTags() != "TagK" {
			t.Errorf("%s: tag %q, want TagK", body, m.GetTags())
		}
		if m.Queue == nil || m.Queue.BrokerName != groupName {
			t.Errorf("%s: queue %v, want broker %s", body, m.Queue, groupName)
		}
		if strings.HasPrefix(body, "batch-") {
			if m.Queue.QueueId != res.MessageQueue.QueueId {
				t.Errorf("%s: batch message in queue %d, batch was acked for queue %d", body, m.Queue.QueueId, res.MessageQueue.QueueId)
			}
			batchOffsets[m.QueueOffset] = true
		}
	}
	// The batch occupies consecutive offsets starting at the acked queueOffset.
	for i := range int64(len(batch)) {
		if !batchOffsets[res.QueueOffset+i] {
			t.Errorf("batch: no message at queue offset %d (acked first offset %d, got %v)", res.QueueOffset+i, res.QueueOffset, batchOffsets)
		}
	}
}

// TestTagFilter subscribes "TagA || TagC" and sends TagA, TagB and TagC messages:
// only A and C may arrive.
func TestTagFilter(t *testing.T) {
	c := shared(t)
	topic := unique(t, "T")
	p := newProducer(t, c)
	// Create the topic first so the consumer can start before the tagged messages.
	sendBodies(t, p, topic, []string{"untagged-seed"})

	col := newCollector()
	newPushConsumer(t, c, unique(t, "CG"), topic,
		consumer.MessageSelector{Type: consumer.TAG, Expression: "TagA || TagC"}, col)

	var want []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 8 {
		for _, tag := range []string{"TagA", "TagB", "TagC"} {
			body := fmt.Sprintf("%s-%d", tag, i)
			m := primitive.NewMessage(topic, []byte(body))
			m.WithTag(tag)
			if _, err := p.SendSync(ctx, m); err != nil {
				t.Fatalf("send %s: %v", body, err)
			}
			if tag != "TagB" {
				want = append(want, body)
			}
		}
	}
	col.expectExactly(t, "TagA||TagC consumer", want, deliverTimeout, settle)
	msgs, _ := col.snapshot()
	for _, m := range msgs {
		if tag := m.GetTags(); tag != "TagA" && tag != "TagC" {
			t.Errorf("%s: delivered with tag %q", m.Body, tag)
		}
		if !strings.HasPrefix(string(m.Body), m.GetTags()+"-") {
			t.Errorf("%s: tag %q does not match the body", m.Body, m.GetTags())
		}
	}
}

// TestTwoGroupsEachGetEverything: two consumer groups on one topic are independent;
// each receives every message exactly once.
func TestTwoGroupsEachGetEverything(t *testing.T) {
	c := shared(t)
	topic := unique(t, "T")
	p := newProducer(t, c)
	want := bodies("g", 30)
	sendBodies(t, p, topic, want[:5])

	colA, colB := newCollector(), newCollector()
	newPushConsumer(t, c, unique(t, "CGA"), topic, selectAll, colA)
	newPushConsumer(t, c, unique(t, "CGB"), topic, selectAll, colB)
	sendBodies(t, p, topic, want[5:])

	colA.expectExactly(t, "group A", want, deliverTimeout, settle)
	colB.expectExactly(t, "group B", want, deliverTimeout, 0)
}
