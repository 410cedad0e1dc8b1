package raftlog

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/types"
)

// walStore is raft-wal with one correction: GetLog of an index below FirstIndex
// returns raft.ErrLogNotFound.
//
// raft-wal v0.4.2 head truncation (DeleteRange from the front) updates MinIndex
// in its segment map but not in the open tail segment's writer, and GetLog asks
// the tail writer first; so until the tail is sealed, GetLog of a compacted index
// still returns the old entry. The entry is committed and correct, but raft's
// replication relies on ErrLogNotFound there to switch a lagging follower to a
// snapshot, and the contract (TestLogStoreContract) says deleted means gone.
// TestRawWALHeadTruncationLeak pins the upstream behaviour so an upgrade that
// fixes it is noticed.
//
// raft-wal already returns raft.ErrLogNotFound itself (types.ErrNotFound is the
// same variable) for indexes past the end and in deleted sealed segments.
//
// And one repair: a segment rotation that failed leaves raft-wal wedged until
// the process restarts. raft-wal v0.4.2 rotates in the background once the tail
// fills; if creating the next segment file fails (ENOSPC while preallocating
// it: chaos D5), it only logs the error, keeps the sealed tail as its tail, and
// every later StoreLogs fails with types.ErrSealed — for good, even after the
// disk has room again. StoreLogs treats ErrSealed as that wedge: it closes the
// WAL and opens it again, whose recovery creates the missing segment (raft-wal
// committed it to its metadata before trying to create the file), and retries
// the append once. While the reopen fails (the disk is still full) every call
// fails with ErrWALUnavailable and the next StoreLogs tries again; raft treats
// those as the failed writes they are (a leader steps down, a follower rejects
// the append). A rotation whose metadata commit failed instead leaves a tail
// that recovery still sees as sealed; that case remains a restart-and-repair
// one (docs/reliability.md, D5).
type walStore struct {
	open func(meta types.MetaStore) (*wal.WAL, error)
	// meta is raft-wal's metadata DB, kept open across reopens: a failed
	// wal.Open does not close the one it opened, and the next Open would then
	// wait forever on that file's lock.
	meta *metadb.BoltMetaDB
	log  hclog.Logger

	// mu: every call holds it shared; a reopen holds it exclusively, so no call
	// is inside the WAL while it is closed and replaced.
	mu sync.RWMutex
	w  *wal.WAL // nil while a reopen has failed
	// nextTry: after a failed reopen the next is not tried before it (each
	// failed wal.Open also leaves its sealed segments' readers open).
	nextTry time.Time
	// reopens counts successful reopens (tests, and the log line).
	reopens atomic.Uint64
	// ls defers the leader's fsyncs (leadersync.go); its deferVFS must be
	// the one open writes segment files through.
	ls *leaderSync
}

// reopenBackoff spaces reopen attempts while the disk stays full.
const reopenBackoff = time.Second

// ErrWALUnavailable is returned by every call on the raft-wal log store while
// it could not be reopened after a failed segment rotation.
var ErrWALUnavailable = errors.New("raftlog: raft-wal is being reopened after a failed segment rotation")

var (
	_ raft.LogStore          = (*walStore)(nil)
	_ raft.MonotonicLogStore = (*walStore)(nil)
)

// newWALStore opens the WAL with open, which the store also calls to reopen
// it; open must pass meta to wal.Open (wal.WithMetaStore) and write segments
// through ls's deferVFS. ls nil: a leaderSync of its own, which then never
// defers (tests that open raft-wal on a VFS of their own).
func newWALStore(open func(meta types.MetaStore) (*wal.WAL, error), ls *leaderSync, log hclog.Logger) (*walStore, error) {
	if ls == nil {
		ls = newLeaderSync()
	}
	s := &walStore{open: open, meta: &metadb.BoltMetaDB{}, log: log, ls: ls}
	w, err := open(s.keptOpen())
	if err != nil {
		_ = s.meta.Close()
		ls.close()
		return nil, err
	}
	s.w = w
	if err := s.syncOpened(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// syncOpened fsyncs the segment files the open found, which may hold a killed
// process's unsynced writes, then counts the whole log as durable.
func (s *walStore) syncOpened() error {
	if err := s.ls.syncRound(false); err != nil {
		return err
	}
	last, err := s.w.LastIndex()
	if err != nil {
		return err
	}
	s.ls.reset(last)
	return nil
}

func (s *walStore) keptOpen() keptOpen { return keptOpen{BoltMetaDB: s.meta, ls: s.ls} }

// keptOpen is the meta DB as a WAL sees it: closing the WAL leaves it open for
// the next one; walStore.Close closes it. Every metadata commit first fsyncs
// the leader's deferred writes: a rotation commits "segment sealed" after the
// append that sealed it, whose fsync may still be deferred, and recovery must
// never find a sealed segment without its index frame.
type keptOpen struct {
	*metadb.BoltMetaDB
	ls *leaderSync
}

func (keptOpen) Close() error { return nil }

func (k keptOpen) CommitState(st types.PersistentState) error {
	if err := k.ls.syncRound(false); err != nil {
		return err
	}
	return k.BoltMetaDB.CommitState(st)
}

// with runs f on the open WAL under the shared lock.
func (s *walStore) with(f func(w *wal.WAL) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.w == nil {
		return ErrWALUnavailable
	}
	return f(s.w)
}

func (s *walStore) GetLog(index uint64, log *raft.Log) error {
	return s.with(func(w *wal.WAL) error {
		first, err := w.FirstIndex()
		if err != nil {
			return err
		}
		// A concurrent DeleteRange between this check and the read is harmless: the
		// read is then ordered before the delete.
		if first == 0 || index < first {
			return raft.ErrLogNotFound
		}
		return w.GetLog(index, log)
	})
}

func (s *walStore) FirstIndex() (uint64, error) {
	var i uint64
	err := s.with(func(w *wal.WAL) (err error) { i, err = w.FirstIndex(); return })
	return i, err
}

func (s *walStore) LastIndex() (uint64, error) {
	var i uint64
	err := s.with(func(w *wal.WAL) (err error) { i, err = w.LastIndex(); return })
	return i, err
}

func (s *walStore) StoreLog(log *raft.Log) error { return s.StoreLogs([]*raft.Log{log}) }

// StoreLogs writes logs. On the leader (ls.mayDefer) it returns once they are
// written and leaves the fsync to the syncer (leadersync.go); everywhere else
// they are fsynced before it returns.
func (s *walStore) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	if err := s.ls.failed(); err != nil {
		return err
	}
	last := logs[len(logs)-1].Index
	if s.ls.mayDefer() {
		s.ls.deferring.Store(true)
		err := s.storeLogs(logs)
		s.ls.deferring.Store(false)
		if err == nil {
			s.ls.written(last)
		}
		return err
	}
	if err := s.storeLogs(logs); err != nil {
		return err
	}
	// The batch's fsync covered the tail segment, the only file a deferred
	// write may still be pending in (a sealed one was synced before its
	// metadata commit), so everything up to last is durable.
	s.ls.synced(last)
	return nil
}

func (s *walStore) storeLogs(logs []*raft.Log) error {
	var wedged *wal.WAL
	err := s.with(func(w *wal.WAL) error {
		err := w.StoreLogs(logs)
		if errors.Is(err, types.ErrSealed) {
			wedged = w
		}
		return err
	})
	if wedged == nil && !errors.Is(err, ErrWALUnavailable) {
		return err
	}
	if rerr := s.reopen(wedged); rerr != nil {
		return fmt.Errorf("%w; reopening raft-wal: %w", err, rerr)
	}
	return s.with(func(w *wal.WAL) error { return w.StoreLogs(logs) })
}

// reopen replaces old (nil: none is open) with a freshly opened WAL, unless
// another call has replaced it already.
func (s *walStore) reopen(old *wal.WAL) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w != old {
		return nil
	}
	if old != nil {
		s.w = nil
		if err := old.Close(); err != nil {
			s.log.Warn("closing the wedged raft-wal", "error", err)
		}
	} else if time.Now().Before(s.nextTry) {
		return errors.New("waiting before the next attempt")
	}
	w, err := s.open(s.keptOpen())
	if err != nil {
		s.nextTry = time.Now().Add(reopenBackoff)
		s.log.Error("reopening raft-wal after a failed segment rotation", "error", err)
		return err
	}
	s.w = w
	if err := s.syncOpened(); err != nil {
		return err
	}
	n := s.reopens.Add(1)
	s.log.Warn("reopened raft-wal after a failed segment rotation", "reopens", n)
	return nil
}

// DeleteRange deletes [min, max]. A suffix truncation (a follower dropping
// entries a new leader does not have) lowers Durable to min-1 first.
func (s *walStore) DeleteRange(min, max uint64) error {
	return s.with(func(w *wal.WAL) error {
		last, err := w.LastIndex()
		if err != nil {
			return err
		}
		if max >= last && min <= last {
			if err := s.ls.syncRound(false); err != nil {
				return err
			}
			s.ls.truncated(min)
		}
		return w.DeleteRange(min, max)
	})
}

func (s *walStore) IsMonotonic() bool { return true }

func (s *walStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if s.w != nil {
		err = s.w.Close()
		s.w = nil
	}
	s.ls.close()
	return errors.Join(err, s.meta.Close())
}
