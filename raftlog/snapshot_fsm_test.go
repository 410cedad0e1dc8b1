package raftlog_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/raftlog"
	"github.com/rocketraft/rocketraft/store"
)

// These tests drive the SnapshotStore with the real FSM and store: the seam
// (fsm.RangeSink) and the stream it synthesizes must be what fsm.Restore expects.

const fsmSegSize = 64 << 10

var host = netip.MustParseAddrPort("10.0.0.1:10911")

func openStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(store.Config{Dir: dir, CommitLogSegmentSize: fsmSegSize, ConsumeQueueEntriesPerFile: 1024,
		IndexHashSlots: 256, IndexMaxEntries: 1024, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func newFSM(t *testing.T, st *store.Store, dir string) *fsm.FSM {
	t.Helper()
	f, err := fsm.New(fsm.Config{Store: st, Dir: dir, SegmentSize: fsmSegSize, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// load applies a topic and puts of 1 KiB messages over 8 queues, from index 1.
func load(t *testing.T, f *fsm.FSM, puts, perPut int) uint64 {
	t.Helper()
	idx := uint64(0)
	apply := func(c fsm.Command) {
		b, err := fsm.Encode(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		idx++
		if r, ok := f.Apply(&raft.Log{Index: idx, Term: 1, Type: raft.LogCommand, Data: b}).(error); ok {
			t.Fatal(r)
		}
	}
	apply(fsm.TopicUpsert{Topic: fsm.TopicConfig{Name: "T", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}})
	for i := 0; i < puts; i++ {
		var msgs [][]byte
		for j := 0; j < perPut; j++ {
			m := store.Message{Topic: "T", QueueID: int32((i + j) % 8), BornTimestamp: 1700000000000, BornHost: host,
				StoreHost: host, Body: bytes.Repeat([]byte(fmt.Sprintf("%d.%d;", i, j)), 1024/8)}
			b, err := store.AppendMessage(nil, &m)
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, b)
		}
		apply(fsm.PutMessages{StoreTimestamp: 1700000001000 + int64(i), StoreHost: host, Messages: msgs})
	}
	return idx
}

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func takeSnapshot(t *testing.T, f *fsm.FSM, snaps raft.SnapshotStore, index uint64) string {
	t.Helper()
	fs, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Release()
	sink, err := snaps.Create(raft.SnapshotVersionMax, index, 1, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Persist(sink); err != nil {
		t.Fatal(err)
	}
	return sink.ID()
}

func openAll(t *testing.T, snaps raft.SnapshotStore, id string) []byte {
	t.Helper()
	meta, rc, err := snaps.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != meta.Size {
		t.Fatalf("snapshot %s: %d bytes, meta.Size %d", id, len(b), meta.Size)
	}
	return b
}

func commitLog(t *testing.T, st *store.Store) []byte {
	t.Helper()
	var out []byte
	if err := st.ReadRange(st.MinPhysicalOffset(), st.MaxPhysicalOffset(), func(c []byte) error {
		out = append(out, c...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func queueMax(t *testing.T, st *store.Store) []store.QueueOffset {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.WaitDispatched(ctx, st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	var out []store.QueueOffset
	for q := int32(0); q < 8; q++ {
		out = append(out, st.MaxQueueOffset("T", q))
	}
	return out
}

func TestRangeSnapshotAgainstFullCopy(t *testing.T) {
	srcDir := t.TempDir()
	src := openStore(t, srcDir)
	f := newFSM(t, src, srcDir)
	index := load(t, f, 400, 8) // ~3.3 MiB of CommitLog over ~50 segments

	fileDir := t.TempDir()
	files, err := raft.NewFileSnapshotStoreWithLogger(fileDir, 2, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	refDir := t.TempDir()
	refs, err := raftlog.NewSnapshotStore(raftlog.SnapshotConfig{Dir: refDir, Retain: 2, CommitLog: src, SegmentSize: fsmSegSize})
	if err != nil {
		t.Fatal(err)
	}
	defer refs.Close()

	fullID := takeSnapshot(t, f, files, index)
	refID := takeSnapshot(t, f, refs, index)
	cl := int64(src.MaxPhysicalOffset())
	fullSize, refSize := dirSize(t, fileDir), dirSize(t, refDir)
	t.Logf("CommitLog %d bytes; FileSnapshotStore snapshot dir %d bytes; CommitLog-aware snapshot dir %d bytes", cl, fullSize, refSize)
	if fullSize < cl || refSize > 4<<10 {
		t.Fatalf("full copy %d bytes, reference %d bytes, CommitLog %d", fullSize, refSize, cl)
	}

	full, stream := openAll(t, files, fullID), openAll(t, refs, refID)
	if !bytes.Equal(full, stream) {
		t.Fatalf("synthesized stream (%d bytes) differs from the full copy (%d bytes)", len(stream), len(full))
	}

	// Restore into an empty node: byte-identical CommitLog, same queues, same index.
	dstDir := t.TempDir()
	dst := openStore(t, dstDir)
	g := newFSM(t, dst, dstDir)
	_, rc, err := refs.Open(refID)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Restore(rc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(commitLog(t, dst), commitLog(t, src)) || g.AppliedIndex() != index {
		t.Fatalf("restored CommitLog differs (applied %d)", g.AppliedIndex())
	}
	if a, b := queueMax(t, dst), queueMax(t, src); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("queues %v, source %v", a, b)
	}
}

// TestReceivedSnapshotIsStagedThenRestored follows InstallSnapshot: the leader's
// stream is copied into a follower's Create sink (a staging file), which Open hands
// to fsm.Restore; the follower ends byte-identical, and with a tail-only image when
// the leader's retention already removed the head.
func TestReceivedSnapshotIsStagedThenRestored(t *testing.T) {
	srcDir := t.TempDir()
	src := openStore(t, srcDir)
	f := newFSM(t, src, srcDir)
	index := load(t, f, 300, 8)
	leader, err := raftlog.NewSnapshotStore(raftlog.SnapshotConfig{Dir: t.TempDir(), Retain: 2, CommitLog: src, SegmentSize: fsmSegSize})
	if err != nil {
		t.Fatal(err)
	}
	defer leader.Close()
	id := takeSnapshot(t, f, leader, index)
	// Retention on the leader (everything here is long expired) removes all but the
	// snapshot's last segment; the stream then starts there.
	for {
		n, err := src.CleanExpired(time.Now(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if src.MinPhysicalOffset() == 0 {
		t.Fatal("retention deleted nothing")
	}

	dstDir := t.TempDir()
	dst := openStore(t, dstDir)
	g := newFSM(t, dst, dstDir)
	follower, err := raftlog.NewSnapshotStore(raftlog.SnapshotConfig{Dir: t.TempDir(), Retain: 2, CommitLog: dst, SegmentSize: fsmSegSize})
	if err != nil {
		t.Fatal(err)
	}
	defer follower.Close()
	meta, rc, err := leader.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	sink, err := follower.Create(meta.Version, meta.Index, meta.Term, meta.Configuration, meta.ConfigurationIndex, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(sink, rc)
	_ = rc.Close()
	if err != nil || n != meta.Size {
		t.Fatalf("copied %d of %d: %v", n, meta.Size, err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	_, staged, err := follower.Open(sink.ID())
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Restore(staged); err != nil {
		t.Fatal(err)
	}
	if dst.MinPhysicalOffset() != src.MinPhysicalOffset() || !bytes.Equal(commitLog(t, dst), commitLog(t, src)) {
		t.Fatalf("follower CommitLog [%d, %d), leader [%d, %d)", dst.MinPhysicalOffset(), dst.MaxPhysicalOffset(), src.MinPhysicalOffset(), src.MaxPhysicalOffset())
	}
	// Both continue identically from the snapshot's index.
	more := func(f *fsm.FSM) {
		b, _ := fsm.Encode(nil, fsm.TopicUpsert{Topic: fsm.TopicConfig{Name: "U", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}})
		f.Apply(&raft.Log{Index: index + 1, Term: 1, Type: raft.LogCommand, Data: b})
	}
	more(f)
	more(g)
	if _, ok := g.Metadata().Topic("U"); !ok || g.AppliedIndex() != index+1 {
		t.Fatalf("follower after restore: applied %d", g.AppliedIndex())
	}
}
