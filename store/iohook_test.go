package store

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestIOHookENOSPCMidBatchLeavesNoTrace fails record writes part way through
// batches (and segment creations, so some failures land in a batch that rolls
// over) with ENOSPC, retries each failed batch once the "disk" has room again,
// and requires the same results and the same CommitLog bytes as a store that
// never failed: a refused batch must leave nothing behind, not even queue
// offsets. The chaos scenario D9 relies on it (fsm retries the same batch).
func TestIOHookENOSPCMidBatchLeavesNoTrace(t *testing.T) {
	// failAt counts down the writes left before one fails (0: disarmed);
	// failCreate fails the next segment creation (the pre-allocator's or the
	// synchronous one, whichever comes first).
	var failAt, failures atomic.Int64
	var failCreate atomic.Bool
	hook := func(c IOCall) error {
		switch c.Op {
		case IOWrite:
			if failAt.Load() > 0 && failAt.Add(-1) == 0 {
				failures.Add(1)
				return fmt.Errorf("%s %s: %w", c.Op, c.Path, syscall.ENOSPC)
			}
		case IOCreate:
			if failCreate.CompareAndSwap(true, false) {
				failures.Add(1)
				return fmt.Errorf("%s %s: %w", c.Op, c.Path, syscall.ENOSPC)
			}
		}
		return nil
	}
	cfgA := testConfig(t.TempDir())
	cfgA.IOHook = hook
	a := openTest(t, cfgA)
	dirB := t.TempDir()
	b := openTest(t, testConfig(dirB))

	var ra, rb []AppendResult
	for batch := range 30 {
		recs := make([][]byte, 0, 20)
		for i := range 20 {
			recs = append(recs, testRecord(t, fmt.Sprintf("topic-%d", (batch+i)%3), int32(i%4), 150+((batch*20+i)*37)%1400, batch*100+i))
		}
		ts := 1700000000000 + int64(batch)
		before := a.MaxPhysicalOffset()
		if batch%2 == 0 {
			failAt.Store(int64(2 + batch%17)) // part way through this batch
		}
		if batch%5 == 0 {
			failCreate.Store(true)
		}
		for attempt := 0; ; attempt++ {
			res, err := a.AppendBatch(recs, ts)
			if err == nil {
				ra = append(ra, res...)
				break
			}
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("batch %d: error %v, want one wrapping ENOSPC", batch, err)
			}
			if got := a.MaxPhysicalOffset(); got != before {
				t.Fatalf("batch %d: refused batch moved the CommitLog end %d → %d", batch, before, got)
			}
			if attempt > 3 {
				t.Fatalf("batch %d still refused after %d attempts: %v", batch, attempt, err)
			}
		}
		failAt.Store(0)
		rb = append(rb, mustAppend(t, b, recs, ts)...)
	}
	if failures.Load() < 10 {
		t.Fatalf("only %d injected failures: the hook was not exercised", failures.Load())
	}
	if fmt.Sprint(ra) != fmt.Sprint(rb) {
		t.Fatal("append results differ from the store that never failed")
	}
	if a.MaxPhysicalOffset() < 3*testSegSize {
		t.Fatalf("only %d bytes written, want several segments (rollovers)", a.MaxPhysicalOffset())
	}
	// A last batch refused part way and never retried, then a crash: recovery
	// must not find the records the refused batch had copied.
	end := a.MaxPhysicalOffset()
	failAt.Store(7)
	if _, err := a.AppendBatch(testBatch(t, "topic-0", 4, 20, 700, 9000), 1700000009999); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("last batch: %v, want ENOSPC", err)
	}
	crash(a)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	a = openTest(t, testConfig(cfgA.Dir))
	if got := a.MaxPhysicalOffset(); got != end {
		t.Fatalf("after a crash the store ends at %d, want %d (the refused batch came back)", got, end)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	sameSegments(t, segmentFiles(t, cfgA.Dir), segmentFiles(t, dirB))
}
