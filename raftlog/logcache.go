package raftlog

import (
	"fmt"
	"sync"

	"github.com/hashicorp/raft"
)

// Log cache bounds. Replication to a follower that keeps up asks for the
// entries stored a moment ago: with group commit's entries of ~70 KiB under
// an async load and pipelined AppendEntries of at most 64 entries, a few MiB
// of the newest entries serve it from memory. A follower further behind (a
// restart, a partition) reads the log from disk, as it would from
// raft.LogCache once its ring wrapped.
const (
	logCacheEntries = 512
	logCacheBytes   = 8 << 20
)

// logCache keeps the newest raft entries in memory in front of a LogStore,
// bounded by entry count and by the bytes of their Data.
//
// It replaces raft.LogCache, whose ring of 512 entries pins 512 × the largest
// entry: up to 2 GiB with group commit's 4 MiB entries, and ~35 MiB of 70 KiB
// ones under the async benchmark, live heap that every GC cycle retraces and
// that doubles the RSS sawtooth of a follower, whose cache nobody reads until
// it leads.
//
// The cached entries are a contiguous run of indexes [first, first+len):
// StoreLogs appends to it (starting a new run if the logs do not follow on),
// GetLog answers from it, DeleteRange clears it. Errors of the backend are
// returned as they are (raft.LogCache flattened them to text).
//
// Safe for concurrent use; raft calls it from its main and replication
// goroutines.
type logCache struct {
	raft.LogStore

	maxEntries int
	maxBytes   int

	mu sync.RWMutex
	// ring holds the cached entries: the entry of index first+i is
	// ring[(head+i)%len(ring)] for i < n.
	ring  []*raft.Log
	head  int
	n     int
	first uint64
	bytes int // sum of len(Data) over the cached entries
}

var _ raft.MonotonicLogStore = (*logCache)(nil)

func newLogCache(store raft.LogStore, maxEntries, maxBytes int) *logCache {
	return &logCache{LogStore: store, maxEntries: maxEntries, maxBytes: maxBytes, ring: make([]*raft.Log, maxEntries)}
}

// IsMonotonic forwards the backend's answer: raft-wal refuses gaps, and raft
// must know so to reset the log when it installs a snapshot (raftlog/doc.go).
func (c *logCache) IsMonotonic() bool {
	m, ok := c.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

// GetLog answers from the cache when it holds idx, else from the backend.
func (c *logCache) GetLog(idx uint64, log *raft.Log) error {
	c.mu.RLock()
	if idx >= c.first && idx-c.first < uint64(c.n) {
		*log = *c.ring[(c.head+int(idx-c.first))%len(c.ring)]
		c.mu.RUnlock()
		return nil
	}
	c.mu.RUnlock()
	return c.LogStore.GetLog(idx, log)
}

// StoreLog stores one entry.
func (c *logCache) StoreLog(log *raft.Log) error { return c.StoreLogs([]*raft.Log{log}) }

// StoreLogs stores logs in the backend and, once they are stored, caches them.
func (c *logCache) StoreLogs(logs []*raft.Log) error {
	if err := c.LogStore.StoreLogs(logs); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range logs {
		c.appendLocked(l)
	}
	return nil
}

func (c *logCache) appendLocked(l *raft.Log) {
	if c.n > 0 && l.Index != c.first+uint64(c.n) {
		c.clearLocked() // not the next index: start a new run
	}
	if len(l.Data) > c.maxBytes {
		return // never cached; the entry after it starts a new run
	}
	for c.n == c.maxEntries || (c.n > 0 && c.bytes+len(l.Data) > c.maxBytes) {
		c.dropOldestLocked()
	}
	if c.n == 0 {
		c.first = l.Index
	}
	c.ring[(c.head+c.n)%len(c.ring)] = l
	c.n++
	c.bytes += len(l.Data)
}

func (c *logCache) dropOldestLocked() {
	c.bytes -= len(c.ring[c.head].Data)
	c.ring[c.head] = nil
	c.head = (c.head + 1) % len(c.ring)
	c.n--
	c.first++
}

func (c *logCache) clearLocked() {
	clear(c.ring)
	c.head, c.n, c.first, c.bytes = 0, 0, 0, 0
}

// DeleteRange drops the cached entries when [lo, hi] touches them, then
// deletes from the backend. raft deletes a compacted prefix (far below the
// cached newest entries, which stay) or a follower's conflicting suffix
// (after which the next StoreLogs starts a new run).
func (c *logCache) DeleteRange(lo, hi uint64) error {
	c.mu.Lock()
	if c.n > 0 && hi >= c.first && lo < c.first+uint64(c.n) {
		c.clearLocked()
	}
	c.mu.Unlock()
	if err := c.LogStore.DeleteRange(lo, hi); err != nil {
		return fmt.Errorf("delete raft log range [%d, %d]: %w", lo, hi, err)
	}
	return nil
}
