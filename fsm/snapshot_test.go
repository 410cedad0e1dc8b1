package fsm

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestSnapshotRestoreIntoEmptyStore(t *testing.T) {
	ls := workload(t, 40)
	src, srcDir := newFakeStore(), t.TempDir()
	fa := newFSM(t, src, srcDir)
	applyAll(fa, ls[:50], 5)
	snap := snapshotBytes(t, fa)

	// Persist must leave a checkpoint at or past the snapshot's index: raft may
	// compact its log once Persist returns.
	ck, found, err := readCheckpoint(srcDir)
	if err != nil || !found || ck.AppliedIndex < 50 {
		t.Fatalf("checkpoint after Persist: %+v found=%v err=%v", ck, found, err)
	}
	hdr, err := ReadSnapshotHeader(bytes.NewReader(snap))
	if err != nil || hdr.AppliedIndex != 50 || hdr.CommitLogOffset != src.MaxPhysicalOffset() {
		t.Fatalf("header %+v %v", hdr, err)
	}

	dst, dstDir := newFakeStore(), t.TempDir()
	fb := newFSM(t, dst, dstDir)
	if err := fb.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst.data, src.data) || fb.AppliedIndex() != 50 {
		t.Fatalf("restored %d bytes at index %d, source %d bytes", len(dst.data), fb.AppliedIndex(), len(src.data))
	}
	ma, _ := fa.Metadata().marshal()
	mb, _ := fb.Metadata().marshal()
	if !bytes.Equal(ma, mb) {
		t.Fatalf("metadata differs:\n%s\n%s", ma, mb)
	}
	if ck, found, _ := readCheckpoint(dstDir); !found || ck.AppliedIndex != 50 {
		t.Fatalf("restore wrote no checkpoint at 50: %+v", ck)
	}
	// Both continue identically.
	applyAll(fa, ls[50:], 3)
	applyAll(fb, ls, 3) // includes the already-covered prefix, which is skipped
	if !bytes.Equal(dst.data, src.data) {
		t.Fatal("replicas diverged after restore")
	}
	// And a restart of the restored node comes back at the restore checkpoint or later.
	if err := fb.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if f := newFSM(t, dst, dstDir); f.AppliedIndex() != uint64(len(ls)) || !bytes.Equal(dst.data, src.data) {
		t.Fatalf("restart after restore: applied %d", f.AppliedIndex())
	}
}

func TestSnapshotPersistIsConcurrentWithApply(t *testing.T) {
	ls := workload(t, 30)
	st := newFakeStore()
	f := newFSM(t, st, t.TempDir())
	applyAll(f, ls[:20], 1)
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	applyAll(f, ls[20:], 1) // after the capture: not in this snapshot
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	hdr, err := ReadSnapshotHeader(bytes.NewReader(sink.Bytes()))
	if err != nil || hdr.AppliedIndex != 20 || hdr.CommitLogOffset >= st.MaxPhysicalOffset() {
		t.Fatalf("header %+v (store max %d) %v", hdr, st.MaxPhysicalOffset(), err)
	}
	dst := newFakeStore()
	g := newFSM(t, dst, t.TempDir())
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst.data, st.data[:hdr.CommitLogOffset]) {
		t.Fatal("restored bytes are not the source's prefix")
	}
}

func TestRestoreRejectsCorruptSnapshots(t *testing.T) {
	src := newFakeStore()
	f := newFSM(t, src, t.TempDir())
	applyAll(f, workload(t, 10), 1)
	snap := snapshotBytes(t, f)

	t.Run("bad magic leaves the FSM usable", func(t *testing.T) {
		g := newFSM(t, newFakeStore(), t.TempDir())
		b := bytes.Clone(snap)
		b[0] = 'X'
		if err := g.Restore(io.NopCloser(bytes.NewReader(b))); !errors.Is(err, ErrSnapshotFormat) {
			t.Fatalf("restore: %v", err)
		}
		g.Apply(cmdLog(1, enc(t, TopicDelete{Topic: "x"}))) // must not panic
	})
	t.Run("flipped CommitLog byte breaks the FSM", func(t *testing.T) {
		g := newFSM(t, newFakeStore(), t.TempDir())
		b := bytes.Clone(snap)
		b[len(b)-20] ^= 0x40
		if err := g.Restore(io.NopCloser(bytes.NewReader(b))); !errors.Is(err, ErrSnapshotFormat) {
			t.Fatalf("restore: %v", err)
		}
		m := mustPanic(t, func() { g.Apply(cmdLog(99, enc(t, TopicDelete{Topic: "x"}))) })
		if !strings.Contains(m, "raft index 99") || !strings.Contains(m, "restore") {
			t.Errorf("panic %q", m)
		}
		if err := g.Checkpoint(); err == nil {
			t.Error("checkpoint written over a broken store")
		}
		// A good snapshot repairs it.
		if err := g.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
			t.Fatal(err)
		}
		g.Apply(cmdLog(1000, enc(t, TopicDelete{Topic: "x"})))
	})
	t.Run("truncated", func(t *testing.T) {
		g := newFSM(t, newFakeStore(), t.TempDir())
		if err := g.Restore(io.NopCloser(bytes.NewReader(snap[:len(snap)-2]))); !errors.Is(err, ErrSnapshotFormat) {
			t.Fatalf("restore: %v", err)
		}
	})
}

func TestMetadataImageIsDeterministic(t *testing.T) {
	f := newFSM(t, newFakeStore(), t.TempDir())
	applyAll(f, workload(t, 40), 1)
	f.Apply(cmdLog(1000, enc(t, ScheduleProgress{Levels: []ScheduleEntry{{Level: 3, Offset: 9}, {Level: 1, Offset: 4}}})))
	f.Apply(cmdLog(1001, enc(t, ConsumerOffsets{Offsets: []OffsetEntry{{Group: "G2", Topic: "TopicB", QueueID: 1, Offset: 3}}})))
	a, err := f.Metadata().marshal()
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b, _ := f.Metadata().marshal()
		if !bytes.Equal(a, b) {
			t.Fatal("two serializations of one state differ")
		}
	}
	img, err := unmarshalImage(a)
	if err != nil {
		t.Fatal(err)
	}
	m := newMetadata()
	m.install(img)
	if b, _ := m.marshal(); !bytes.Equal(a, b) {
		t.Fatalf("install(image) does not round-trip:\n%s\n%s", a, b)
	}
	if p := m.ScheduleProgress(); p[1] != 4 || p[3] != 9 {
		t.Errorf("schedule %v", p)
	}
}

func TestDeleteTopicAndGroupCleanOffsets(t *testing.T) {
	f := newFSM(t, newFakeStore(), t.TempDir())
	ls := workload(t, 20)
	applyAll(f, ls, 1)
	n := uint64(len(ls))
	md := f.Metadata()
	f.Apply(cmdLog(n+1, enc(t, ConsumerOffsets{Offsets: []OffsetEntry{{Group: "GroupA", Topic: "TopicB", QueueID: 0, Offset: 7}}})))
	v0 := md.DataVersion()
	f.Apply(cmdLog(n+2, enc(t, TopicDelete{Topic: "TopicA"})))
	if _, ok := md.Topic("TopicA"); ok || md.DataVersion() != v0+1 {
		t.Fatal("topic not deleted or data version not bumped")
	}
	if offs := md.ConsumerOffsets("GroupA"); len(offs) != 1 || offs[TopicQueue{"TopicB", 0}] != 7 {
		t.Fatalf("offsets after topic delete: %v", offs)
	}
	f.Apply(cmdLog(n+3, enc(t, SubscriptionGroupDelete{Group: "GroupA", CleanOffsets: true})))
	if _, ok := md.SubscriptionGroup("GroupA"); ok || len(md.ConsumerOffsets("GroupA")) != 0 {
		t.Fatal("group or its offsets survived")
	}
}
