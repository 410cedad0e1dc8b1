package raftlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/store"
)

// snapSegSize is small so a modest CommitLog spans many segments.
const snapSegSize = 8 << 10

func openSnapTestStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(store.Config{
		Dir: t.TempDir(), CommitLogSegmentSize: snapSegSize, ConsumeQueueEntriesPerFile: 256,
		IndexHashSlots: 64, IndexMaxEntries: 256, Logger: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// fillStore appends n messages of about size bytes each, stored at ts (old enough to
// have expired for retention).
func fillStore(t *testing.T, st *store.Store, n, size int, ts int64) {
	t.Helper()
	if err := appendMessages(st, n, size, ts); err != nil {
		t.Fatal(err)
	}
}

func appendMessages(st *store.Store, n, size int, ts int64) error {
	host := netip.MustParseAddrPort("10.0.0.1:10911")
	for i := 0; i < n; i++ {
		m := store.Message{Topic: "T", QueueID: int32(i % 2), BornTimestamp: ts, BornHost: host, StoreHost: host,
			Body: bytes.Repeat([]byte{byte('a' + i%26)}, size)}
		rec, err := store.AppendMessage(nil, &m)
		if err != nil {
			return err
		}
		if _, err := st.AppendBatch([][]byte{rec}, ts); err != nil {
			return err
		}
	}
	return nil
}

func newTestSnapStore(t *testing.T, dir string, cl CommitLog, retain int) *SnapshotStore {
	t.Helper()
	s, err := NewSnapshotStore(SnapshotConfig{Dir: dir, Retain: retain, CommitLog: cl, SegmentSize: snapSegSize, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

var testConfiguration = raft.Configuration{Servers: []raft.Server{{ID: "a", Address: "a:1"}, {ID: "b", Address: "b:1"}}}

// persistRange writes a range snapshot the way fsm.Persist does: prefix, then range.
func persistRange(t *testing.T, s *SnapshotStore, index uint64, prefix []byte, from, to store.PhysicalOffset) string {
	t.Helper()
	sink, err := s.Create(raft.SnapshotVersionMax, index, 3, testConfiguration, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Write(prefix); err != nil {
		t.Fatal(err)
	}
	if err := sink.(interface {
		WriteCommitLogRange(from, to store.PhysicalOffset) error
	}).WriteCommitLogRange(from, to); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	return sink.ID()
}

func persistStream(t *testing.T, s *SnapshotStore, index uint64, data []byte) string {
	t.Helper()
	sink, err := s.Create(raft.SnapshotVersionMax, index, 3, testConfiguration, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	return sink.ID()
}

func readAll(t *testing.T, s *SnapshotStore, id string) (*raft.SnapshotMeta, []byte) {
	t.Helper()
	meta, rc, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != meta.Size {
		t.Fatalf("snapshot %s streamed %d bytes, meta.Size %d", id, len(b), meta.Size)
	}
	return meta, b
}

func commitLogBytes(t *testing.T, st *store.Store, from, to store.PhysicalOffset) []byte {
	t.Helper()
	var out []byte
	if err := st.ReadRange(from, to, func(c []byte) error { out = append(out, c...); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantStream is the stream a range snapshot must produce from start.
func wantStream(t *testing.T, st *store.Store, prefix []byte, start, to store.PhysicalOffset) []byte {
	out := binary.BigEndian.AppendUint64(bytes.Clone(prefix), uint64(to-start))
	out = append(out, commitLogBytes(t, st, start, to)...)
	return binary.BigEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

func ids(metas []*raft.SnapshotMeta) []string {
	var out []string
	for _, m := range metas {
		out = append(out, m.ID)
	}
	return out
}

func TestSnapshotStoreContract(t *testing.T) {
	st := openSnapTestStore(t)
	fillStore(t, st, 60, 500, 1700000000000)
	dir := t.TempDir()
	s := newTestSnapStore(t, dir, st, 2)
	prefix := []byte("PREFIX-header-json")
	to := st.MaxPhysicalOffset()

	if metas, err := s.List(); err != nil || len(metas) != 0 {
		t.Fatalf("empty store lists %v %v", metas, err)
	}
	id1 := persistRange(t, s, 10, prefix, 0, to)
	id2 := persistStream(t, s, 20, []byte("received stream bytes"))
	metas, err := s.List()
	if err != nil || len(metas) != 2 || metas[0].ID != id2 || metas[1].ID != id1 {
		t.Fatalf("list %v %v, want [%s %s]", ids(metas), err, id2, id1)
	}
	if m := metas[1]; m.Index != 10 || m.Term != 3 || m.ConfigurationIndex != 1 || len(m.Configuration.Servers) != 2 ||
		m.Size != int64(len(prefix))+rangeTrailer+int64(to) {
		t.Fatalf("range meta %+v", m)
	}

	t.Run("open range streams prefix, CommitLog and CRC", func(t *testing.T) {
		_, got := readAll(t, s, id1)
		if want := wantStream(t, st, prefix, 0, to); !bytes.Equal(got, want) {
			t.Fatalf("stream of %d bytes differs from the expected %d", len(got), len(want))
		}
	})
	t.Run("open received stream returns its bytes", func(t *testing.T) {
		if _, got := readAll(t, s, id2); string(got) != "received stream bytes" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("open unknown", func(t *testing.T) {
		for _, id := range []string{"nope", "../x", id1 + snapshotTmpExt, ""} {
			if _, _, err := s.Open(id); !errors.Is(err, ErrSnapshotNotFound) {
				t.Errorf("open %q: %v", id, err)
			}
		}
	})
	t.Run("reap keeps the newest retain", func(t *testing.T) {
		id3 := persistRange(t, s, 30, prefix, 0, to)
		metas, _ := s.List()
		if got := ids(metas); len(got) != 2 || got[0] != id3 || got[1] != id2 {
			t.Fatalf("after a third snapshot: %v, want [%s %s]", got, id3, id2)
		}
		if _, err := os.Stat(filepath.Join(dir, id1)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("reaped snapshot still on disk: %v", err)
		}
	})
	t.Run("cancel leaves nothing", func(t *testing.T) {
		sink, err := s.Create(raft.SnapshotVersionMax, 40, 3, testConfiguration, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = sink.Write([]byte("partial"))
		if err := sink.Cancel(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, sink.ID()+snapshotTmpExt)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("cancelled snapshot left files: %v", err)
		}
		if metas, _ := s.List(); len(metas) != 2 || metas[0].Index != 30 {
			t.Fatalf("list after cancel: %v", ids(metas))
		}
	})
	t.Run("misuse", func(t *testing.T) {
		sink, err := s.Create(raft.SnapshotVersionMax, 41, 3, testConfiguration, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer sink.Cancel()
		rs := sink.(*snapshotSink)
		if err := rs.WriteCommitLogRange(0, to); err != nil {
			t.Fatal(err)
		}
		if _, err := sink.Write([]byte("x")); !errors.Is(err, ErrSnapshotSinkMisuse) {
			t.Errorf("write after range: %v", err)
		}
		if err := rs.WriteCommitLogRange(0, to); !errors.Is(err, ErrSnapshotSinkMisuse) {
			t.Errorf("second range: %v", err)
		}
	})
}

func TestSnapshotStoreCrashLeftoversAndReopen(t *testing.T) {
	st := openSnapTestStore(t)
	fillStore(t, st, 60, 500, 1700000000000) // several segments
	dir := t.TempDir()
	s := newTestSnapStore(t, dir, st, 3)
	id := persistRange(t, s, 5, []byte("P"), 0, st.MaxPhysicalOffset())

	// A crash mid-Create leaves a .tmp directory; one mid-rename cannot exist (rename
	// is atomic). A directory with broken metadata is not a snapshot either.
	sink, err := s.Create(raft.SnapshotVersionMax, 9, 3, testConfiguration, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = sink.Write([]byte("half"))
	tmp := filepath.Join(dir, sink.ID()+snapshotTmpExt)
	if err := os.MkdirAll(filepath.Join(dir, "3-7-1"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "3-7-1", snapshotMetaFile), []byte("{torn"), 0o640); err != nil {
		t.Fatal(err)
	}
	if metas, err := s.List(); err != nil || len(metas) != 1 || metas[0].ID != id {
		t.Fatalf("list with leftovers: %v %v", ids(metas), err)
	}

	s2 := newTestSnapStore(t, dir, st, 3) // "restart"
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unfinished snapshot survived a reopen: %v", err)
	}
	metas, err := s2.List()
	if err != nil || len(metas) != 1 || metas[0].ID != id {
		t.Fatalf("list after reopen: %v %v", ids(metas), err)
	}
	if _, got := readAll(t, s2, id); !bytes.Equal(got, wantStream(t, st, []byte("P"), 0, st.MaxPhysicalOffset())) {
		t.Fatal("reopened snapshot streams other bytes")
	}
	// The reopened store pins the retained snapshot's last segment again.
	if s2.referenced(st.MaxPhysicalOffset()-1) != true || s2.referenced(0) {
		t.Fatalf("keepFrom after reopen %d", s2.keepFrom.Load())
	}
}

func TestSnapshotStoreDetectsDamagedFiles(t *testing.T) {
	st := openSnapTestStore(t)
	fillStore(t, st, 10, 200, 1700000000000)
	dir := t.TempDir()
	s := newTestSnapStore(t, dir, st, 5)
	rid := persistRange(t, s, 1, []byte("PREFIX"), 0, st.MaxPhysicalOffset())
	sid := persistStream(t, s, 2, []byte("a received snapshot"))
	for _, id := range []string{rid, sid} {
		p := filepath.Join(dir, id, snapshotDataFile)
		b, _ := os.ReadFile(p)
		b[2] ^= 1
		if err := os.WriteFile(p, b, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Open(rid); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Errorf("open damaged range prefix: %v", err)
	}
	_, rc, err := s.Open(sid)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.ReadAll(rc); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Errorf("read damaged received snapshot: %v", err)
	}
}

// cleanAll runs retention until it deletes nothing more (everything stored here is
// long expired, and the disk is reported full so the hour does not matter).
func cleanAll(t *testing.T, st *store.Store) int {
	t.Helper()
	total := 0
	for {
		n, err := st.CleanExpired(time.Now(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return total
		}
		total += n
	}
}

func TestRetentionGuard(t *testing.T) {
	st := openSnapTestStore(t)
	fillStore(t, st, 200, 500, 1700000000000) // ~110 KiB: ~14 segments
	s := newTestSnapStore(t, t.TempDir(), st, 2)
	prefix := []byte("PREFIX")
	to := st.MaxPhysicalOffset()
	id := persistRange(t, s, 10, prefix, 0, to)
	fillStore(t, st, 100, 500, 1700000000000) // the log grows past the snapshot

	t.Run("an open stream keeps every segment it reads", func(t *testing.T) {
		_, rc, err := s.Open(id)
		if err != nil {
			t.Fatal(err)
		}
		first := make([]byte, len(prefix)+8+100)
		if _, err := io.ReadFull(rc, first); err != nil {
			t.Fatal(err)
		}
		if n := cleanAll(t, st); n != 0 || st.MinPhysicalOffset() != 0 {
			t.Fatalf("retention deleted %d segments (min %d) under an open stream", n, st.MinPhysicalOffset())
		}
		rest, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		if got := append(first, rest...); !bytes.Equal(got, wantStream(t, st, prefix, 0, to)) {
			t.Fatal("stream differs")
		}
		if err := rc.Close(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("closed, the head goes but the snapshot's last segment stays", func(t *testing.T) {
		n := cleanAll(t, st)
		lastSeg := (to - 1) / snapSegSize * snapSegSize
		if n == 0 || st.MinPhysicalOffset() != lastSeg {
			t.Fatalf("retention deleted %d segments, min %d, want min %d (the segment of offset %d)", n, st.MinPhysicalOffset(), lastSeg, to-1)
		}
		// The snapshot now streams the tail the store still has, and says so in Size.
		meta, got := readAll(t, s, id)
		if want := wantStream(t, st, prefix, lastSeg, to); !bytes.Equal(got, want) || meta.Size != int64(len(want)) {
			t.Fatalf("tail stream %d bytes (meta %d), want %d", len(got), meta.Size, len(want))
		}
	})
	t.Run("reaped, nothing is pinned", func(t *testing.T) {
		persistStream(t, s, 20, []byte("x"))
		persistStream(t, s, 30, []byte("y"))
		if _, _, err := s.Open(id); !errors.Is(err, ErrSnapshotNotFound) {
			t.Fatalf("open reaped: %v", err)
		}
		if n := cleanAll(t, st); n == 0 {
			t.Fatal("retention still blocked after the snapshot was reaped")
		}
	})
}

func TestOpenFailsWhenTheRangeIsGone(t *testing.T) {
	st := openSnapTestStore(t)
	fillStore(t, st, 50, 500, 1700000000000)
	s := newTestSnapStore(t, t.TempDir(), st, 2)
	// A range beyond the store's end (as after a reset that cut the store back).
	id := persistRange(t, s, 10, []byte("P"), 0, st.MaxPhysicalOffset()+snapSegSize)
	if _, _, err := s.Open(id); !errors.Is(err, ErrSnapshotRangeGone) {
		t.Fatalf("open: %v", err)
	}
	if s.keepFrom.Load() == 0 {
		t.Fatal("a failed Open left its stream pin behind")
	}
}

func TestSnapshotIDsAreUnique(t *testing.T) {
	st := openSnapTestStore(t)
	s := newTestSnapStore(t, t.TempDir(), st, 10)
	seen := map[string]bool{}
	for i := 0; i < 5; i++ {
		id := persistStream(t, s, 7, []byte(fmt.Sprint(i)))
		if seen[id] || !strings.HasPrefix(id, "3-7-") {
			t.Fatalf("id %q (seen %v)", id, seen)
		}
		seen[id] = true
	}
}

// TestStreamWhileAppendingAndCleaning streams a range snapshot while the CommitLog
// grows and retention runs continuously: the stream is complete and exact, and
// retention still deletes the head once the stream is closed.
func TestStreamWhileAppendingAndCleaning(t *testing.T) {
	st := openSnapTestStore(t)
	fillStore(t, st, 200, 500, 1700000000000)
	s := newTestSnapStore(t, t.TempDir(), st, 2)
	prefix := []byte("PREFIX")
	to := st.MaxPhysicalOffset()
	id := persistRange(t, s, 10, prefix, 0, to)
	want := wantStream(t, st, prefix, 0, to)

	_, rc, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if err := appendMessages(st, 5, 500, 1700000000000); err != nil {
				errc <- err
				return
			}
			if _, err := st.CleanExpired(time.Now(), 1); err != nil {
				errc <- err
				return
			}
		}
	}()
	var got []byte
	buf := make([]byte, 777) // odd size: reads straddle segment ends and the trailer
	for {
		n, err := rc.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("stream of %d bytes, want %d", len(got), len(want))
	}
	if st.MinPhysicalOffset() != 0 {
		t.Fatalf("retention deleted up to %d under an open stream", st.MinPhysicalOffset())
	}
	_ = rc.Close()
	if cleanAll(t, st) == 0 || st.MinPhysicalOffset() > (to-1)/snapSegSize*snapSegSize {
		t.Fatalf("after close: min %d, snapshot's last segment starts at %d", st.MinPhysicalOffset(), (to-1)/snapSegSize*snapSegSize)
	}
}

// TestReadsFileSnapshotStoreSnapshots: a node upgraded from raft's FileSnapshotStore
// (which kept <dir>/snapshots/<id>) keeps its snapshots; raft would otherwise see
// none while its log is compacted.
func TestReadsFileSnapshotStoreSnapshots(t *testing.T) {
	dir := t.TempDir()
	old, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	_, trans := raft.NewInmemTransport("")
	sink, err := old.Create(raft.SnapshotVersionMax, 12, 2, testConfiguration, 1, trans)
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("old snapshot "), 1000)
	if _, err := sink.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	st := openSnapTestStore(t)
	s := newTestSnapStore(t, dir, st, 2)
	if _, err := os.Stat(filepath.Join(dir, legacySubdir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("legacy directory left behind: %v", err)
	}
	metas, err := s.List()
	if err != nil || len(metas) != 1 || metas[0].ID != sink.ID() || metas[0].Index != 12 || metas[0].Size != int64(len(body)) {
		t.Fatalf("list %v %v", ids(metas), err)
	}
	if _, got := readAll(t, s, sink.ID()); !bytes.Equal(got, body) {
		t.Fatal("legacy snapshot streams other bytes")
	}
	// Newer snapshots reap it like any other.
	persistStream(t, s, 20, []byte("a"))
	persistStream(t, s, 30, []byte("b"))
	if _, _, err := s.Open(sink.ID()); !errors.Is(err, ErrSnapshotNotFound) {
		t.Fatalf("legacy snapshot not reaped: %v", err)
	}
}
