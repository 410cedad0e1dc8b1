package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The old recorder appended every sample to one slice under one mutex and
// sorted it each second: memory grew with the run. A recorder's memory must
// not depend on how many samples it took, and recording must not allocate.
func TestRecorderMemoryDoesNotGrowWithSamples(t *testing.T) {
	r := newRecorder(2)
	size := func() int {
		n := 0
		for i := range r.cur {
			n += r.cur[i].ByteSize() + r.spare[i].ByteSize()
		}
		return n
	}
	r.ok(1, 10, time.Millisecond, time.Millisecond)
	before := size()
	for i := range 1_000_000 {
		d := time.Duration(i%50_000) * time.Microsecond
		r.ok(1, 10, d, d/2)
	}
	if after := size(); after != before {
		t.Fatalf("recorder grew from %d to %d bytes over 1e6 samples", before, after)
	}
	if allocs := testing.AllocsPerRun(1000, func() { r.ok(1, 10, 3*time.Millisecond, time.Millisecond) }); allocs != 0 {
		t.Fatalf("ok allocates %.1f times per call", allocs)
	}
}

// HdrHistogram's percentiles must agree with the exact ones within its 0.1%
// precision (three significant digits) plus the 1 µs unit.
func TestPercentilesMatchExactValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := newMeter([]Series{{Name: "latency"}}, 1, time.Unix(0, 0))
	var exact []time.Duration
	for range 200_000 {
		// log-normal-ish: most around 1 ms, a tail to seconds
		d := time.Duration(rng.ExpFloat64()*float64(time.Millisecond)) + time.Duration(rng.IntN(50))*time.Microsecond
		if rng.IntN(1000) == 0 {
			d += time.Duration(rng.IntN(3000)) * time.Millisecond
		}
		exact = append(exact, d)
		m.recs[0].ok(1, 0, d)
	}
	m.interval(time.Unix(1, 0))
	s := m.summary()
	slices.Sort(exact)
	at := func(p float64) time.Duration { return exact[int(float64(len(exact)-1)*p/100)] }
	for _, c := range []struct {
		p   float64
		got time.Duration
	}{{50, s.Latency[0].P50}, {90, s.Latency[0].P90}, {99, s.Latency[0].P99}, {99.9, s.Latency[0].P999}, {100, s.Latency[0].Max}} {
		want := at(c.p)
		tol := want/1000 + 2*time.Microsecond
		if diff := c.got - want; diff < -tol || diff > tol {
			t.Errorf("p%g = %s, exact %s (tolerance %s)", c.p, c.got, want, tol)
		}
	}
	if s.Latency[0].Count != int64(len(exact)) {
		t.Fatalf("count %d, want %d", s.Latency[0].Count, len(exact))
	}
	last := s.Tables[0][len(s.Tables[0])-1]
	if last.Percent != 100 || last.Count != int64(len(exact)) {
		t.Fatalf("last table row %+v, want 100%% with every sample", last)
	}
	var inBars int64
	for _, b := range s.Buckets[0] {
		inBars += b.Count
	}
	if inBars != int64(len(exact)) {
		t.Fatalf("histogram bars hold %d samples, want %d", inBars, len(exact))
	}
}

// Workers record while the meter collects intervals: every sample ends up in
// exactly one interval and in the summary (run with -race).
func TestMeterIntervalsAddUpToSummary(t *testing.T) {
	const workers, each = 4, 20_000
	start := time.Unix(100, 0)
	m := newMeter([]Series{{Name: "latency"}, {Name: "service"}}, workers, start)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if i%100 == 99 {
					m.recs[w].fail(3, fmt.Errorf("worker %d: CODE: 14 disk full", w))
					continue
				}
				m.recs[w].ok(3, 300, time.Duration(i)*time.Microsecond, time.Microsecond)
			}
		})
	}
	var ivs []Interval
	now := start
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		now = now.Add(time.Second)
		ivs = append(ivs, m.interval(now))
	}
	s := m.summary()
	var msgs, failed, lat int64
	for _, iv := range ivs {
		msgs += iv.Msgs
		failed += iv.Failed
		lat += iv.Latency[0].Count
	}
	wantOps := int64(workers * (each - each/100))
	if s.Ops != wantOps || s.Msgs != 3*wantOps || s.Bytes != 300*wantOps || s.Failed != 3*workers*each/100 {
		t.Fatalf("summary ops=%d msgs=%d bytes=%d failed=%d, want ops=%d", s.Ops, s.Msgs, s.Bytes, s.Failed, wantOps)
	}
	if msgs != s.Msgs || failed != s.Failed || lat != wantOps || s.Latency[1].Count != wantOps {
		t.Fatalf("intervals msgs=%d failed=%d latency samples=%d; summary msgs=%d failed=%d", msgs, failed, lat, s.Msgs, s.Failed)
	}
	if s.Elapsed != now.Sub(start) {
		t.Fatalf("elapsed %s, want %s", s.Elapsed, now.Sub(start))
	}
	// Every failure is counted under its own text, as many per worker as it failed.
	var want []ErrorCount
	for w := range workers {
		want = append(want, ErrorCount{Error: fmt.Sprintf("worker %d: CODE: 14 disk full", w), Msgs: 3 * each / 100})
	}
	if !slices.Equal(s.Errors, want) {
		t.Fatalf("errors %v, want %v", s.Errors, want)
	}
}

// A run keeps at most maxErrorKinds error texts, most messages first; the
// rest are counted together, so every failed message is in the list once.
func TestFailuresPastMaxErrorKindsAreCountedTogether(t *testing.T) {
	m := newMeter([]Series{{Name: "latency"}}, 2, time.Unix(0, 0))
	m.recs[0].fail(5, errors.New("timeout"))
	for i := range maxErrorKinds + 3 {
		m.recs[i%2].fail(1, fmt.Errorf("message %d refused", i))
	}
	m.recs[1].fail(2, nil)
	m.interval(time.Unix(1, 0))
	m.recs[0].fail(5, errors.New("timeout"))
	m.interval(time.Unix(2, 0))
	s := m.summary()
	if len(s.Errors) != maxErrorKinds+1 {
		t.Fatalf("%d kinds, want %d: %v", len(s.Errors), maxErrorKinds+1, s.Errors)
	}
	if s.Errors[0] != (ErrorCount{Error: "timeout", Msgs: 10}) {
		t.Fatalf("first kind %v, want timeout × 10", s.Errors[0])
	}
	var total int64
	var other bool
	for _, e := range s.Errors {
		total += e.Msgs
		other = other || e.Error == otherErrors
	}
	if total != s.Failed || s.Failed != 10+maxErrorKinds+3+2 || !other {
		t.Fatalf("errors %v add up to %d of %d failed (other counted: %v)", s.Errors, total, s.Failed, other)
	}
}

// Values outside the range are kept at its bounds and counted, not dropped.
func TestClippedSamplesAreCounted(t *testing.T) {
	m := newMeter([]Series{{Name: "born"}}, 1, time.Unix(0, 0))
	m.recs[0].ok(1, 1, -5*time.Millisecond)
	m.recs[0].ok(1, 1, 2*histMax)
	m.recs[0].ok(1, 1, time.Millisecond)
	m.interval(time.Unix(1, 0))
	s := m.summary()
	if s.Clipped != 2 || s.Latency[0].Count != 3 || s.Latency[0].Max < histMax-histMax/1000 {
		t.Fatalf("clipped=%d count=%d max=%s", s.Clipped, s.Latency[0].Count, s.Latency[0].Max)
	}
}

func TestBucketBounds(t *testing.T) {
	for d, want := range map[time.Duration]time.Duration{
		0: 10 * time.Microsecond, time.Millisecond: time.Millisecond, 1100 * time.Microsecond: 2 * time.Millisecond,
		3 * time.Millisecond: 5 * time.Millisecond, 700 * time.Millisecond: time.Second, histMax: histMax,
	} {
		if got := bucketUpper(d); got != want {
			t.Errorf("bucketUpper(%s) = %s, want %s", d, got, want)
		}
	}
}

func TestRoundKeepsThreeFigures(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1234 * time.Nanosecond: "1µs", 12345 * time.Microsecond: "12.3ms", 123456 * time.Microsecond: "123ms",
		48234 * time.Millisecond: "48.2s", 94568 * time.Millisecond: "1m34.6s", 1500 * time.Microsecond: "1.5ms",
	} {
		if got := round(d).String(); got != want {
			t.Errorf("round(%s) = %s, want %s", d, got, want)
		}
	}
}

// BenchmarkRecorderOK is the hot path of every send: one sample into the
// worker's own recorder, from every core at once.
func BenchmarkRecorderOK(b *testing.B) {
	m := newMeter([]Series{{Name: "latency"}, {Name: "service"}}, 64, time.Unix(0, 0))
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		r := m.recs[next.Add(1)%64]
		d := time.Duration(0)
		for pb.Next() {
			d = (d + 7919*time.Nanosecond) % (50 * time.Millisecond)
			r.ok(1, 1024, d, d/2)
		}
	})
}
