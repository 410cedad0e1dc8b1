package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketraft/rocketraft/transport"
)

// level2Delay is delay level 2 of the default ladder.
const level2Delay = 5 * time.Second

// timedCollector is a collector that also records when each body first arrived.
type timedCollector struct {
	*collector
	mu      sync.Mutex
	arrived map[string]time.Time
}

func newTimedCollector() *timedCollector {
	return &timedCollector{collector: newCollector(), arrived: map[string]time.Time{}}
}

func (c *timedCollector) consume(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
	now := time.Now()
	c.mu.Lock()
	for _, m := range msgs {
		if _, ok := c.arrived[string(m.Body)]; !ok {
			c.arrived[string(m.Body)] = now
		}
	}
	c.mu.Unlock()
	return c.collector.consume(ctx, msgs...)
}

// startConsumer starts a clustering push consumer with an arbitrary callback.
func startConsumer(t *testing.T, c *cluster, group, topic string,
	fn func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error), opts ...consumer.Option) rocketmq.PushConsumer {
	t.Helper()
	base := []consumer.Option{
		consumer.WithNameServer([]string{c.nsAddr}),
		consumer.WithGroupName(group),
		consumer.WithInstance(unique(t, "ci")),
		consumer.WithConsumerModel(consumer.Clustering),
	}
	pc, err := rocketmq.NewPushConsumer(append(base, opts...)...)
	if err != nil {
		t.Fatalf("new push consumer: %v", err)
	}
	if err := pc.Subscribe(topic, selectAll, fn); err != nil {
		t.Fatalf("subscribe %s: %v", topic, err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("start push consumer group=%s topic=%s: %v", group, topic, err)
	}
	t.Cleanup(func() { _ = pc.Shutdown() })
	return pc
}

// sentDelayed is one delayed message as the producer saw it.
type sentDelayed struct {
	body   string
	msgID  string
	before time.Time // just before SendSync
	after  time.Time // just after it returned
}

// sendDelayed sends one message per body with DELAY=level and a tag and key.
func sendDelayed(t *testing.T, p rocketmq.Producer, topic string, level int, bodies []string) map[string]sentDelayed {
	t.Helper()
	out := make(map[string]sentDelayed, len(bodies))
	for _, b := range bodies {
		m := primitive.NewMessage(topic, []byte(b))
		m.WithTag("TagD")
		m.WithKeys([]string{"key-" + b})
		m.WithDelayTimeLevel(level)
		var res *primitive.SendResult
		var err error
		var before time.Time
		// Right after a failover the producer's route may still name the dead
		// leader: a refused connection stored nothing, so retry it.
		for attempt := 0; ; attempt++ {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			before = time.Now()
			res, err = p.SendSync(ctx, m)
			cancel()
			if err == nil || !strings.Contains(err.Error(), "connection refused") || attempt == 60 {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("delayed send %q: res %v err %v", b, res, err)
		}
		if res.MessageQueue == nil || res.MessageQueue.Topic != topic {
			t.Fatalf("delayed send %q answered queue %v, want one of %s", b, res.MessageQueue, topic)
		}
		out[b] = sentDelayed{body: b, msgID: res.MsgID, before: before, after: time.Now()}
	}
	return out
}

// checkDelayed asserts every delivered message of sent: the contents and MsgId
// are intact, the delay properties are gone, and it arrived no earlier than its
// delay (minus a small clock tolerance) and no later than a generous bound.
func checkDelayed(t *testing.T, col *timedCollector, topic string, sent map[string]sentDelayed, delay, late time.Duration) {
	t.Helper()
	const tolerance = 150 * time.Millisecond
	msgs, _ := col.snapshot()
	col.mu.Lock()
	defer col.mu.Unlock()
	for _, m := range msgs {
		s, ok := sent[string(m.Body)]
		if !ok {
			continue
		}
		if m.Topic != topic || m.GetTags() != "TagD" || m.GetKeys() != "key-"+s.body || m.MsgId != s.msgID {
			t.Errorf("%s: topic=%s tags=%q keys=%q msgId=%s (sent %s)", s.body, m.Topic, m.GetTags(), m.GetKeys(), m.MsgId, s.msgID)
		}
		for _, p := range []string{"DELAY", "REAL_TOPIC", "REAL_QID"} {
			if v := m.GetProperty(p); v != "" {
				t.Errorf("%s: property %s=%q survived delivery", s.body, p, v)
			}
		}
		// The re-put's store time is the broker's delivery decision.
		if stored := time.UnixMilli(m.StoreTimestamp); stored.Add(tolerance).Before(s.before.Add(delay)) {
			t.Errorf("%s: re-stored at %v, only %v after the send began; delay is %v", s.body, stored.Format(time.StampMilli), stored.Sub(s.before), delay)
		}
		got := col.arrived[s.body]
		if got.Add(tolerance).Before(s.before.Add(delay)) {
			t.Errorf("%s: delivered %v after the send began; delay is %v", s.body, got.Sub(s.before), delay)
		}
		if got.After(s.after.Add(delay + late)) {
			t.Errorf("%s: delivered %v after the send; delay is %v (bound %v late)", s.body, got.Sub(s.after), delay, late)
		}
	}
}

func keysOf(m map[string]sentDelayed) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestDelayLevelDeliveredOnceAfterItsDelay: DELAY=2 (5 s) messages through the
// three-node group reach a consumer exactly once, not before their delay, intact.
// Short enough (about 10 s) to run by default.
func TestDelayLevelDeliveredOnceAfterItsDelay(t *testing.T) {
	c := shared(t)
	topic := unique(t, "TD")
	p := newProducer(t, c)
	sent := sendDelayed(t, p, topic, 2, bodies("d", 20))
	col := newTimedCollector()
	startConsumer(t, c, unique(t, "CG"), topic, col.consume)
	col.expectExactly(t, "delay level 2", keysOf(sent), level2Delay+deliverTimeout, settle)
	checkDelayed(t, col, topic, sent, level2Delay, 15*time.Second)
}

// TestDelayedMessagesSurviveLeaderKill: messages wait in the schedule topic when the
// leader is SIGKILLed; the new leader's schedule service, resuming from the
// replicated progress, delivers each exactly once and not early. A second batch is
// sent to the new leader and delivered too.
func TestDelayedMessagesSurviveLeaderKill(t *testing.T) {
	requireLong(t)
	c := startCluster(t)
	topic := unique(t, "TDK")
	p := newProducer(t, c)
	sent := sendDelayed(t, p, topic, 2, bodies("before", 50))
	col := newTimedCollector()
	startConsumer(t, c, unique(t, "CG"), topic, col.consume)

	leader, err := c.waitLeader(5*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}
	c.nodes[leader].Kill()
	if _, err := c.waitLeader(30*time.Second, c.clientAddrs[leader], 2); err != nil {
		t.Fatalf("no new leader after killing n%d: %v", leader, err)
	}
	after := sendDelayed(t, p, topic, 1, bodies("after", 20))
	want := keysOf(sent)
	want = append(want, keysOf(after)...)
	col.expectExactly(t, "delay across a leader kill", want, level2Delay+deliverTimeout, 2*settle)
	checkDelayed(t, col, topic, sent, level2Delay, 40*time.Second)
	checkDelayed(t, col, topic, after, time.Second, 40*time.Second)
}

// sumMaxOffset is the sum of the max offsets of topic's queues on addr.
func sumMaxOffset(c *cluster, addr, topic string, queues int) (int64, error) {
	var sum int64
	for q := range queues {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		resp, err := c.tc.Invoke(ctx, addr, transport.NewRequest(transport.GetMaxOffset, map[string]string{"topic": topic, "queueId": strconv.Itoa(q)}, nil))
		cancel()
		if err != nil {
			return 0, err
		}
		if resp.ResponseCode() != transport.Success {
			return 0, fmt.Errorf("GET_MAX_OFFSET %s/%d: %d %s", topic, q, resp.Code, resp.Remark)
		}
		n, err := strconv.ParseInt(resp.Field("offset"), 10, 64)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

// sendAsyncN sends n messages with at most 64 in flight and returns how long it took.
func sendAsyncN(t *testing.T, p rocketmq.Producer, topic string, n, level int) time.Duration {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sendErr error
	sem := make(chan struct{}, 64)
	start := time.Now()
	for i := range n {
		m := primitive.NewMessage(topic, []byte(fmt.Sprintf("%s-%06d", topic, i)))
		if level > 0 {
			m.WithDelayTimeLevel(level)
		}
		sem <- struct{}{}
		wg.Add(1)
		err := p.SendAsync(context.Background(), func(_ context.Context, _ *primitive.SendResult, err error) {
			if err != nil {
				mu.Lock()
				sendErr = err
				mu.Unlock()
			}
			<-sem
			wg.Done()
		}, m)
		if err != nil {
			t.Fatalf("send: %v", err)
		}
	}
	wg.Wait()
	if sendErr != nil {
		t.Fatalf("async send failed: %v", sendErr)
	}
	return time.Since(start)
}

// TestDelayThroughput measures the schedule service's delivery rate through the
// three-node group (messages re-put into their real topic per second, observed as
// the topic's max offsets) next to plain sends observed the same way. To measure a
// backlog, not the rate at which messages fall due, the group is stopped after
// pre-loading and restarted once every message is due: the new leader then finds
// all of them due at once.
func TestDelayThroughput(t *testing.T) {
	requireLong(t)
	c := startCluster(t)
	const n = 20000
	const queues = 4
	p := newProducer(t, c)

	plain := unique(t, "TP")
	sendBodies(t, p, plain, []string{"warm"})
	took := sendAsyncN(t, p, plain, n, 0)
	t.Logf("plain send: %d messages in %v = %.0f msg/s (acked after quorum fsync)", n, took, float64(n)/took.Seconds())

	delayed := unique(t, "TDT")
	sendBodies(t, p, delayed, []string{"warm"})
	took = sendAsyncN(t, p, delayed, n, 2)
	t.Logf("delayed send (level 2): %d messages in %v = %.0f msg/s", n, took, float64(n)/took.Seconds())
	_ = p.Shutdown()

	for _, node := range c.nodes {
		node.Stop(10 * time.Second)
	}
	time.Sleep(level2Delay)
	restarted := time.Now()
	for _, node := range c.nodes {
		if err := node.Start(); err != nil {
			t.Fatal(err)
		}
	}
	leader, err := c.waitLeader(30*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(120 * time.Second)
	for {
		got, err := sumMaxOffset(c, c.clientAddrs[leader], delayed, queues)
		if err == nil && got >= n+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d delayed messages delivered after 120 s (last error %v)", got-1, n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The re-puts' store timestamps say when the service delivered each message.
	col := newCollector()
	newPushConsumer(t, c, unique(t, "CG"), delayed, selectAll, col)
	if !col.waitDistinct(n+1, 60*time.Second) {
		t.Fatalf("consumer got %d of %d", col.distinct(), n+1)
	}
	msgs, _ := col.snapshot()
	var lo, hi int64
	k := 0
	for _, m := range msgs {
		if string(m.Body) == "warm" || m.StoreTimestamp < restarted.UnixMilli() {
			continue
		}
		if k == 0 || m.StoreTimestamp < lo {
			lo = m.StoreTimestamp
		}
		hi = max(hi, m.StoreTimestamp)
		k++
	}
	// Every entry carries one store timestamp: the first entry's messages mark the
	// start, so the rate counts only the messages stored after it.
	entries := map[int64]bool{}
	afterFirst := 0
	for _, m := range msgs {
		if string(m.Body) == "warm" || m.StoreTimestamp < restarted.UnixMilli() {
			continue
		}
		entries[m.StoreTimestamp] = true
		if m.StoreTimestamp > lo {
			afterFirst++
		}
	}
	span := time.Duration(hi-lo) * time.Millisecond
	t.Logf("delay delivery: %d due messages re-put by the new leader in %d distinct store timestamps within %v; %d after the first = %.0f msg/s",
		k, len(entries), span, afterFirst, float64(afterFirst)/max(span.Seconds(), 0.001))
	if k < n/2 {
		t.Errorf("only %d messages were delivered after the restart; the backlog measurement is not meaningful", k)
	}
}
