package integration

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// uniqueSeq makes every topic, group and client instance name distinct, so tests
// sharing a cluster (and the client library's process-wide client cache, keyed by
// instance name) never interfere.
var uniqueSeq atomic.Int64

var nonTopicChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// unique returns prefix_<test name>_<n>, restricted to topic/group-safe characters.
func unique(t *testing.T, prefix string) string {
	name := nonTopicChars.ReplaceAllString(t.Name(), "_")
	if len(name) > 60 {
		name = name[:60]
	}
	return fmt.Sprintf("%s_%s_%d_%d", prefix, name, time.Now().UnixNano()%1e6, uniqueSeq.Add(1))
}

// newProducer starts a producer with its own group and instance name; it is shut
// down when the test ends.
func newProducer(t *testing.T, c *cluster, opts ...producer.Option) rocketmq.Producer {
	t.Helper()
	base := []producer.Option{
		producer.WithNameServer([]string{c.nsAddr}),
		producer.WithGroupName(unique(t, "PG")),
		producer.WithInstanceName(unique(t, "pi")),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(5 * time.Second),
	}
	p, err := rocketmq.NewProducer(append(base, opts...)...)
	if err != nil {
		t.Fatalf("new producer: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("start producer: %v", err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

// collector records everything a push consumer delivers.
type collector struct {
	mu     sync.Mutex
	msgs   []*primitive.MessageExt
	counts map[string]int // body → deliveries
	signal chan struct{}
}

func newCollector() *collector {
	return &collector{counts: make(map[string]int), signal: make(chan struct{}, 1)}
}

func (c *collector) consume(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
	c.mu.Lock()
	for _, m := range msgs {
		c.msgs = append(c.msgs, m)
		c.counts[string(m.Body)]++
	}
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
	return consumer.ConsumeSuccess, nil
}

// distinct returns how many distinct bodies arrived.
func (c *collector) distinct() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.counts)
}

func (c *collector) snapshot() ([]*primitive.MessageExt, map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	counts := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		counts[k] = v
	}
	return append([]*primitive.MessageExt(nil), c.msgs...), counts
}

// waitDistinct waits until want distinct bodies arrived or timeout passes.
func (c *collector) waitDistinct(want int, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		if c.distinct() >= want {
			return true
		}
		select {
		case <-c.signal:
		case <-deadline:
			return c.distinct() >= want
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// expectExactly waits for every body in want, then for settle more to catch late
// duplicates or extras, and fails unless each body in want arrived exactly once and
// nothing else arrived.
func (c *collector) expectExactly(t *testing.T, label string, want []string, timeout, settle time.Duration) {
	t.Helper()
	wantSet := make(map[string]bool, len(want))
	for _, w := range want {
		wantSet[w] = true
	}
	if !c.waitDistinct(len(wantSet), timeout) {
		_, got := c.snapshot()
		t.Errorf("%s: got %d of %d distinct messages after %v; missing %s", label, len(got), len(wantSet), timeout,
			summarize(missing(wantSet, got)))
		return
	}
	time.Sleep(settle)
	_, got := c.snapshot()
	var dups, extra []string
	for body, n := range got {
		if !wantSet[body] {
			extra = append(extra, body)
		} else if n != 1 {
			dups = append(dups, fmt.Sprintf("%s×%d", body, n))
		}
	}
	if m := missing(wantSet, got); len(m) > 0 {
		t.Errorf("%s: missing %s", label, summarize(m))
	}
	if len(extra) > 0 {
		t.Errorf("%s: unexpected messages %s", label, summarize(extra))
	}
	if len(dups) > 0 {
		t.Errorf("%s: duplicated deliveries %s", label, summarize(dups))
	}
}

func missing(want map[string]bool, got map[string]int) []string {
	var out []string
	for w := range want {
		if got[w] == 0 {
			out = append(out, w)
		}
	}
	return out
}

func summarize(items []string) string {
	sort.Strings(items)
	if len(items) > 10 {
		return fmt.Sprintf("%d items: %s …", len(items), strings.Join(items[:10], ", "))
	}
	return fmt.Sprintf("%d items: %s", len(items), strings.Join(items, ", "))
}

// newPushConsumer starts a clustering push consumer of group on topic. The topic must
// already be routable (the client refuses to start otherwise).
func newPushConsumer(t *testing.T, c *cluster, group, topic string, sel consumer.MessageSelector,
	col *collector, opts ...consumer.Option) rocketmq.PushConsumer {
	t.Helper()
	base := []consumer.Option{
		consumer.WithNameServer([]string{c.nsAddr}),
		consumer.WithGroupName(group),
		consumer.WithConsumerModel(consumer.Clustering),
	}
	// A topic auto-created by a send reaches the nameserver with the broker's
	// next registration, which runs in the background; under load a consumer
	// started right after the send can find no route yet ("route info not
	// found"), as with Apache's broker. Start again until the route is there.
	deadline := time.Now().Add(routeWait)
	for {
		// A fresh instance name per attempt: the client library caches clients by it.
		attempt := append(append([]consumer.Option{}, base...), consumer.WithInstance(unique(t, "ci")))
		pc, err := rocketmq.NewPushConsumer(append(attempt, opts...)...)
		if err != nil {
			t.Fatalf("new push consumer: %v", err)
		}
		if err := pc.Subscribe(topic, sel, col.consume); err != nil {
			t.Fatalf("subscribe %s: %v", topic, err)
		}
		err = pc.Start()
		if err == nil {
			t.Cleanup(func() { _ = pc.Shutdown() })
			return pc
		}
		_ = pc.Shutdown()
		if !strings.Contains(err.Error(), "route info not found") || time.Now().After(deadline) {
			t.Fatalf("start push consumer group=%s topic=%s: %v", group, topic, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// routeWait bounds how long a consumer waits for its topic's first route.
const routeWait = 10 * time.Second

// sendBodies sends one message per body with SendSync and fails on any error.
func sendBodies(t *testing.T, p rocketmq.Producer, topic string, bodies []string) []*primitive.SendResult {
	t.Helper()
	var out []*primitive.SendResult
	for _, b := range bodies {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte(b)))
		cancel()
		if err != nil {
			t.Fatalf("send %q to %s: %v", b, topic, err)
		}
		if res.Status != primitive.SendOK {
			t.Fatalf("send %q to %s: status %v", b, topic, res.Status)
		}
		out = append(out, res)
	}
	return out
}

func bodies(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return out
}

var selectAll = consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}
