package raftlog

import (
	"testing"

	"github.com/hashicorp/raft"
)

// TestWriteStatsCountEveryBatch: each StoreLogs through the cache reaches the
// backend once and is counted with its time, and the wrapper keeps raft-wal's
// monotonic promise visible to raft.
func TestWriteStatsCountEveryBatch(t *testing.T) {
	for _, kind := range []LogStoreKind{LogStoreWAL, LogStoreBoltDB} {
		t.Run(string(kind), func(t *testing.T) {
			s, err := OpenStores(t.TempDir(), kind, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if ws := s.WriteStats(); ws.Writes != 0 || ws.Total != 0 {
				t.Fatalf("fresh stores: %+v", ws)
			}
			batch := []*raft.Log{{Index: 1, Term: 1, Data: []byte("a")}, {Index: 2, Term: 1, Data: []byte("b")}}
			if err := s.Log.StoreLogs(batch); err != nil {
				t.Fatal(err)
			}
			if err := s.Log.StoreLog(&raft.Log{Index: 3, Term: 1, Data: []byte("c")}); err != nil {
				t.Fatal(err)
			}
			if ws := s.WriteStats(); ws.Writes != 2 || ws.Total <= 0 {
				t.Fatalf("after two writes: %+v", ws)
			}
			m, ok := s.Log.(raft.MonotonicLogStore)
			if want := kind == LogStoreWAL; !ok || m.IsMonotonic() != want {
				t.Fatalf("IsMonotonic through the wrapper: ok=%v, want %v", ok, want)
			}
		})
	}
}
