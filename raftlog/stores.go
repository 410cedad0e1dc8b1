package raftlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	walfs "github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
	"go.etcd.io/bbolt"

	"github.com/rocketraft/rocketraft/store"
)

// LogStoreKind selects the LogStore implementation.
type LogStoreKind string

const (
	// LogStoreWAL is hashicorp/raft-wal: segment files, one fsync per batch. Default.
	LogStoreWAL LogStoreKind = "wal"
	// LogStoreBoltDB is hashicorp/raft-boltdb/v2: one bbolt B+tree file.
	LogStoreBoltDB LogStoreKind = "boltdb"
)

// Layout of a raft directory (see doc.go).
const (
	// WALDirName holds raft-wal's segment files and its wal-meta.db.
	WALDirName = "wal"
	// BoltLogFileName is the bbolt file of the boltdb LogStore.
	BoltLogFileName = "raft-log.db"
	// StableFileName is the bbolt file of the StableStore (term, vote).
	StableFileName = "stable.db"
	// LockFileName is flocked while the stores are open.
	LockFileName = "LOCK"
)

// boltOpenTimeout bounds bbolt's wait for its file lock. The directory LOCK
// already rules out a second owner; this is belt and braces so a stray process
// produces an error instead of a hang.
const boltOpenTimeout = time.Second

// ParseLogStoreKind maps a configuration value to a LogStoreKind; "" means the
// default, LogStoreWAL.
func ParseLogStoreKind(s string) (LogStoreKind, error) {
	switch k := LogStoreKind(s); k {
	case "":
		return LogStoreWAL, nil
	case LogStoreWAL, LogStoreBoltDB, LogStoreCommitLog:
		return k, nil
	default:
		return "", fmt.Errorf("log store kind %q (want %q, %q or %q): %w", s, LogStoreWAL, LogStoreBoltDB, LogStoreCommitLog, ErrUnknownLogStoreKind)
	}
}

// Stores is one raft node's durable state: its log and its stable store.
//
// Log and Stable are safe for concurrent use (raft calls them from several
// goroutines). Close must be called only after raft has shut down.
type Stores struct {
	// Log is the LogStore to hand to raft: the backend behind a logCache.
	// Every StoreLogs is fsynced before it returns.
	Log raft.LogStore
	// Stable holds raft's current term and vote; every Set is fsynced.
	Stable raft.StableStore
	// Kind is the backend behind Log.
	Kind LogStoreKind
	// timed counts the backend's writes (WriteStats).
	timed *timedLogStore
	// ls tracks the leader's deferred fsyncs (raft-wal and commitlog; nil for boltdb,
	// whose every write is fsynced before it returns).
	ls *leaderSync
	// entries is the commitlog kind's store (nil for the others): SetEntrySplitter.
	entries *entryLogStore
	// Dir is the directory the stores live in.
	Dir string

	// closers run in reverse order on Close; the last one closed is the lock.
	closers   []io.Closer
	closeOnce sync.Once
	closeErr  error
}

// OpenStores opens (creating if needed) the log and stable stores under dir.
// kind "" means LogStoreWAL. logger may be nil.
//
// The commitlog kind opened here keeps its entry log in a directory of its own
// (tests and benchmarks); a broker opens it on its Store's CommitLog with
// OpenStoresOnEntryLog.
func OpenStores(dir string, kind LogStoreKind, logger hclog.Logger) (*Stores, error) {
	return openStoresOn(dir, kind, nil, logger)
}

// OpenStoresOnEntryLog opens the commitlog kind (decision 0016) on el, the raft log a
// Store keeps in its CommitLog (store.Config.RaftEntryLog), and the stable store
// under dir. The Store owns el: close the Stores first.
func OpenStoresOnEntryLog(dir string, el *store.EntryLog, logger hclog.Logger) (*Stores, error) {
	if el == nil {
		return nil, fmt.Errorf("raftlog: open %s stores: the store has no entry log (store.Config.RaftEntryLog unset)", LogStoreCommitLog)
	}
	return openStoresWith(dir, LogStoreCommitLog, nil, el, logger)
}

// openStoresOn is OpenStores with raft-wal's segment files on vfs (nil = the real
// file system).
func openStoresOn(dir string, kind LogStoreKind, vfs types.VFS, logger hclog.Logger) (*Stores, error) {
	return openStoresWith(dir, kind, vfs, nil, logger)
}

// openStoresWith is openStoresOn with the commitlog kind on el when el is set.
func openStoresWith(dir string, kind LogStoreKind, vfs types.VFS, el *store.EntryLog, logger hclog.Logger) (*Stores, error) {
	kind = ResolveKind(dir, kind)
	var err error
	if kind, err = ParseLogStoreKind(string(kind)); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	logger = logger.Named("raftlog")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create raft dir %s: %w", dir, err)
	}
	lock, err := lockDir(filepath.Join(dir, LockFileName))
	if err != nil {
		return nil, err
	}
	s := &Stores{Kind: kind, Dir: dir, closers: []io.Closer{lock}}
	fail := func(err error) (*Stores, error) {
		_ = s.Close()
		return nil, err
	}
	if err := checkKind(dir, kind); err != nil {
		return fail(err)
	}

	backend, closer, ls, err := openLogBackend(dir, kind, vfs, el, logger)
	if err != nil {
		return fail(err)
	}
	s.closers = append(s.closers, closer)
	s.ls = ls
	s.entries, _ = backend.(*entryLogStore)
	s.timed = &timedLogStore{LogStore: backend}
	s.Log = newLogCache(s.timed, logCacheEntries, logCacheBytes)

	stablePath := filepath.Join(dir, StableFileName)
	stable, err := openBolt(stablePath)
	if err != nil {
		return fail(fmt.Errorf("open stable store %s: %w", stablePath, err))
	}
	s.closers = append(s.closers, stable)
	s.Stable = &stableStore{db: stable}

	// bbolt and raft-wal fsync their files but not the directory entries that
	// name them; without this a power cut right after the first vote could lose
	// stable.db as a whole on some file systems.
	if err := syncDir(dir); err != nil {
		return fail(err)
	}

	first, err := s.Log.FirstIndex()
	if err != nil {
		return fail(fmt.Errorf("read first index: %w", err))
	}
	last, err := s.Log.LastIndex()
	if err != nil {
		return fail(fmt.Errorf("read last index: %w", err))
	}
	logger.Info("opened raft stores", "dir", dir, "kind", kind, "first_index", first, "last_index", last)
	return s, nil
}

func openLogBackend(dir string, kind LogStoreKind, vfs types.VFS, el *store.EntryLog, logger hclog.Logger) (raft.LogStore, io.Closer, *leaderSync, error) {
	switch kind {
	case LogStoreWAL:
		walDir := filepath.Join(dir, WALDirName)
		if err := os.MkdirAll(walDir, 0o750); err != nil {
			return nil, nil, nil, fmt.Errorf("create wal dir %s: %w", walDir, err)
		}
		if vfs == nil {
			vfs = walfs.New()
		}
		ls := newLeaderSync()
		late := newLateDeleteFS(deferVFS{VFS: vfs, ls: ls}, logger)
		open := func(meta types.MetaStore) (*wal.WAL, error) {
			return wal.Open(walDir, wal.WithMetaStore(meta), wal.WithSegmentFiler(segment.NewFiler(walDir, late)), wal.WithLogger(logger.Named("wal")))
		}
		ws, err := newWALStore(open, ls, logger)
		if err != nil {
			_ = late.Close()
			return nil, nil, nil, fmt.Errorf("open wal %s: %w", walDir, err)
		}
		return ws, closeBoth{ws, late}, ls, nil
	case LogStoreCommitLog:
		if el != nil {
			s := newEntryLogStore(el, dir)
			return s, s, s.ls, nil
		}
		s, err := openEntryLogStore(dir, logger)
		if err != nil {
			return nil, nil, nil, err
		}
		return s, s, s.ls, nil
	case LogStoreBoltDB:
		path := filepath.Join(dir, BoltLogFileName)
		db, err := openBolt(path)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("open boltdb log %s: %w", path, err)
		}
		return db, db, nil, nil
	default:
		// ParseLogStoreKind ran first.
		panic(fmt.Sprintf("raftlog: unvalidated log store kind %q", kind))
	}
}

// closeBoth closes the WAL, then waits for its late segment deletions.
type closeBoth struct {
	wal  io.Closer
	late io.Closer
}

func (c closeBoth) Close() error { return errors.Join(c.wal.Close(), c.late.Close()) }

func openBolt(path string) (*raftboltdb.BoltStore, error) {
	return raftboltdb.New(raftboltdb.Options{
		Path:        path,
		BoltOptions: &bbolt.Options{Timeout: boltOpenTimeout},
		// Spelled out because it is the whole point: commit fsyncs.
		NoSync: false,
	})
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s for sync: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// Close closes the stores and releases the directory. It is idempotent.
func (s *Stores) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		for i := len(s.closers) - 1; i >= 0; i-- {
			if err := s.closers[i].Close(); err != nil {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil {
			s.closeErr = fmt.Errorf("close raft stores dir=%s: %w", s.Dir, err)
		}
	})
	return s.closeErr
}

// LogStoreAuto resolves (ResolveKind) to the kind of the raft state already in
// the directory, or to LogStoreCommitLog for a new node.
const LogStoreAuto LogStoreKind = "auto"

// ResolveKind returns kind, or for LogStoreAuto the kind that wrote the raft state
// in dir (raft-wal's directory, boltdb's log file, else the commitlog kind, whose
// log lives in the Store), or LogStoreCommitLog when dir holds no raft state.
func ResolveKind(dir string, kind LogStoreKind) LogStoreKind {
	if kind != LogStoreAuto {
		return kind
	}
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	switch {
	case !exists(StableFileName):
		return LogStoreCommitLog
	case exists(WALDirName):
		return LogStoreWAL
	case exists(BoltLogFileName):
		return LogStoreBoltDB
	}
	return LogStoreCommitLog
}

// checkKind refuses a directory whose raft state (stable store) was written with
// another log kind: raft-wal's directory, or boltdb's log file, is missing while
// the other is there, or either is there for the commitlog kind (its log lives in
// the Store's CommitLog, or in EntryLogDirName).
func checkKind(dir string, kind LogStoreKind) error {
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	if !exists(StableFileName) {
		return nil // a new node
	}
	found := map[LogStoreKind]bool{LogStoreWAL: exists(WALDirName), LogStoreBoltDB: exists(BoltLogFileName)}
	var other LogStoreKind
	switch {
	case kind == LogStoreCommitLog && found[LogStoreWAL]:
		other = LogStoreWAL
	case kind == LogStoreCommitLog && found[LogStoreBoltDB]:
		other = LogStoreBoltDB
	case kind != LogStoreCommitLog && !found[kind]:
		other = LogStoreCommitLog
		for k, ok := range found {
			if ok {
				other = k
			}
		}
	default:
		return nil
	}
	return fmt.Errorf("%w: %s holds a %s raft log, raftLogStore is %s (keep the old value, or wipe the node so it catches up from the leader)",
		ErrLogStoreMismatch, dir, other, kind)
}
