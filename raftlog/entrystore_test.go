package raftlog

import (
	"testing"

	"github.com/hashicorp/raft"
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
