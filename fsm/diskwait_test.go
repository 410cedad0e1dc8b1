package fsm

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/store"
)

// diskFullStore opens a real store whose CommitLog writes fail with ENOSPC
// while *full is set, the first of them part way through a batch.
func diskFullStore(t *testing.T, dir string, full *atomic.Bool, refused *atomic.Int64) *store.Store {
	t.Helper()
	s, err := store.Open(store.Config{
		Dir: dir, CommitLogSegmentSize: testSegmentSize, ConsumeQueueEntriesPerFile: 256,
		IndexHashSlots: 64, IndexMaxEntries: 256, Logger: hclog.NewNullLogger(),
		IOHook: func(c store.IOCall) error {
			if c.Op != store.IOSync && full.Load() {
				refused.Add(1)
				return fmt.Errorf("%s %s: %w", c.Op, c.Path, syscall.ENOSPC)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestD9ApplyWaitsForSpaceInsteadOfPanicking is the regression test of chaos
// scenario D9 (ENOSPC part way through applying a multi-message entry): the
// FSM used to panic, which crashed the node and, restarted into the same full
// disk, crashed it again. Now Apply waits, tells OnDiskFull once, and when
// space returns applies the same entry, ending with the bytes of an FSM whose
// disk never filled.
func TestD9ApplyWaitsForSpaceInsteadOfPanicking(t *testing.T) {
	ls := workload(t, 40)
	var full atomic.Bool
	var refused, told atomic.Int64
	st := diskFullStore(t, t.TempDir(), &full, &refused)
	defer st.Close()
	dir := t.TempDir()
	f, err := New(Config{Store: st, Dir: dir, SegmentSize: testSegmentSize, OnDiskFull: func(error) { told.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	want := openStore(t, t.TempDir())
	defer want.Close()
	ref := newRealFSM(t, want, t.TempDir())
	applyAll(ref, ls, 8)

	// Apply the first half, then fill the disk and apply an entry of 5 messages.
	half := 0
	for i, l := range ls {
		if i > len(ls)/2 && len(l.Data) > 0 && Type(l.Data) == CmdPutMessages && (i-3)%5 == 4 {
			half = i
			break
		}
	}
	applyAll(f, ls[:half], 1)
	full.Store(true)
	done := make(chan any, 1)
	go func() { done <- f.Apply(ls[half]) }()
	time.Sleep(300 * time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("Apply returned %v on a full disk; want it to wait", r)
	default:
	}
	if refused.Load() < 2 || told.Load() != 1 {
		t.Fatalf("while full: %d refused writes, OnDiskFull told %d times; want ≥ 2 retries and 1 notice", refused.Load(), told.Load())
	}
	if got := f.AppliedIndex(); got != ls[half-1].Index {
		t.Fatalf("applied index %d while waiting, want %d", got, ls[half-1].Index)
	}
	full.Store(false)
	select {
	case r := <-done:
		if pr, ok := r.(*PutResult); !ok || pr.Err != nil || len(pr.Results) == 0 {
			t.Fatalf("Apply after space returned: %#v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Apply still waiting 5 s after space returned")
	}
	applyAll(f, ls[half+1:], 8)
	if got, want := bytesOf(t, st), bytesOf(t, want); string(got) != string(want) {
		t.Fatalf("CommitLog differs from the FSM whose disk never filled at byte %d", firstDiff(got, want))
	}
	sameQueues(t, queuesOf(t, st), queuesOf(t, want))
}

// TestD9StopEndsTheWaitWithoutApplying: a node shutting down while its FSM
// waits for space must not hang (raft.Shutdown waits for the FSM goroutine),
// and the entry waited on must stay unapplied, for the next start to replay.
func TestD9StopEndsTheWaitWithoutApplying(t *testing.T) {
	ls := workload(t, 10)
	var full atomic.Bool
	var refused atomic.Int64
	st := diskFullStore(t, t.TempDir(), &full, &refused)
	defer st.Close()
	f, err := New(Config{Store: st, Dir: t.TempDir(), SegmentSize: testSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	applyAll(f, ls[:5], 1)
	before, end := f.AppliedIndex(), st.MaxPhysicalOffset()
	full.Store(true)
	done := make(chan []any, 1)
	go func() { done <- f.ApplyBatch(ls[5:]) }()
	time.Sleep(100 * time.Millisecond)
	f.Stop()
	select {
	case out := <-done:
		for i, r := range out {
			if err, ok := r.(error); !ok || !errors.Is(err, ErrStopped) {
				t.Fatalf("result %d after Stop: %#v, want an error wrapping ErrStopped", i, r)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ApplyBatch still waiting 5 s after Stop")
	}
	if got := f.AppliedIndex(); got != before {
		t.Fatalf("applied index %d after Stop, want %d (nothing applied)", got, before)
	}
	if got := st.MaxPhysicalOffset(); got != end {
		t.Fatalf("CommitLog end %d after Stop, want %d", got, end)
	}
}

// TestD8AppliedIndexDoesNotWaitForAStalledDisk is the regression test of
// chaos scenario D8 (a follower's disk stalls 10 s): Apply holds the FSM's
// lock across the store's write, and AppliedIndex took the same lock, so
// every status read (the node's State, which the broker asks on every
// request, registration and health check) hung behind the stalled disk.
func TestD8AppliedIndexDoesNotWaitForAStalledDisk(t *testing.T) {
	ls := workload(t, 10)
	stall, entered := make(chan struct{}), make(chan struct{}, 1)
	var stalled atomic.Bool
	st, err := store.Open(store.Config{
		Dir: t.TempDir(), CommitLogSegmentSize: testSegmentSize, ConsumeQueueEntriesPerFile: 256,
		IndexHashSlots: 64, IndexMaxEntries: 256, Logger: hclog.NewNullLogger(),
		IOHook: func(c store.IOCall) error {
			if c.Op == store.IOWrite && stalled.Load() {
				select {
				case entered <- struct{}{}:
				default:
				}
				<-stall
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f, err := New(Config{Store: st, Dir: t.TempDir(), SegmentSize: testSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	applyAll(f, ls[:5], 1)
	want := f.AppliedIndex()
	stalled.Store(true)
	done := make(chan struct{})
	go func() { defer close(done); applyAll(f, ls[5:], 1) }()
	<-entered // Apply is inside the store's write, holding the FSM's lock
	got := make(chan uint64, 1)
	go func() { got <- f.AppliedIndex() }()
	select {
	case idx := <-got:
		if idx < want {
			t.Fatalf("applied index %d while stalled, want ≥ %d", idx, want)
		}
	case <-time.After(2 * time.Second):
		close(stall)
		<-done
		t.Fatal("AppliedIndex blocked behind a stalled store write")
	}
	close(stall)
	<-done
	if got := f.AppliedIndex(); got != ls[len(ls)-1].Index {
		t.Fatalf("applied index %d after the stall, want %d", got, ls[len(ls)-1].Index)
	}
}
