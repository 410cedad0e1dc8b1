package bench

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeClock is the time of one worker: it moves only when the worker sleeps
// or a simulated send takes time.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) SleepUntil(_ context.Context, t time.Time) bool {
	if t.After(c.now) {
		c.now = t
	}
	return true
}

func TestPlanClosedLoopCountWithShortLastBatch(t *testing.T) {
	start := time.Unix(0, 0)
	p := newPlan(ProduceOptions{Count: 10, Batch: 3}, start)
	var got [][2]int64
	for {
		o, ok := p.claim(start.Add(time.Hour))
		if !ok {
			break
		}
		if !o.due.Equal(start.Add(time.Hour)) {
			t.Fatalf("closed loop: send due %s, want the time it was claimed", o.due)
		}
		got = append(got, [2]int64{o.first, int64(o.msgs)})
	}
	want := [][2]int64{{0, 3}, {3, 3}, {6, 3}, {9, 1}}
	if len(got) != len(want) {
		t.Fatalf("sends %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sends %v, want %v", got, want)
		}
	}
}

func TestPlanOpenLoopDueTimesAndDuration(t *testing.T) {
	start := time.Unix(0, 0)
	p := newPlan(ProduceOptions{Rate: 200, Duration: time.Second, Batch: 2}, start)
	n := 0
	for {
		o, ok := p.claim(start) // claimed long before due: the due time must not depend on when
		if !ok {
			break
		}
		if want := start.Add(time.Duration(o.first) * 5 * time.Millisecond); !o.due.Equal(want) {
			t.Fatalf("message %d due %s, want %s", o.first, o.due.Sub(start), want.Sub(start))
		}
		n += o.msgs
	}
	if n != 200 {
		t.Fatalf("a 1 s run at 200 msgs/s planned %d messages, want 200", n)
	}
}

// runStall runs one worker over 1000 sends of which send 100 stalls for
// 200 ms (the others take 100 µs) and returns its summary.
func runStall(t *testing.T, rate float64) Summary {
	t.Helper()
	start := time.Unix(1000, 0)
	clk := &fakeClock{now: start}
	p := newPlan(ProduceOptions{Rate: rate, Count: 1000, Batch: 1}, start)
	m := newMeter(produceSeries(p.open(), "per send call"), 1, start)
	w := worker{plan: p, clock: clk, rec: m.recs[0], send: func(_ context.Context, o op) (int64, error) {
		if o.first == 100 {
			clk.now = clk.now.Add(200 * time.Millisecond)
		} else {
			clk.now = clk.now.Add(100 * time.Microsecond)
		}
		return 10, nil
	}}
	w.run(context.Background())
	m.interval(clk.now)
	return m.summary()
}

// atLeast counts the samples of series i that took at least d.
func atLeast(s Summary, i int, d time.Duration) int64 {
	var n int64
	// d must be a bucket bound (1, 2, 5 times a power of ten).
	for _, b := range s.Buckets[i] {
		if b.Upper > d {
			n += b.Count
		}
	}
	return n
}

// Coordinated omission: in closed loop a 200 ms stall is one slow sample,
// although at 1000 msgs/s some 200 sends should have gone out during it. The
// open-loop run measures from the scheduled time, so those sends count with
// the time they waited; its service series still shows only the one slow call.
func TestOpenLoopCorrectsCoordinatedOmission(t *testing.T) {
	closed := runStall(t, 0)
	if n := atLeast(closed, 0, 100*time.Millisecond); n != 1 {
		t.Fatalf("closed loop: %d samples above 100 ms, want the 1 stalled send", n)
	}
	open := runStall(t, 1000)
	if open.Series[0].Name != "latency" || open.Series[1].Name != "service" {
		t.Fatalf("open loop series %v", open.Series)
	}
	// Send k > 100 (due at k ms) ends at 300 + 0.1·(k−100) ms, so sends 100
	// … 211 took over 100 ms from their due time: 112 samples.
	if n := atLeast(open, 0, 100*time.Millisecond); n < 110 || n > 114 {
		t.Fatalf("open loop: %d corrected samples above 100 ms, want 112", n)
	}
	if n := atLeast(open, 1, 100*time.Millisecond); n != 1 {
		t.Fatalf("open loop: %d service samples above 100 ms, want 1", n)
	}
	if open.Latency[0].Max < 199*time.Millisecond || open.Latency[0].P90 < 10*time.Millisecond {
		t.Fatalf("open loop corrected max %s p90 %s", open.Latency[0].Max, open.Latency[0].P90)
	}
	if open.Msgs != 1000 || closed.Msgs != 1000 {
		t.Fatalf("sent %d and %d messages, want 1000", open.Msgs, closed.Msgs)
	}
}

// A failed send counts its messages as failed and records no latency.
func TestWorkerCountsFailures(t *testing.T) {
	start := time.Unix(0, 0)
	clk := &fakeClock{now: start}
	p := newPlan(ProduceOptions{Count: 10, Batch: 2}, start)
	m := newMeter(produceSeries(false, ""), 1, start)
	w := worker{plan: p, clock: clk, rec: m.recs[0], send: func(_ context.Context, o op) (int64, error) {
		if o.first == 4 {
			return 0, errors.New("refused")
		}
		return int64(o.msgs) * 5, nil
	}}
	w.run(context.Background())
	m.interval(start.Add(time.Second))
	s := m.summary()
	if s.Msgs != 8 || s.Failed != 2 || s.Bytes != 40 || s.Latency[0].Count != 4 {
		t.Fatalf("msgs=%d failed=%d bytes=%d samples=%d", s.Msgs, s.Failed, s.Bytes, s.Latency[0].Count)
	}
}

// lockedClock is a fakeClock that the test moves while a window's callbacks
// read it on other goroutines.
type lockedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *lockedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *lockedClock) SleepUntil(_ context.Context, t time.Time) bool { return true }

func (c *lockedClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// A window's send is stamped when it goes out, not when the worker claimed
// it before waiting for a free slot: with a window of one, the second send
// leaves when the first is answered (10 ms) and is answered 3 ms later, so
// its latency is 3 ms, not 13.
func TestWindowMeasuresFromWhenTheSendLeaves(t *testing.T) {
	start := time.Unix(0, 0)
	clk := &lockedClock{now: start}
	p := newPlan(ProduceOptions{Count: 2, Batch: 1}, start)
	m := newMeter(produceSeries(false, ""), 1, start)
	answers := make(chan func(int64, error))
	w := worker{plan: p, clock: clk, rec: m.recs[0], sendAsync: func(o op, done func(int64, error)) {
		answers <- done
	}}
	finished := make(chan struct{})
	go func() { w.runWindow(context.Background(), 1); close(finished) }()
	first := <-answers
	clk.set(start.Add(10 * time.Millisecond))
	first(1, nil)
	second := <-answers
	clk.set(start.Add(13 * time.Millisecond))
	second(1, nil)
	<-finished
	m.interval(start.Add(time.Second))
	s := m.summary()
	if s.Msgs != 2 || s.Latency[0].Count != 2 {
		t.Fatalf("msgs=%d samples=%d, want 2 and 2", s.Msgs, s.Latency[0].Count)
	}
	// HdrHistogram reports a bucket's highest equivalent value.
	if mn, mx := s.Tables[0][0].Value, s.Latency[0].Max; mn < 3*time.Millisecond || mn > 3100*time.Microsecond || mx < 10*time.Millisecond || mx > 10100*time.Microsecond {
		t.Fatalf("latencies from %s to %s, want 3 ms and 10 ms", mn, mx)
	}
}
