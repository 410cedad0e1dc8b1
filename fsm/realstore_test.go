package fsm

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/store"
)

// These tests run the FSM over the real store (segments, blank padding at roll-over,
// ConsumeQueues), with segments small enough that the workload rolls several times.
const testSegmentSize = 8 << 10

func openStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	s, err := store.Open(store.Config{
		Dir: dir, CommitLogSegmentSize: testSegmentSize, ConsumeQueueEntriesPerFile: 256,
		IndexHashSlots: 64, IndexMaxEntries: 256, Logger: hclog.NewNullLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newRealFSM(t *testing.T, st *store.Store, dir string) *FSM {
	t.Helper()
	f, err := New(Config{Store: st, Dir: dir, SegmentSize: testSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

type queueState map[TopicQueue]store.QueueOffset

func queuesOf(t *testing.T, st *store.Store) queueState {
	t.Helper()
	// Dispatch into the ConsumeQueues is asynchronous (reput); wait for it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.WaitDispatched(ctx, st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	q := queueState{}
	for id := int32(0); id < 4; id++ {
		q[TopicQueue{"TopicA", id}] = st.MaxQueueOffset("TopicA", id)
	}
	for id := int32(0); id < 2; id++ {
		q[TopicQueue{"TopicB", id}] = st.MaxQueueOffset("TopicB", id)
	}
	return q
}

func sameQueues(t *testing.T, got, want queueState) {
	t.Helper()
	for tq, w := range want {
		if got[tq] != w {
			t.Errorf("queue %v: max offset %d, want %d", tq, got[tq], w)
		}
	}
}

func TestRealStoreDeterminismAndCrashReplay(t *testing.T) {
	ls := workload(t, 120)

	refDir := t.TempDir()
	ref := openStore(t, refDir)
	defer ref.Close()
	applyAll(newRealFSM(t, ref, refDir), ls, 1)
	refBytes, refQueues := bytesOf(t, ref), queuesOf(t, ref)
	if ref.MaxPhysicalOffset() < 3*testSegmentSize {
		t.Fatalf("workload too small to roll segments: %d bytes", ref.MaxPhysicalOffset())
	}

	// A second replica with different batching ends byte-identical.
	dir := t.TempDir()
	st := openStore(t, dir)
	f := newRealFSM(t, st, dir)
	applyAll(f, ls[:80], 9)
	if err := f.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	ckOff := f.CommitLogOffset()
	applyAll(f, ls[80:130], 9) // ahead of the checkpoint when the node "crashes"
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st = openStore(t, dir)
	defer st.Close()
	if st.MaxPhysicalOffset() <= ckOff {
		t.Fatalf("store recovered to %d, test needs it past the checkpoint %d", st.MaxPhysicalOffset(), ckOff)
	}
	f = newRealFSM(t, st, dir)
	if f.AppliedIndex() != 80 || st.MaxPhysicalOffset() != ckOff {
		t.Fatalf("after restart applied=%d max=%d, want 80 %d", f.AppliedIndex(), st.MaxPhysicalOffset(), ckOff)
	}
	applyAll(f, ls, 9) // raft replays; ≤ 80 is skipped
	if got := bytesOf(t, st); !bytes.Equal(got, refBytes) {
		t.Fatalf("CommitLog after crash+replay: %d bytes, reference %d (first diff at %d)", len(got), len(refBytes), firstDiff(got, refBytes))
	}
	sameQueues(t, queuesOf(t, st), refQueues)
}

func TestRealStoreSnapshotRestoreIntoEmptyStore(t *testing.T) {
	ls := workload(t, 100)
	srcDir := t.TempDir()
	src := openStore(t, srcDir)
	defer src.Close()
	fa := newRealFSM(t, src, srcDir)
	applyAll(fa, ls, 5)
	snap := snapshotBytes(t, fa)

	dstDir := t.TempDir()
	dst := openStore(t, dstDir)
	defer dst.Close()
	fb := newRealFSM(t, dst, dstDir)
	applyAll(fb, workload(t, 3), 1) // some prior state that Restore must discard
	if err := fb.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
		t.Fatal(err)
	}
	if got, want := bytesOf(t, dst), bytesOf(t, src); !bytes.Equal(got, want) {
		t.Fatalf("restored CommitLog: %d bytes, source %d (first diff at %d)", len(got), len(want), firstDiff(got, want))
	}
	sameQueues(t, queuesOf(t, dst), queuesOf(t, src))
	ma, _ := fa.Metadata().marshal()
	mb, _ := fb.Metadata().marshal()
	if !bytes.Equal(ma, mb) || fb.AppliedIndex() != fa.AppliedIndex() {
		t.Fatalf("metadata or index differ after restore (%d vs %d)", fb.AppliedIndex(), fa.AppliedIndex())
	}
	// Both replicas keep applying identically.
	more := workload(t, 140)[len(ls):] // workloads are prefix-identical: indexes continue
	applyAll(fa, more, 4)
	applyAll(fb, more, 1)
	if !bytes.Equal(bytesOf(t, dst), bytesOf(t, src)) {
		t.Fatal("replicas diverged after restore")
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestRealStoreCheckpointConcurrentWithApply(t *testing.T) {
	ls := workload(t, 150)
	dir := t.TempDir()
	st := openStore(t, dir)
	f := newRealFSM(t, st, dir)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { // the node's ticker, plus broker reads of metadata
		var err error
		for err == nil {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			err = f.Checkpoint()
			_ = f.Metadata().Topics()
			_, _ = f.Metadata().ConsumerOffset("GroupA", "TopicA", 1)
		}
		done <- err
	}()
	applyAll(f, ls, 3)
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := bytesOf(t, st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openStore(t, dir)
	defer st.Close()
	f = newRealFSM(t, st, dir)
	applyAll(f, ls, 3)
	if got := bytesOf(t, st); !bytes.Equal(got, want) {
		t.Fatalf("after restart from a concurrent checkpoint: %d bytes, want %d", len(got), len(want))
	}
}
