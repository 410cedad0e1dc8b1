package raftlog

import (
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// timedLogStore counts the writes of the backend under the log cache and
// the time they took: every StoreLogs is a write plus an fsync, so the mean
// is the raft log's fsync latency as the console charts it.
type timedLogStore struct {
	raft.LogStore
	writes, nanos atomic.Uint64
}

func (s *timedLogStore) StoreLog(log *raft.Log) error {
	return s.StoreLogs([]*raft.Log{log})
}

func (s *timedLogStore) StoreLogs(logs []*raft.Log) error {
	start := time.Now()
	err := s.LogStore.StoreLogs(logs)
	s.nanos.Add(uint64(time.Since(start)))
	s.writes.Add(1)
	return err
}

// IsMonotonic forwards raft.MonotonicLogStore (see the doc § LogStore).
func (s *timedLogStore) IsMonotonic() bool {
	m, ok := s.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

// WriteStats are the raft log's writes since the stores opened and their
// total time: each is one batch written and fsynced.
type WriteStats struct {
	Writes uint64
	Total  time.Duration
}

// WriteStats reads the counters (zero for stores opened without them).
func (s *Stores) WriteStats() WriteStats {
	if s.timed == nil {
		return WriteStats{}
	}
	return WriteStats{Writes: s.timed.writes.Load(), Total: time.Duration(s.timed.nanos.Load())}
}
