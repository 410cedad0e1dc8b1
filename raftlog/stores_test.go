package raftlog

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// testLogger logs at Warn and above through t.Log, and drops lines written after
// the test ended (raft-wal's rotation goroutine can outlive a failed test).
func testLogger(t testing.TB) hclog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Warn, Output: w})
}

type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(string(p))
	}
	return len(p), nil
}

func openStores(t *testing.T, dir string, kind LogStoreKind) *Stores {
	t.Helper()
	s, err := OpenStores(dir, kind, testLogger(t))
	if err != nil {
		t.Fatalf("OpenStores(%q): %v", kind, err)
	}
	return s
}

func TestParseLogStoreKind(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want LogStoreKind
		err  error
	}{
		{"", LogStoreWAL, nil},
		{"wal", LogStoreWAL, nil},
		{"boltdb", LogStoreBoltDB, nil},
		{"commitlog", LogStoreCommitLog, nil},
		{"bolt", "", ErrUnknownLogStoreKind},
		{"WAL", "", ErrUnknownLogStoreKind},
	} {
		got, err := ParseLogStoreKind(tc.in)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("ParseLogStoreKind(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
	if _, err := OpenStores(t.TempDir(), "rocksdb", nil); !errors.Is(err, ErrUnknownLogStoreKind) {
		t.Fatalf("OpenStores(rocksdb) err = %v, want ErrUnknownLogStoreKind", err)
	}
}

func TestOpenStoresLayout(t *testing.T) {
	for _, tc := range []struct {
		kind    LogStoreKind
		present []string
		absent  []string
	}{
		{"", []string{WALDirName, StableFileName, LockFileName}, []string{BoltLogFileName}},
		{LogStoreWAL, []string{WALDirName, StableFileName, LockFileName}, []string{BoltLogFileName}},
		{LogStoreBoltDB, []string{BoltLogFileName, StableFileName, LockFileName}, []string{WALDirName}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "raft")
			s := openStores(t, dir, tc.kind)
			defer s.Close()
			want := tc.kind
			if want == "" {
				want = LogStoreWAL
			}
			if s.Kind != want || s.Dir != dir {
				t.Fatalf("Stores kind=%q dir=%q, want %q %q", s.Kind, s.Dir, want, dir)
			}
			for _, name := range tc.present {
				if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
					t.Errorf("%s missing: %v", name, err)
				}
			}
			for _, name := range tc.absent {
				if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists (err=%v), want absent", name, err)
				}
			}
			if _, ok := s.Log.(*logCache); !ok {
				t.Fatalf("Stores.Log is %T, want *logCache", s.Log)
			}
			// raft-wal refuses gaps; raft must know, through the cache.
			mono, ok := s.Log.(raft.MonotonicLogStore)
			if gotMono := ok && mono.IsMonotonic(); gotMono != (want == LogStoreWAL) {
				t.Fatalf("IsMonotonic = %v for %s", gotMono, want)
			}
		})
	}
}

func TestOpenStoresLocksDir(t *testing.T) {
	dir := t.TempDir()
	s := openStores(t, dir, LogStoreWAL)
	if _, err := OpenStores(dir, LogStoreWAL, nil); !errors.Is(err, ErrDirLocked) {
		t.Fatalf("second OpenStores err = %v, want ErrDirLocked", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	s2 := openStores(t, dir, LogStoreWAL)
	if err := s2.Close(); err != nil {
		t.Fatalf("Close after reopen: %v", err)
	}
}

func TestStableStoreContract(t *testing.T) {
	for _, kind := range []LogStoreKind{LogStoreWAL, LogStoreBoltDB} {
		t.Run(string(kind), func(t *testing.T) {
			dir := t.TempDir()
			s := openStores(t, dir, kind)

			// Missing keys on a fresh store: what raft reads before its first election.
			v, err := s.Stable.GetUint64([]byte("CurrentTerm"))
			if v != 0 || err != nil {
				t.Fatalf("GetUint64(missing) = %d, %v; want 0, nil", v, err)
			}
			b, err := s.Stable.Get([]byte("LastVoteCand"))
			if b != nil || !errors.Is(err, ErrKeyNotFound) {
				t.Fatalf("Get(missing) = %q, %v; want nil, ErrKeyNotFound", b, err)
			}
			// raft v1.7.3 compares the text, not the value.
			if err.Error() != "not found" {
				t.Fatalf("Get(missing) err text = %q, raft needs exactly \"not found\"", err.Error())
			}

			if err := s.Stable.SetUint64([]byte("CurrentTerm"), 7); err != nil {
				t.Fatal(err)
			}
			if err := s.Stable.Set([]byte("LastVoteCand"), []byte("node-2")); err != nil {
				t.Fatal(err)
			}
			if err := s.Stable.Set([]byte("short"), []byte{1, 2, 3}); err != nil {
				t.Fatal(err)
			}
			if err := s.Stable.Set([]byte("empty"), []byte{}); err != nil {
				t.Fatal(err)
			}
			check := func() {
				t.Helper()
				if v, err := s.Stable.GetUint64([]byte("CurrentTerm")); v != 7 || err != nil {
					t.Fatalf("GetUint64(CurrentTerm) = %d, %v; want 7", v, err)
				}
				if b, err := s.Stable.Get([]byte("LastVoteCand")); string(b) != "node-2" || err != nil {
					t.Fatalf("Get(LastVoteCand) = %q, %v; want node-2", b, err)
				}
				// raft-boltdb would panic here; we report corruption instead.
				if _, err := s.Stable.GetUint64([]byte("short")); !errors.Is(err, ErrCorruptStableValue) {
					t.Fatalf("GetUint64(3-byte value) err = %v, want ErrCorruptStableValue", err)
				}
				// A key set to an empty value exists: not "not found".
				if b, err := s.Stable.Get([]byte("empty")); err != nil || len(b) != 0 {
					t.Fatalf("Get(empty) = %q, %v; want empty, nil", b, err)
				}
			}
			check()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openStores(t, dir, kind)
			defer s.Close()
			check()
			if err := s.Stable.SetUint64([]byte("CurrentTerm"), 8); err != nil {
				t.Fatal(err)
			}
			if v, _ := s.Stable.GetUint64([]byte("CurrentTerm")); v != 8 {
				t.Fatalf("overwritten CurrentTerm = %d, want 8", v)
			}
		})
	}
}

// A fresh directory must look like "no state" to raft, and a store with a term
// must look like existing state: this is what decides whether the broker
// bootstraps the cluster.
func TestHasExistingState(t *testing.T) {
	for _, kind := range []LogStoreKind{LogStoreWAL, LogStoreBoltDB} {
		t.Run(string(kind), func(t *testing.T) {
			s := openStores(t, t.TempDir(), kind)
			defer s.Close()
			snaps := raft.NewInmemSnapshotStore()
			has, err := raft.HasExistingState(s.Log, s.Stable, snaps)
			if err != nil || has {
				t.Fatalf("fresh HasExistingState = %v, %v; want false, nil", has, err)
			}
			if err := s.Stable.SetUint64([]byte("CurrentTerm"), 1); err != nil {
				t.Fatal(err)
			}
			has, err = raft.HasExistingState(s.Log, s.Stable, snaps)
			if err != nil || !has {
				t.Fatalf("after term HasExistingState = %v, %v; want true, nil", has, err)
			}
		})
	}
}

// TestOpenStoresRefusesAnotherKind: a node's raft state cannot be reopened with
// another log kind: the new kind's log would be empty next to an applied state.
func TestOpenStoresRefusesAnotherKind(t *testing.T) {
	for _, tc := range []struct{ wrote, open LogStoreKind }{
		{LogStoreWAL, LogStoreBoltDB},
		{LogStoreWAL, LogStoreCommitLog},
		{LogStoreBoltDB, LogStoreWAL},
		{LogStoreCommitLog, LogStoreWAL},
		{LogStoreCommitLog, LogStoreBoltDB},
	} {
		t.Run(string(tc.wrote)+"-"+string(tc.open), func(t *testing.T) {
			dir := t.TempDir()
			s, err := OpenStores(dir, tc.wrote, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Stable.SetUint64([]byte("CurrentTerm"), 3); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if s, err := OpenStores(dir, tc.open, nil); !errors.Is(err, ErrLogStoreMismatch) {
				if err == nil {
					_ = s.Close()
				}
				t.Fatalf("reopen as %s: err = %v, want ErrLogStoreMismatch", tc.open, err)
			}
			s, err = OpenStores(dir, tc.wrote, nil) // the same kind still opens
			if err != nil {
				t.Fatalf("reopen as %s: %v", tc.wrote, err)
			}
			_ = s.Close()
		})
	}
}

// TestResolveKind: auto keeps the kind a node's raft state was written with, and
// picks the commitlog kind for a new node; any other kind is kept as given.
func TestResolveKind(t *testing.T) {
	for _, kind := range []LogStoreKind{LogStoreWAL, LogStoreBoltDB, LogStoreCommitLog} {
		dir := t.TempDir()
		if got := ResolveKind(dir, LogStoreAuto); got != LogStoreCommitLog {
			t.Fatalf("auto on a new node = %s, want commitlog", got)
		}
		s, err := OpenStores(dir, kind, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if got := ResolveKind(dir, LogStoreAuto); got != kind {
			t.Fatalf("auto on raft state written as %s = %s", kind, got)
		}
		if got := ResolveKind(dir, LogStoreBoltDB); got != LogStoreBoltDB {
			t.Fatalf("an explicit kind was resolved to %s", got)
		}
	}
}
