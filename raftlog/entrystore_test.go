package raftlog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/store"
)

// raft counts a replica once StoreLogs returns, so every batch must be synced by then
// (doc.go, "Durability").
func TestEntryLogStoreSyncsEveryBatch(t *testing.T) {
	s, err := openEntryLogStore(t.TempDir(), testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	next := uint64(1)
	for b, n := range []int{1, 7, 64, 3} {
		if err := s.StoreLogs(makeLogs(next, next+uint64(n)-1, 1, 100*(b+1))); err != nil {
			t.Fatal(err)
		}
		if u := s.log.Unsynced(); u != 0 {
			t.Fatalf("batch %d: %d bytes unsynced after StoreLogs returned", b, u)
		}
		next += uint64(n)
	}
	if err := s.StoreLog(makeLog(next, 2, 10)); err != nil {
		t.Fatal(err)
	}
	if u := s.log.Unsynced(); u != 0 {
		t.Fatalf("%d bytes unsynced after StoreLog returned", u)
	}
}

// raft never removes a range from the middle of its log; the store refuses one
// rather than leave a hole.
func TestEntryLogStoreRefusesAMiddleRange(t *testing.T) {
	s, err := openEntryLogStore(t.TempDir(), testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storeLogs(t, s, makeLogs(1, 10, 1, 32))
	if err := s.DeleteRange(4, 6); err == nil {
		t.Fatal("DeleteRange(4, 6) of [1, 10] succeeded")
	}
	requireBounds(t, s, 1, 10)
	for i := uint64(1); i <= 10; i++ {
		requireLog(t, s, makeLog(i, 1, 32))
	}
	// A zero-time AppendedAt and no extensions round-trip as such.
	l := &raft.Log{Index: 11, Term: 1, Type: raft.LogNoop}
	storeLogs(t, s, []*raft.Log{l})
	requireLog(t, s, l)
}

// testSplitter splits data of the form "SPLIT" | u32 n | n × (u32 len | record), the
// shape of fsm's PutMessages, for a test that cannot import fsm.
var testSplitter = EntrySplitter{
	Split: func(data []byte) ([]byte, [][]byte, int64, bool) {
		if !bytes.HasPrefix(data, []byte("SPLIT")) || len(data) < 9 {
			return nil, nil, 0, false
		}
		n := binary.BigEndian.Uint32(data[5:])
		p := data[9:]
		var recs [][]byte
		for range n {
			l := binary.BigEndian.Uint32(p)
			recs = append(recs, p[4:4+l])
			p = p[4+l:]
		}
		return data[:5], recs, testSplitTs, true
	},
	Join: func(dst, head []byte, recs [][]byte) []byte {
		dst = append(dst, head...)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(recs)))
		for _, r := range recs {
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(r)))
			dst = append(dst, r...)
		}
		return dst
	},
}

const testSplitTs = 1_700_000_000_777

func splitData(t *testing.T, index uint64, n int) []byte {
	t.Helper()
	var recs [][]byte
	for k := range n {
		m := store.Message{Topic: "T", QueueID: int32(k), Body: fmt.Appendf(nil, "entry %d record %d", index, k),
			BornHost: netip.MustParseAddrPort("10.0.0.1:1"), StoreHost: netip.MustParseAddrPort("10.0.0.2:2"), StoreTimestamp: testSplitTs}
		rec, err := store.AppendMessage(nil, &m)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return testSplitter.Join([]byte{}, []byte("SPLIT"), recs)
}

// With a splitter, a command's records are stored as CommitLog records after the
// entry record, and GetLog joins them back: the same bytes, except PHYSICALOFFSET,
// which the log writes. Other entries, and entries stored before the splitter was
// set, stay whole and read back as they were.
func TestEntryLogStoreSplitsMessageBatches(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStores(dir, LogStoreCommitLog, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	before := makeLog(1, 1, 64)
	before.Data = splitData(t, 1, 2) // stored whole: no splitter yet
	storeLogs(t, s.Log, []*raft.Log{before})
	s.SetEntrySplitter(testSplitter)
	want := []*raft.Log{before}
	for i := uint64(2); i <= 9; i++ {
		l := makeLog(i, 1, 32)
		if i%3 != 0 {
			l.Data = splitData(t, i, int(i%4)+1)
		}
		want = append(want, l)
	}
	want[5].Type = raft.LogConfiguration
	want[5].Data = splitData(t, 6, 2) // not a command: never split
	storeLogs(t, s.Log, want[1:])

	check := func(s *Stores) {
		t.Helper()
		es := s.entries
		for _, w := range want {
			e, err := es.log.Get(w.Index)
			if err != nil {
				t.Fatal(err)
			}
			split := w.Index != 1 && w.Type == raft.LogCommand && bytes.HasPrefix(w.Data, []byte("SPLIT"))
			if split != (len(e.Records) > 0) {
				t.Fatalf("entry %d: %d records stored, want split=%v", w.Index, len(e.Records), split)
			}
			var got raft.Log
			if err := es.GetLog(w.Index, &got); err != nil {
				t.Fatal(err)
			}
			wantData := bytes.Clone(w.Data)
			if split {
				if e.StoreTimestamp != testSplitTs {
					t.Fatalf("entry %d: store timestamp %d, want the splitter's %d", w.Index, e.StoreTimestamp, testSplitTs)
				}
				_, recs, _, _ := testSplitter.Split(wantData)
				for k, r := range recs {
					store.PatchOffsets(r, 0, store.PhysicalOffsetOf(e.Records[k]))
				}
			}
			if got.Index != w.Index || got.Term != w.Term || got.Type != w.Type || !bytes.Equal(got.Data, wantData) ||
				!bytes.Equal(got.Extensions, w.Extensions) || !got.AppendedAt.IsZero() {
				t.Fatalf("GetLog(%d) differs from what was stored (data %d bytes, want %d)", w.Index, len(got.Data), len(wantData))
			}
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenStores(dir, LogStoreCommitLog, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetEntrySplitter(testSplitter)
	check(s)
}

// TestEntryLogBootstrapEntryDoesNotShiftOffsets: each node appends entry 1 (the
// bootstrap configuration) itself, naming the others as it dials them, so its data
// differs between nodes, even in length. The entry logs of two such nodes fed the
// same later entries still hold identical bytes (every later record at the same
// offset), and each returns its own entry 1.
func TestEntryLogBootstrapEntryDoesNotShiftOffsets(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	boot := []*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: []byte("n0=10.0.0.1:7000,n1=self:7000")},
		{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: []byte("n0=proxy-for-n0.example:17000,n1=10.0.0.2:7000")},
	}
	for i, dir := range dirs {
		s, err := OpenStores(dir, LogStoreCommitLog, nil)
		if err != nil {
			t.Fatal(err)
		}
		storeLogs(t, s.Log, []*raft.Log{boot[i]})
		storeLogs(t, s.Log, makeLogs(2, 40, 1, 300))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s, err = OpenStores(dir, LogStoreCommitLog, nil) // entry 1 survives a restart
		if err != nil {
			t.Fatal(err)
		}
		requireLog(t, s.Log, boot[i])
		requireLog(t, s.Log, makeLog(40, 1, 300))
		_ = s.Close()
	}
	segs := func(dir string) []byte {
		files, err := filepath.Glob(filepath.Join(dir, EntryLogDirName, "0*"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no entry log segments in %s (%v)", dir, err)
		}
		var all []byte
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		return all
	}
	if !bytes.Equal(segs(dirs[0]), segs(dirs[1])) {
		t.Fatal("the entry logs differ: entry 1's node-local data reached the CommitLog")
	}
}
