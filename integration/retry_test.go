package integration

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketraft/rocketraft/transport"
)

// createTopic creates topic on the group (UPDATE_AND_CREATE_TOPIC to any node; a
// follower forwards) and waits until the nameserver routes it. The Go push consumer
// resolves %RETRY%<group> only at Start and then every 30 s, so tests create it first.
func createTopic(t *testing.T, c *cluster, topic string, queues int) {
	t.Helper()
	q := strconv.Itoa(queues)
	ext := map[string]string{"topic": topic, "readQueueNums": q, "writeQueueNums": q, "perm": "6"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.tc.Invoke(ctx, c.clientAddrs[0], transport.NewRequest(transport.UpdateAndCreateTopic, ext, nil))
	if err != nil || resp.ResponseCode() != transport.Success {
		t.Fatalf("create topic %s: %v %v", topic, resp, err)
	}
	for {
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.nsClient.GetRoute(rctx, c.nsAddr, topic)
		rcancel()
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("topic %s never routable: %v", topic, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// retryRecorder fails every delivery and records the reconsume times seen.
type retryRecorder struct {
	mu    sync.Mutex
	times map[string][]int32
	level int // DelayLevelWhenNextConsume; 0 lets the broker pick 3+reconsumeTimes
}

func (r *retryRecorder) consume(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
	if cc, ok := primitive.GetConcurrentlyCtx(ctx); ok && r.level != 0 {
		cc.DelayLevelWhenNextConsume = r.level
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		r.times[string(m.Body)] = append(r.times[string(m.Body)], m.ReconsumeTimes)
	}
	return consumer.ConsumeRetryLater, nil
}

func (r *retryRecorder) seen(body string) []int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int32(nil), r.times[body]...)
}

// TestRetryLaterRedeliversThenDeadLetters: a consumer that always answers
// ConsumeRetryLater sees each message 1+MaxReconsumeTimes times with ReconsumeTimes
// 0, 1, 2 (CONSUMER_SEND_MSG_BACK through the delay path into %RETRY%<group>), then
// the message is in %DLQ%<group> with its body and origin intact.
func TestRetryLaterRedeliversThenDeadLetters(t *testing.T) {
	requireLong(t)
	c := shared(t)
	retryThenDLQ(t, c, 1, func() {})
}

// TestRetryAndDLQSurviveLeaderKill: the same, with the leader SIGKILLed while the
// retries wait in the schedule topic.
func TestRetryAndDLQSurviveLeaderKill(t *testing.T) {
	requireLong(t)
	c := startCluster(t)
	// Retries at level 3 (10 s); the kill comes 7 s after the first deliveries, when
	// the consumer has committed its offsets (every 5 s) and the retries still wait.
	retryThenDLQ(t, c, 3, func() {
		time.Sleep(7 * time.Second)
		leader, err := c.waitLeader(5*time.Second, "", groupSize)
		if err != nil {
			t.Fatal(err)
		}
		c.nodes[leader].Kill()
		if _, err := c.waitLeader(30*time.Second, c.clientAddrs[leader], 2); err != nil {
			t.Fatalf("no new leader: %v", err)
		}
	})
}

// retryThenDLQ runs the retry scenario with retries at delay level `level` and
// calls midway once every message was delivered the first time.
func retryThenDLQ(t *testing.T, c *cluster, level int, midway func()) {
	t.Helper()
	const maxTimes = 2
	topic := unique(t, "TR")
	group := unique(t, "CGR")
	createTopic(t, c, "%RETRY%"+group, 1)
	createTopic(t, c, "%DLQ%"+group, 1)
	p := newProducer(t, c)
	want := bodies("r", 5)
	sent := sendBodies(t, p, topic, want)

	rec := &retryRecorder{times: map[string][]int32{}, level: level}
	startConsumer(t, c, group, topic, rec.consume, consumer.WithMaxReconsumeTimes(maxTimes))
	// Wait for the first delivery, then disturb (the retries are now delayed).
	waitFor(t, 60*time.Second, "first deliveries", func() bool {
		for _, b := range want {
			if len(rec.seen(b)) == 0 {
				return false
			}
		}
		return true
	})
	midway()

	dlq := newCollector()
	newPushConsumer(t, c, unique(t, "CGD"), "%DLQ%"+group, selectAll, dlq)
	dlq.expectExactly(t, "DLQ", want, 120*time.Second, settle)
	msgs, _ := dlq.snapshot()
	ids := map[string]string{}
	for _, r := range sent {
		ids[r.MsgID] = r.MsgID
	}
	for _, m := range msgs {
		if m.GetProperty("RETRY_TOPIC") != topic || ids[m.GetProperty("ORIGIN_MESSAGE_ID")] == "" || m.ReconsumeTimes != maxTimes+1 {
			t.Errorf("DLQ %s: RETRY_TOPIC=%q ORIGIN_MESSAGE_ID=%q reconsumeTimes=%d", m.Body,
				m.GetProperty("RETRY_TOPIC"), m.GetProperty("ORIGIN_MESSAGE_ID"), m.ReconsumeTimes)
		}
	}
	for _, b := range want {
		got := rec.seen(b)
		if len(got) != maxTimes+1 {
			t.Errorf("%s consumed %d times (reconsumeTimes %v), want %d", b, len(got), got, maxTimes+1)
			continue
		}
		for i, rt := range got {
			if rt != int32(i) {
				t.Errorf("%s: delivery %d had ReconsumeTimes %d (all: %v)", b, i, rt, got)
			}
		}
	}
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
