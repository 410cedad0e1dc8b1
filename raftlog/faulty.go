package raftlog

import (
	"fmt"
	"sync"

	"github.com/hashicorp/raft"
)

// FaultyLogStore wraps a raft.LogStore so a test can make StoreLogs fail on
// demand (a full or dying disk). It lives in the production package, not a
// _test file, because chaos scenario D1 (reliability-plan.md) runs it inside a
// real broker; it is a few lines, has no effect until FailStores is called, and
// nothing in production constructs it.
//
// Wrap the outermost store (Stores.Log, i.e. the cache), as the chaos scenario
// does: raft sees the injected error exactly as a failing disk would return it.
//
// Reads and deletes always pass through. Safe for concurrent use.
type FaultyLogStore struct {
	inner raft.LogStore

	mu sync.Mutex
	// failWith is non-nil while StoreLogs should fail.
	failWith error
	// injected counts StoreLogs calls refused since construction.
	injected uint64
}

var (
	_ raft.LogStore          = (*FaultyLogStore)(nil)
	_ raft.MonotonicLogStore = (*FaultyLogStore)(nil)
)

// NewFaultyLogStore wraps inner; it starts healthy.
func NewFaultyLogStore(inner raft.LogStore) *FaultyLogStore {
	return &FaultyLogStore{inner: inner}
}

// FailStores makes every later StoreLog/StoreLogs fail with err (wrapped), without
// touching the inner store. A nil err means ErrInjectedFault.
func (f *FaultyLogStore) FailStores(err error) {
	if err == nil {
		err = ErrInjectedFault
	}
	f.mu.Lock()
	f.failWith = err
	f.mu.Unlock()
}

// Heal makes StoreLogs reach the inner store again.
func (f *FaultyLogStore) Heal() {
	f.mu.Lock()
	f.failWith = nil
	f.mu.Unlock()
}

// InjectedFailures reports how many StoreLogs calls were refused, so a scenario
// can assert its fault was actually exercised.
func (f *FaultyLogStore) InjectedFailures() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// StoreLogs implements raft.LogStore.
func (f *FaultyLogStore) StoreLogs(logs []*raft.Log) error {
	f.mu.Lock()
	failWith := f.failWith
	if failWith != nil {
		f.injected++
	}
	f.mu.Unlock()
	if failWith != nil {
		var first uint64
		if len(logs) > 0 {
			first = logs[0].Index
		}
		return fmt.Errorf("store logs first=%d n=%d: %w", first, len(logs), failWith)
	}
	return f.inner.StoreLogs(logs)
}

// StoreLog implements raft.LogStore.
func (f *FaultyLogStore) StoreLog(log *raft.Log) error {
	return f.StoreLogs([]*raft.Log{log})
}

// FirstIndex implements raft.LogStore.
func (f *FaultyLogStore) FirstIndex() (uint64, error) { return f.inner.FirstIndex() }

// LastIndex implements raft.LogStore.
func (f *FaultyLogStore) LastIndex() (uint64, error) { return f.inner.LastIndex() }

// GetLog implements raft.LogStore.
func (f *FaultyLogStore) GetLog(index uint64, log *raft.Log) error {
	return f.inner.GetLog(index, log)
}

// DeleteRange implements raft.LogStore.
func (f *FaultyLogStore) DeleteRange(min, max uint64) error { return f.inner.DeleteRange(min, max) }

// IsMonotonic forwards raft.MonotonicLogStore. Dropping it would be a real bug:
// raft-wal refuses gaps, and raft only deletes the whole log after installing a
// snapshot when the store says it is monotonic.
func (f *FaultyLogStore) IsMonotonic() bool {
	m, ok := f.inner.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}
