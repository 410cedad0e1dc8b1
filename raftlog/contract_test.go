package raftlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
)

// openLogFunc opens (or reopens) a LogStore in dir. The store must implement
// io.Closer; the contract closes it before reopening and registers nothing else.
type openLogFunc func(t *testing.T, dir string) raft.LogStore

// closableLog adds Close to a store that lacks it (the cached wrapper).
type closableLog struct {
	raft.LogStore
	io.Closer
}

// openBackend opens the uncached backend exactly as OpenStores builds it.
func openBackend(kind LogStoreKind) openLogFunc {
	return func(t *testing.T, dir string) raft.LogStore {
		t.Helper()
		s, _, _, err := openLogBackend(dir, kind, nil, nil, testLogger(t))
		if err != nil {
			t.Fatalf("open %s backend: %v", kind, err)
		}
		return s
	}
}

func openCached(kind LogStoreKind) openLogFunc {
	return func(t *testing.T, dir string) raft.LogStore {
		t.Helper()
		s, err := OpenStores(dir, kind, testLogger(t))
		if err != nil {
			t.Fatalf("OpenStores(%s): %v", kind, err)
		}
		return closableLog{LogStore: s.Log, Closer: s}
	}
}

func TestLogStoreContract(t *testing.T) {
	impls := []struct {
		name string
		open openLogFunc
	}{
		{"wal", openBackend(LogStoreWAL)},
		{"boltdb", openBackend(LogStoreBoltDB)},
		{"cached-wal", openCached(LogStoreWAL)},
		{"cached-boltdb", openCached(LogStoreBoltDB)},
		{"commitlog", openBackend(LogStoreCommitLog)},
		{"cached-commitlog", openCached(LogStoreCommitLog)},
	}
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) { runLogStoreContract(t, impl.open) })
	}
}

// runLogStoreContract is what raft needs of a LogStore, run against every one we
// can hand it.
func runLogStoreContract(t *testing.T, open openLogFunc) {
	// Each case gets a fresh directory and store; reopen closes and reopens it.
	type env struct {
		t     *testing.T
		dir   string
		store raft.LogStore
	}
	closeStore := func(e *env) {
		e.t.Helper()
		c, ok := e.store.(io.Closer)
		if !ok {
			e.t.Fatalf("store %T does not implement io.Closer", e.store)
		}
		if err := c.Close(); err != nil {
			e.t.Fatalf("close: %v", err)
		}
	}
	reopen := func(e *env) {
		e.t.Helper()
		closeStore(e)
		e.store = open(e.t, e.dir)
	}
	run := func(name string, body func(e *env)) {
		t.Run(name, func(t *testing.T) {
			e := &env{t: t, dir: t.TempDir()}
			e.store = open(t, e.dir)
			t.Cleanup(func() {
				if c, ok := e.store.(io.Closer); ok {
					_ = c.Close()
				}
			})
			body(e)
		})
	}

	run("empty", func(e *env) {
		requireBounds(e.t, e.store, 0, 0)
		requireNotFound(e.t, e.store, 0)
		requireNotFound(e.t, e.store, 1)
		reopen(e)
		requireBounds(e.t, e.store, 0, 0)
	})

	run("store and get", func(e *env) {
		if err := e.store.StoreLog(makeLog(1, 1, 10)); err != nil {
			e.t.Fatalf("StoreLog: %v", err)
		}
		if err := e.store.StoreLogs(makeLogs(2, 10, 1, 100)); err != nil {
			e.t.Fatalf("StoreLogs: %v", err)
		}
		requireBounds(e.t, e.store, 1, 10)
		requireLog(e.t, e.store, makeLog(1, 1, 10))
		for i := uint64(2); i <= 10; i++ {
			requireLog(e.t, e.store, makeLog(i, 1, 100))
		}
		requireNotFound(e.t, e.store, 0)
		requireNotFound(e.t, e.store, 11)
		// An empty batch is a no-op, not an error.
		if err := e.store.StoreLogs(nil); err != nil {
			e.t.Fatalf("StoreLogs(nil): %v", err)
		}
		requireBounds(e.t, e.store, 1, 10)
	})

	run("delete front then back then append", func(e *env) {
		storeLogs(e.t, e.store, makeLogs(1, 20, 1, 64))
		// Compaction after a snapshot: raft deletes [first, snapshotIndex-trailing].
		if err := e.store.DeleteRange(1, 5); err != nil {
			e.t.Fatalf("DeleteRange front: %v", err)
		}
		requireBounds(e.t, e.store, 6, 20)
		requireNotFound(e.t, e.store, 5)
		requireNotFound(e.t, e.store, 1)
		requireLog(e.t, e.store, makeLog(6, 1, 64))

		// A follower truncating a conflicting suffix: raft deletes [conflict, last].
		if err := e.store.DeleteRange(15, 20); err != nil {
			e.t.Fatalf("DeleteRange back: %v", err)
		}
		requireBounds(e.t, e.store, 6, 14)
		requireNotFound(e.t, e.store, 15)
		requireLog(e.t, e.store, makeLog(14, 1, 64))

		// The new leader's entries replace the deleted suffix.
		storeLogs(e.t, e.store, makeLogs(15, 25, 2, 32))
		requireBounds(e.t, e.store, 6, 25)
		for i := uint64(15); i <= 25; i++ {
			requireLog(e.t, e.store, makeLog(i, 2, 32))
		}

		reopen(e)
		requireBounds(e.t, e.store, 6, 25)
		requireNotFound(e.t, e.store, 5)
		requireLog(e.t, e.store, makeLog(6, 1, 64))
		requireLog(e.t, e.store, makeLog(14, 1, 64))
		requireLog(e.t, e.store, makeLog(15, 2, 32))
		requireLog(e.t, e.store, makeLog(25, 2, 32))
	})

	run("delete all then append past a gap", func(e *env) {
		// After installing a snapshot raft empties a monotonic store and appends
		// from snapshotIndex+1; a boltdb store sees the same calls.
		storeLogs(e.t, e.store, makeLogs(1, 10, 1, 8))
		if err := e.store.DeleteRange(1, 10); err != nil {
			e.t.Fatalf("DeleteRange all: %v", err)
		}
		requireBounds(e.t, e.store, 0, 0)
		storeLogs(e.t, e.store, makeLogs(101, 110, 3, 8))
		requireBounds(e.t, e.store, 101, 110)
		requireNotFound(e.t, e.store, 100)
		requireNotFound(e.t, e.store, 10)
		reopen(e)
		requireBounds(e.t, e.store, 101, 110)
		requireLog(e.t, e.store, makeLog(101, 3, 8))
	})

	run("reopen keeps everything", func(e *env) {
		want := makeLogs(1, 50, 4, 200)
		want[7].Type = raft.LogConfiguration
		want[8].Type = raft.LogBarrier
		storeLogs(e.t, e.store, want)
		reopen(e)
		requireBounds(e.t, e.store, 1, 50)
		for _, l := range want {
			requireLog(e.t, e.store, l)
		}
		// Still writable after reopen.
		storeLogs(e.t, e.store, makeLogs(51, 51, 4, 1))
		requireBounds(e.t, e.store, 1, 51)
	})

	run("large entries", func(e *env) {
		const mib = 1 << 20
		storeLogs(e.t, e.store, makeLogs(1, 3, 1, mib))
		storeLogs(e.t, e.store, makeLogs(4, 4, 1, mib))
		for i := uint64(1); i <= 4; i++ {
			requireLog(e.t, e.store, makeLog(i, 1, mib))
		}
		reopen(e)
		for i := uint64(1); i <= 4; i++ {
			requireLog(e.t, e.store, makeLog(i, 1, mib))
		}
	})

	run("many batches", func(e *env) {
		const batches, per = 300, 7
		next := uint64(1)
		for b := 0; b < batches; b++ {
			storeLogs(e.t, e.store, makeLogs(next, next+per-1, uint64(b/50+1), 16+b))
			next += per
		}
		last := next - 1
		requireBounds(e.t, e.store, 1, last)
		check := func() {
			for b := 0; b < batches; b += 37 {
				first := uint64(b*per + 1)
				requireLog(e.t, e.store, makeLog(first, uint64(b/50+1), 16+b))
				requireLog(e.t, e.store, makeLog(first+per-1, uint64(b/50+1), 16+b))
			}
		}
		check()
		reopen(e)
		requireBounds(e.t, e.store, 1, last)
		check()
	})
}

// makeLog builds a deterministic entry: its Data is derived from index, term and
// size so a read returning the wrong entry (or a stale cached one) is caught.
func makeLog(index, term uint64, size int) *raft.Log {
	data := make([]byte, size)
	seed := fmt.Appendf(nil, "%d/%d|", index, term)
	for i := range data {
		data[i] = seed[i%len(seed)]
	}
	return &raft.Log{
		Index:      index,
		Term:       term,
		Type:       raft.LogCommand,
		Data:       data,
		Extensions: fmt.Appendf(nil, "ext-%d", index),
		AppendedAt: time.Unix(1_700_000_000, int64(index)).UTC(),
	}
}

func makeLogs(first, last, term uint64, size int) []*raft.Log {
	logs := make([]*raft.Log, 0, last-first+1)
	for i := first; i <= last; i++ {
		logs = append(logs, makeLog(i, term, size))
	}
	return logs
}

func storeLogs(t *testing.T, s raft.LogStore, logs []*raft.Log) {
	t.Helper()
	if err := s.StoreLogs(logs); err != nil {
		t.Fatalf("StoreLogs [%d,%d]: %v", logs[0].Index, logs[len(logs)-1].Index, err)
	}
}

func requireBounds(t *testing.T, s raft.LogStore, first, last uint64) {
	t.Helper()
	gotFirst, err := s.FirstIndex()
	if err != nil {
		t.Fatalf("FirstIndex: %v", err)
	}
	gotLast, err := s.LastIndex()
	if err != nil {
		t.Fatalf("LastIndex: %v", err)
	}
	if gotFirst != first || gotLast != last {
		t.Fatalf("bounds = [%d,%d], want [%d,%d]", gotFirst, gotLast, first, last)
	}
}

// requireNotFound pins the exact error: raft's replication checks
// err == raft.ErrLogNotFound (no errors.Is) to decide to send a snapshot.
func requireNotFound(t *testing.T, s raft.LogStore, index uint64) {
	t.Helper()
	var l raft.Log
	err := s.GetLog(index, &l)
	if !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog(%d) err = %v, want raft.ErrLogNotFound", index, err)
	}
	if err != raft.ErrLogNotFound { //nolint:errorlint // raft compares with ==.
		t.Fatalf("GetLog(%d) err = %#v, want raft.ErrLogNotFound itself, not wrapped", index, err)
	}
}

func requireLog(t *testing.T, s raft.LogStore, want *raft.Log) {
	t.Helper()
	var got raft.Log
	if err := s.GetLog(want.Index, &got); err != nil {
		t.Fatalf("GetLog(%d): %v", want.Index, err)
	}
	if got.Index != want.Index || got.Term != want.Term || got.Type != want.Type {
		t.Fatalf("GetLog(%d) = index %d term %d type %v, want index %d term %d type %v",
			want.Index, got.Index, got.Term, got.Type, want.Index, want.Term, want.Type)
	}
	if !bytes.Equal(got.Data, want.Data) {
		t.Fatalf("GetLog(%d) data differs (len %d, want %d)", want.Index, len(got.Data), len(want.Data))
	}
	if !bytes.Equal(got.Extensions, want.Extensions) {
		t.Fatalf("GetLog(%d) extensions = %q, want %q", want.Index, got.Extensions, want.Extensions)
	}
	if !keepsAppendedAt(s) {
		// The zero time, or (from a cache in front of it) the time given.
		if !got.AppendedAt.IsZero() && !got.AppendedAt.Equal(want.AppendedAt) {
			t.Fatalf("GetLog(%d) AppendedAt = %v from a store that does not keep it", want.Index, got.AppendedAt)
		}
		return
	}
	if !got.AppendedAt.Equal(want.AppendedAt) {
		t.Fatalf("GetLog(%d) AppendedAt = %v, want %v", want.Index, got.AppendedAt, want.AppendedAt)
	}
}

// TestRawWALHeadTruncationLeak pins the raft-wal v0.4.2 behaviour walStore
// corrects. If this fails after an upgrade, raft-wal fixed it and walStore's
// GetLog bounds check can go.
func TestRawWALHeadTruncationLeak(t *testing.T) {
	w, err := wal.Open(t.TempDir(), wal.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	storeLogs(t, w, makeLogs(1, 10, 1, 8))
	if err := w.DeleteRange(1, 5); err != nil {
		t.Fatal(err)
	}
	requireBounds(t, w, 6, 10)
	var l raft.Log
	if err := w.GetLog(3, &l); err != nil || l.Index != 3 {
		t.Fatalf("raw raft-wal GetLog(3) after deleting [1,5] = index %d, %v; "+
			"expected the upstream leak (entry still returned)", l.Index, err)
	}
	// Past the end it is raft's own sentinel, unwrapped.
	requireNotFound(t, w, 11)
}

// The raw boltdb store is what the cached wrapper sits on; pin that its
// LogStore errors need no translation (checked above) and that its StableStore
// "not found" is the text raft tolerates, which is why we only wrap the latter
// for GetUint64.
func TestRawBoltStableNotFound(t *testing.T) {
	db, err := openBolt(filepath.Join(t.TempDir(), StableFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Get([]byte("missing")); err == nil || err.Error() != "not found" {
		t.Fatalf("raft-boltdb Get(missing) err = %v, want text \"not found\"", err)
	}
	if v, err := db.GetUint64([]byte("missing")); v != 0 || err == nil || err.Error() != "not found" {
		t.Fatalf("raft-boltdb GetUint64(missing) = %d, %v; want 0, \"not found\"", v, err)
	}
	if raftboltdb.ErrKeyNotFound.Error() != ErrKeyNotFound.Error() {
		t.Fatalf("raft-boltdb ErrKeyNotFound text %q differs from ours %q", raftboltdb.ErrKeyNotFound, ErrKeyNotFound)
	}
}

// keepsAppendedAt looks through the wrappers OpenStores puts in front of a backend.
func keepsAppendedAt(s raft.LogStore) bool {
	for {
		switch w := s.(type) {
		case interface{ keepsAppendedAt() bool }:
			return w.keepsAppendedAt()
		case closableLog:
			s = w.LogStore
		case *logCache:
			s = w.LogStore
		case *timedLogStore:
			s = w.LogStore
		default:
			return true
		}
	}
}
