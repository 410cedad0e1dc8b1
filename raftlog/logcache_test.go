package raftlog

import (
	"errors"
	"testing"

	"github.com/hashicorp/raft"
)

// countingStore is an in-memory LogStore that counts the reads reaching it.
type countingStore struct {
	*raft.InmemStore
	gets     int
	failNext error
}

func (s *countingStore) GetLog(idx uint64, l *raft.Log) error {
	s.gets++
	return s.InmemStore.GetLog(idx, l)
}

func (s *countingStore) StoreLogs(logs []*raft.Log) error {
	if err := s.failNext; err != nil {
		s.failNext = nil
		return err
	}
	return s.InmemStore.StoreLogs(logs)
}

func entries(from, to uint64, size int) []*raft.Log {
	var out []*raft.Log
	for i := from; i <= to; i++ {
		out = append(out, &raft.Log{Index: i, Term: 1, Data: make([]byte, size)})
	}
	return out
}

// cached reports whether idx is answered without reaching the backend, and
// checks the entry is the right one either way.
func cached(t *testing.T, c *logCache, b *countingStore, idx uint64) bool {
	t.Helper()
	before := b.gets
	var l raft.Log
	if err := c.GetLog(idx, &l); err != nil {
		t.Fatalf("GetLog(%d): %v", idx, err)
	}
	if l.Index != idx {
		t.Fatalf("GetLog(%d) returned index %d", idx, l.Index)
	}
	return b.gets == before
}

func TestLogCacheBoundsEntriesAndBytes(t *testing.T) {
	b := &countingStore{InmemStore: raft.NewInmemStore()}
	c := newLogCache(b, 4, 1000)
	// Count bound: 6 entries of 100 bytes through a 4-entry cache keep 3..6.
	if err := c.StoreLogs(entries(1, 6, 100)); err != nil {
		t.Fatal(err)
	}
	for idx, want := range map[uint64]bool{1: false, 2: false, 3: true, 6: true} {
		if got := cached(t, c, b, idx); got != want {
			t.Errorf("count bound: index %d cached=%v, want %v", idx, got, want)
		}
	}
	// Byte bound: 400-byte entries, 1000 bytes: only the two newest stay.
	if err := c.StoreLogs(entries(7, 9, 400)); err != nil {
		t.Fatal(err)
	}
	if c.bytes > 1000 {
		t.Fatalf("cached %d bytes, bound 1000", c.bytes)
	}
	for idx, want := range map[uint64]bool{6: false, 7: false, 8: true, 9: true} {
		if got := cached(t, c, b, idx); got != want {
			t.Errorf("byte bound: index %d cached=%v, want %v", idx, got, want)
		}
	}
	// An entry above the byte bound is stored but never cached; the run
	// starts again after it.
	if err := c.StoreLogs(entries(10, 11, 2000)); err != nil {
		t.Fatal(err)
	}
	if err := c.StoreLogs(entries(12, 12, 10)); err != nil {
		t.Fatal(err)
	}
	for idx, want := range map[uint64]bool{9: false, 10: false, 11: false, 12: true} {
		if got := cached(t, c, b, idx); got != want {
			t.Errorf("oversized entries: index %d cached=%v, want %v", idx, got, want)
		}
	}
}

func TestLogCacheDeleteRangeAndGaps(t *testing.T) {
	b := &countingStore{InmemStore: raft.NewInmemStore()}
	c := newLogCache(b, 8, 1<<20)
	if err := c.StoreLogs(entries(1, 14, 10)); err != nil { // cached: 7..14
		t.Fatal(err)
	}
	// Compaction below the cached run keeps it.
	if err := c.DeleteRange(1, 5); err != nil {
		t.Fatal(err)
	}
	if !cached(t, c, b, 7) || !cached(t, c, b, 14) {
		t.Fatal("a compaction below the cached entries dropped them")
	}
	// A follower's conflicting suffix: deleted entries must not be served
	// from the cache, and the rewritten ones must be the new term's.
	if err := c.DeleteRange(13, 14); err != nil {
		t.Fatal(err)
	}
	var l raft.Log
	if err := c.GetLog(14, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog(14) after its deletion: %v, want ErrLogNotFound", err)
	}
	rewritten := entries(13, 14, 10)
	for _, e := range rewritten {
		e.Term = 2
	}
	if err := c.StoreLogs(rewritten); err != nil {
		t.Fatal(err)
	}
	if !cached(t, c, b, 14) {
		t.Fatal("rewritten entry not cached")
	}
	if err := c.GetLog(14, &l); err != nil || l.Term != 2 {
		t.Fatalf("GetLog(14) = term %d, %v; want the rewritten term 2", l.Term, err)
	}
	// A gap (a snapshot installed past the log) starts a new run.
	if err := c.StoreLogs(entries(100, 101, 10)); err != nil {
		t.Fatal(err)
	}
	if cached(t, c, b, 14) || !cached(t, c, b, 100) || !cached(t, c, b, 101) {
		t.Fatal("after a gap: want only the new run cached")
	}
	// A failed store caches nothing and returns the backend's error as it is.
	boom := errors.New("disk on fire")
	b.failNext = boom
	if err := c.StoreLogs(entries(102, 102, 10)); !errors.Is(err, boom) {
		t.Fatalf("StoreLogs error = %v, want the backend's", err)
	}
	if err := c.GetLog(102, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog of a failed store: %v, want ErrLogNotFound", err)
	}
}
