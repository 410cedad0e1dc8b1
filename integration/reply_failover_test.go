package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// replier answers every request it consumes with "re:<body>" through the producer
// it currently holds, which the test swaps for a fresh one after a failover.
type replier struct {
	producer atomic.Pointer[rocketmq.Producer]

	mu      sync.Mutex
	handled map[string]int // request body → times answered
	errs    []string
}

func (r *replier) consume(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
	for _, m := range msgs {
		if string(m.Body) == "warm-up" {
			continue
		}
		reply, err := consumer.CreateReplyMessage(m, nil)
		if err == nil {
			// The pinned client's CreateReplyMessage never sets Body.
			reply.Body = []byte("re:" + string(m.Body))
			// A stale route names the dead leader: a refused connection stored
			// nothing, so retry while the test swaps in a fresh producer.
			for attempt := 0; attempt < 40; attempt++ {
				sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				_, err = (*r.producer.Load()).SendSync(sctx, reply)
				cancel()
				if err == nil || !strings.Contains(err.Error(), "connection refused") {
					break
				}
				time.Sleep(250 * time.Millisecond)
			}
		}
		r.mu.Lock()
		if err != nil {
			r.errs = append(r.errs, fmt.Sprintf("%s: %v", m.Body, err))
		} else {
			r.handled[string(m.Body)]++
		}
		r.mu.Unlock()
	}
	return consumer.ConsumeSuccess, nil
}

func (r *replier) report() (map[string]int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := make(map[string]int, len(r.handled))
	for k, v := range r.handled {
		h[k] = v
	}
	return h, append([]string(nil), r.errs...)
}

// request sends one request and checks that its own reply came back.
func request(t *testing.T, rq rocketmq.Producer, r *replier, topic, body string, timeout time.Duration) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
	defer cancel()
	start := time.Now()
	reply, err := rq.Request(ctx, timeout, primitive.NewMessage(topic, []byte(body)))
	took := time.Since(start)
	if err != nil {
		_, errs := r.report()
		t.Fatalf("Request %s after %v: %v (responder errors: %v)", body, took.Round(time.Millisecond), err, errs)
	}
	if string(reply.Body) != "re:"+body {
		t.Fatalf("Request %s got reply %q, want %q", body, reply.Body, "re:"+body)
	}
	return took
}

// TestRequestReplySurvivesLeaderKill: request/reply works before the leader is
// SIGKILLed and, once the new leader is listed as brokerId 0, for requests from a
// requester that resolved the new route: each gets its own reply, which the new
// leader pushes back (PUSH_REPLY_MESSAGE_TO_CLIENT). The responding consumer keeps
// running across the kill and picks up the requests after its route refresh.
func TestRequestReplySurvivesLeaderKill(t *testing.T) {
	requireLong(t)
	c := startCluster(t)
	topic := unique(t, "RQ")
	requester := newProducer(t, c)
	createTopic(t, c, topic, 4)                          // routable before the consumer starts
	sendBodies(t, requester, topic, []string{"warm-up"}) // creates the topic

	r := &replier{handled: map[string]int{}}
	responder := newProducer(t, c)
	r.producer.Store(&responder)
	startConsumer(t, c, unique(t, "RG"), topic, r.consume)

	for i := range 3 {
		request(t, requester, r, topic, fmt.Sprintf("before-%d", i), 20*time.Second)
	}

	leader, err := c.waitLeader(5*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	c.nodes[leader].Kill()
	newLeader, err := c.waitLeader(30*time.Second, c.clientAddrs[leader], 2)
	if err != nil {
		t.Fatalf("no new leader after killing n%d: %v", leader, err)
	}
	t.Logf("killed n%d; n%d listed as brokerId 0 after %v", leader, newLeader, time.Since(at).Round(time.Millisecond))

	// Fresh clients resolve the new leader at once; the responder's consumer keeps
	// its stale route until its 30 s refresh, which bounds the first request.
	requester2 := newProducer(t, c)
	responder2 := newProducer(t, c)
	r.producer.Store(&responder2)
	first := request(t, requester2, r, topic, "after-0", 50*time.Second)
	t.Logf("first request after the kill answered in %v (%v after the kill)", first.Round(time.Millisecond),
		time.Since(at).Round(time.Millisecond))
	for i := 1; i < 5; i++ {
		if took := request(t, requester2, r, topic, fmt.Sprintf("after-%d", i), 10*time.Second); took > 5*time.Second {
			t.Errorf("request after-%d took %v once the group had failed over", i, took)
		}
	}

	// The reply can reach the requester before the responder's SendSync returns
	// and counts it: wait for the counts, then a little longer for duplicates.
	deadline := time.Now().Add(5 * time.Second)
	for {
		handled, _ := r.report()
		if handled["after-4"] > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(settle)
	handled, errs := r.report()
	for i := range 5 {
		if b := fmt.Sprintf("after-%d", i); handled[b] != 1 {
			t.Errorf("responder answered %s %d times, want 1", b, handled[b])
		}
	}
	if len(errs) > 0 {
		t.Logf("responder errors (requests re-delivered to it across the kill may fail to be answered): %v", errs)
	}
}
