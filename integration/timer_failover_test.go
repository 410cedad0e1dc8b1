package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// TestTimedDeliverySurvivesLeaderKill: TIMER_DELIVER_MS messages due 8–15 s ahead
// are waiting when the leader is SIGKILLed. The new leader's timer service must
// deliver each exactly once: re-stored in the real topic not more than half a
// second before its time and within a few seconds after it, and received by a
// consumer that is itself failing over (its route refresh adds up to ~35 s).
func TestTimedDeliverySurvivesLeaderKill(t *testing.T) {
	requireLong(t)
	c := startCluster(t)
	topic := unique(t, "TMK")
	p := newProducer(t, c)
	createTopic(t, c, topic, 4) // routable before the consumer starts
	sendBodies(t, p, topic, []string{"warm-up"})
	col := newTimedCollector()
	startConsumer(t, c, unique(t, "TG"), topic, col.consume)
	col.expectExactly(t, "warm-up", []string{"warm-up"}, deliverTimeout, 0)

	const (
		early     = 500 * time.Millisecond
		storeLate = 10 * time.Second // the new leader is elected within a few seconds
		recvLate  = 45 * time.Second // plus the consumer's route refresh and a pull
	)
	due := map[string]time.Time{}
	// Deliberately out of due order, so a later-due message must not hold back an
	// earlier one on the new leader either.
	for i, ahead := range []time.Duration{15 * time.Second, 8 * time.Second, 12 * time.Second, 9500 * time.Millisecond, 14 * time.Second} {
		body := fmt.Sprintf("timed-%d", i)
		at := time.Now().Add(ahead)
		m := primitive.NewMessage(topic, []byte(body))
		m.WithDelayTimestamp(at)
		sendRetryRefused(t, p, m)
		due[body] = at
	}

	leader, err := c.waitLeader(5*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	c.nodes[leader].Kill()
	if _, err := c.waitLeader(30*time.Second, c.clientAddrs[leader], 2); err != nil {
		t.Fatalf("no new leader after killing n%d: %v", leader, err)
	}
	t.Logf("killed n%d; new leader listed after %v", leader, time.Since(killed).Round(time.Millisecond))

	last := killed
	for _, at := range due {
		last = later(last, at)
	}
	if !col.waitDistinct(len(due)+1, time.Until(last)+recvLate) {
		_, got := col.snapshot()
		t.Fatalf("received %d of %d timed messages by %v after the last was due: %v", col.distinct()-1, len(due), recvLate, got)
	}
	time.Sleep(2 * settle)
	msgs, counts := col.snapshot()
	col.mu.Lock()
	defer col.mu.Unlock()
	storedAfter := map[string]time.Duration{}
	for _, m := range msgs {
		body := string(m.Body)
		at, ok := due[body]
		if !ok {
			continue
		}
		stored := time.UnixMilli(m.StoreTimestamp)
		storedAfter[body] = stored.Sub(at)
		if d := at.Sub(stored); d > early {
			t.Errorf("%s: re-stored %v before its time", body, d)
		}
		if d := stored.Sub(at); d > storeLate {
			t.Errorf("%s: re-stored %v after its time (bound %v)", body, d, storeLate)
		}
		if v := m.GetProperty("TIMER_DELIVER_MS"); v != "" {
			t.Errorf("%s: TIMER_DELIVER_MS=%s survived delivery", body, v)
		}
	}
	for body, at := range due {
		if counts[body] != 1 {
			t.Errorf("%s delivered %d times, want 1", body, counts[body])
		}
		got := col.arrived[body]
		if d := at.Sub(got); d > early {
			t.Errorf("%s received %v before its time", body, d)
		}
		if d := got.Sub(at); d > recvLate {
			t.Errorf("%s received %v after its time (bound %v)", body, d, recvLate)
		}
		t.Logf("%s: due %v after the kill, re-stored %v and received %v after its time", body,
			at.Sub(killed).Round(time.Millisecond), storedAfter[body].Round(time.Millisecond), got.Sub(at).Round(time.Millisecond))
	}
	for body := range counts {
		if _, ok := due[body]; !ok && body != "warm-up" {
			t.Errorf("unexpected message %q", body)
		}
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
