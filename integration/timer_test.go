package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// TestTimedDeliveryAtArbitraryTimes sends messages with WithDelayTimestamp
// (TIMER_DELIVER_MS) due 2.5 s, 6 s and 3 s ahead, in that order: each arrives once,
// not more than half a second before its time and within a few seconds after it,
// and the later-due first message does not hold back the earlier-due third.
func TestTimedDeliveryAtArbitraryTimes(t *testing.T) {
	c := shared(t)
	topic := unique(t, "TM")
	p := newProducer(t, c)
	createTopic(t, c, topic, 4)
	col := newTimedCollector()
	startConsumer(t, c, unique(t, "TG"), topic, col.consume)

	due := map[string]time.Time{}
	for i, ahead := range []time.Duration{2500 * time.Millisecond, 6 * time.Second, 3 * time.Second} {
		body := fmt.Sprintf("timed-%d", i)
		at := time.Now().Add(ahead)
		m := primitive.NewMessage(topic, []byte(body))
		m.WithDelayTimestamp(at)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := p.SendSync(ctx, m)
		cancel()
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("timed send %s: %v %v", body, res, err)
		}
		due[body] = at
	}
	if !col.waitDistinct(len(due), 30*time.Second) {
		t.Fatalf("received %d of %d messages", col.distinct(), len(due))
	}
	time.Sleep(settle)
	_, counts := col.snapshot()
	col.mu.Lock()
	defer col.mu.Unlock()
	for body, at := range due {
		if counts[body] != 1 {
			t.Errorf("%s delivered %d times", body, counts[body])
		}
		got := col.arrived[body]
		if early := at.Sub(got); early > 500*time.Millisecond {
			t.Errorf("%s arrived %v before its time", body, early)
		}
		if late := got.Sub(at); late > 5*time.Second {
			t.Errorf("%s arrived %v after its time", body, late)
		}
	}
	if !col.arrived["timed-2"].Before(col.arrived["timed-1"]) {
		t.Errorf("the message due at +3 s arrived after the one due at +6 s")
	}
}
