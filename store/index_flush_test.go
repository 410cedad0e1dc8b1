package store

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// indexFiles lists the IndexFile paths under dir (the checkpoint excluded).
func indexFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.Name() != indexCheckpointName {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// queryAll is every offset key k of topic T maps to, oldest first.
func queryAll(t *testing.T, s *Store, key string) []PhysicalOffset {
	t.Helper()
	got, err := s.QueryByKey("T", key, 1000, 0, 1<<62)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// TestReindexRebuildsIndexAboveItsCheckpoint: the ConsumeQueue checkpoint is ahead
// of the IndexFile one (the index is flushed every IndexFlushInterval only) and
// everything the index wrote above its checkpoint was lost in a crash, slot table
// and entries alike. Recovery cuts the index to its checkpoint and indexes the
// CommitLog again up to where dispatch resumes: every key finds every message
// once, and a recovery with nothing lost adds no duplicate.
func TestReindexRebuildsIndexAboveItsCheckpoint(t *testing.T) {
	for _, torn := range []bool{false, true} {
		t.Run(fmt.Sprintf("torn=%v", torn), func(t *testing.T) {
			dir := t.TempDir()
			src := newFakeLog(1 << 20)
			o := testOpts{entriesPerFile: 100, hashSlots: 8, maxEntries: 200}
			s := openDQ(t, dir, src, o)
			var offs []PhysicalOffset
			put := func(i int) {
				off, _ := src.append(t, testMsg{topic: "T", queue: int32(i % 2), keys: fmt.Sprintf("all u%d", i), uniq: fmt.Sprintf("U%04d", i), body: "x", ts: int64(1000 + i)})
				offs = append(offs, off)
			}
			for i := range 10 {
				put(i)
			}
			syncDispatch(t, s, src)
			if err := s.cq.flush(); err != nil {
				t.Fatal(err)
			}
			if err := s.index.flush(false); err != nil {
				t.Fatal(err)
			}
			// The index file as its checkpoint left it: what a crash restores.
			files := indexFiles(t, filepath.Join(dir, "index"))
			if len(files) != 1 {
				t.Fatalf("index files %v", files)
			}
			atCheckpoint, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			for i := 10; i < 25; i++ {
				put(i)
			}
			syncDispatch(t, s, src)
			if err := s.cq.flush(); err != nil { // the ConsumeQueues move on, the index does not
				t.Fatal(err)
			}
			closeDQ(s)
			if cq, _ := s.cq.checkpoint(); cq != src.maxOffset() {
				t.Fatalf("consumequeue checkpoint %d, want %d", cq, src.maxOffset())
			}
			if idx, _ := s.index.checkpoint(); idx != offs[10] {
				t.Fatalf("index checkpoint %d, want %d", idx, offs[10])
			}
			if torn {
				if err := os.WriteFile(files[0], atCheckpoint, 0o644); err != nil {
					t.Fatal(err)
				}
			}

			s2 := openDQ(t, dir, src, o)
			if got := queryAll(t, s2, "all"); !slices.Equal(got, offs) {
				t.Fatalf("key all: %v, want %v", got, offs)
			}
			for i, off := range offs {
				for _, k := range []string{fmt.Sprintf("u%d", i), fmt.Sprintf("U%04d", i)} {
					if got := queryAll(t, s2, k); !slices.Equal(got, []PhysicalOffset{off}) {
						t.Fatalf("key %s: %v, want [%d]", k, got, off)
					}
				}
			}
			if m := s2.MaxQueueOffset("T", 0) + s2.MaxQueueOffset("T", 1); m != 25 {
				t.Fatalf("queues hold %d messages, want 25", m)
			}
			// Indexing goes on after the rebuilt entries.
			put(25)
			syncDispatch(t, s2, src)
			if got := queryAll(t, s2, "u25"); !slices.Equal(got, []PhysicalOffset{offs[25]}) {
				t.Fatalf("key u25: %v", got)
			}
		})
	}
}

// keyedRecords are n records of topic T whose KEYS are "all" and "k<seed+i>".
func keyedRecords(t *testing.T, n, seed int) [][]byte {
	t.Helper()
	recs := make([][]byte, n)
	for i := range recs {
		m := Message{Topic: "T", QueueID: int32(i % 2), Body: []byte("body"), BornTimestamp: 1700000000000,
			BornHost: netip.MustParseAddrPort("10.0.0.1:1234"), StoreHost: netip.MustParseAddrPort("10.0.0.2:10911"),
			Properties: EncodeProperties(map[string]string{PropertyKeys: fmt.Sprintf("all k%d", seed+i)})}
		rec, err := AppendMessage(nil, &m)
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = rec
	}
	return recs
}

// appendAndFlush appends recs, waits for the reput to index them and flushes the
// store; it returns the offset the flush made durable.
func appendAndFlush(t *testing.T, s *Store, recs [][]byte, ts int64) PhysicalOffset {
	t.Helper()
	mustAppend(t, s, recs, ts)
	waitDispatched(t, s, s.MaxPhysicalOffset())
	flushed, err := s.Flush()
	if err != nil {
		t.Fatal(err)
	}
	return flushed
}

// TestIndexFlushedOnItsOwnInterval: a store's flush syncs the ConsumeQueues every
// time and the IndexFiles only every IndexFlushInterval and at Close; a crash in
// between loses nothing a query finds.
func TestIndexFlushedOnItsOwnInterval(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.IndexFlushInterval = time.Hour
	s := openTest(t, cfg)
	first := appendAndFlush(t, s, keyedRecords(t, 10, 0), 1000) // the first flush is due: nothing flushed the index yet
	second := appendAndFlush(t, s, keyedRecords(t, 10, 10), 2000)
	if cq, _ := s.cq.checkpoint(); cq != second {
		t.Fatalf("consumequeue checkpoint %d, want %d", cq, second)
	}
	if idx, _ := s.index.checkpoint(); idx != first {
		t.Fatalf("index checkpoint %d after a flush within the interval, want %d (the first flush)", idx, first)
	}
	crash(s)

	s = openTest(t, cfg)
	if got := queryAll(t, s, "all"); len(got) != 20 {
		t.Fatalf("key all finds %d messages after the crash, want 20: %v", len(got), got)
	}
	if got := queryAll(t, s, "k15"); len(got) != 1 {
		t.Fatalf("key k15: %v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if idx, _ := s.index.checkpoint(); idx != second {
		t.Fatalf("index checkpoint %d after Close, want %d", idx, second)
	}

	// A negative interval flushes the index with every flush, as before.
	cfg.IndexFlushInterval = -1
	s = openTest(t, cfg)
	defer s.Close()
	third := appendAndFlush(t, s, keyedRecords(t, 5, 20), 3000)
	if idx, _ := s.index.checkpoint(); idx != third {
		t.Fatalf("index checkpoint %d with IndexFlushInterval<0, want %d", idx, third)
	}
}

// TestWriteBackEntriesFollowsTheEntries: between index flushes the flusher hands
// the entries appended since its last call to the kernel, and after a cut it goes
// on from the cut, not from beyond it (which would skip the rewritten entries).
func TestWriteBackEntriesFollowsTheEntries(t *testing.T) {
	dir := t.TempDir()
	src := newFakeLog(1 << 20)
	s := openDQ(t, dir, src, testOpts{entriesPerFile: 100, hashSlots: 8, maxEntries: 200})
	var offs []PhysicalOffset
	put := func(n int) {
		for range n {
			off, _ := src.append(t, testMsg{topic: "T", queue: 0, keys: "k", body: "x", ts: 1000})
			offs = append(offs, off)
		}
		syncDispatch(t, s, src)
	}
	started := func() int {
		t.Helper()
		if err := s.index.writeBack(); err != nil {
			t.Fatal(err)
		}
		files := s.index.snapshot()
		if len(files) != 1 {
			t.Fatalf("%d index files", len(files))
		}
		if f := files[0]; f.startedEntries != f.count() {
			t.Fatalf("write-back started %d entries, the file holds %d", f.startedEntries, f.count())
		}
		return files[0].startedEntries
	}
	put(10)
	if n := started(); n != 11 { // entry 0 is unused
		t.Fatalf("started %d, want 11", n)
	}
	if err := s.dispatcher.truncate(offs[4]); err != nil {
		t.Fatal(err)
	}
	if n := started(); n != 5 {
		t.Fatalf("after the cut: started %d, want 5", n)
	}
	src.truncate(t, offs[4])
	offs = offs[:4]
	put(3)
	if n := started(); n != 8 {
		t.Fatalf("after three more: started %d, want 8", n)
	}
}
