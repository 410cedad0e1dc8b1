package raftlog

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft-wal/types"
)

// The leader's log write overlaps replication (decision 0015).
//
// hashicorp/raft's leader stores a batch in its own log (write + fsync), and
// only then hands it to the replication goroutines, which send it to the
// followers, which write and fsync it again: the two fsyncs add up on every
// commit. The Raft dissertation (§10.2.1) lets the leader write its log in
// parallel with replication, provided it counts itself toward a commit only once
// its own write is durable. hashicorp/raft counts the leader as soon as
// StoreLogs returns, so the overlap is built around it in three parts:
//
//   - On the leader, raft-wal's fsync is deferred: StoreLogs writes the batch to
//     the segment file and returns, and the syncer goroutine fsyncs it while the
//     followers receive it. Durable is the highest index whose bytes are on
//     stable storage. Everywhere else (followers, candidates, a node with no
//     check installed) StoreLogs fsyncs before it returns, as before.
//   - The FSM applies an entry only once WaitDurable says it is durable here
//     (fsm.Config.WaitLogDurable): raft commits with the leader plus one
//     follower, so "committed and durable on the leader" is two fsynced copies,
//     a quorum, before anything is applied or acknowledged.
//   - The leader tells followers a commit index no higher than Durable
//     (broker/node's capped transport), so no follower applies an entry that
//     only one node holds on disk. Without the cap, a leader that lost power
//     before its fsync could come back without the entry, win an election with
//     the other follower and overwrite an entry a follower had applied.
//
// An entry raft counted as committed but the leader never made durable (its
// power failed first) was never applied or acknowledged anywhere, so losing it
// is the same as losing an uncommitted entry.
//
// The syncer's fsync failing is final for this process: Durable stops moving,
// every later StoreLogs fails (the leader steps down at its next write, as
// hashicorp/raft makes a leader whose log write failed), and WaitDurable
// returns the error, on which the FSM stops applying until a restart.

// ErrStoresClosed is what WaitDurable returns once the stores are closed.
var ErrStoresClosed = errors.New("raftlog: stores closed")

// leaderSync tracks which raft-wal segment files have writes not yet fsynced
// and the highest index those writes cover. Safe for concurrent use.
type leaderSync struct {
	// deferring is set by the raft goroutine for the length of one StoreLogs
	// that may defer its fsync; only that call's Syncs read it.
	deferring atomic.Bool
	// shouldDefer says whether a StoreLogs may defer (the node is leader). nil:
	// never.
	shouldDefer atomic.Pointer[func() bool]
	// timeSync, when set, runs each deferred fsync round (the disk guard
	// times it).
	timeSync atomic.Pointer[func(func() error) error]

	// round serialises sync rounds: a round claims Durable only for what it
	// synced itself, so two at once could claim each other's files.
	round sync.Mutex

	mu      sync.Mutex
	dirty   map[syncer]struct{}
	target  uint64 // highest index written (possibly not yet fsynced)
	durable uint64
	// gen changes when a suffix truncation lowers durable: a round that began
	// before it must not raise durable again.
	gen     uint64
	err     error         // sticky: the first failed fsync
	closed  bool          // the stores closed: WaitDurable gives up
	changed chan struct{} // closed and replaced whenever durable, err or closed change

	wake    chan struct{} // capacity 1
	stop    chan struct{}
	done    chan struct{}
	rounds  atomic.Uint64
	roundNs atomic.Uint64
}

func newLeaderSync() *leaderSync {
	l := &leaderSync{
		dirty:   make(map[syncer]struct{}),
		changed: make(chan struct{}),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go l.run()
	return l
}

// run is the syncer: one round per wake-up, so every batch written while a
// round's fsync runs is made durable by the next single round.
func (l *leaderSync) run() {
	defer close(l.done)
	for {
		select {
		case <-l.stop:
			return
		case <-l.wake:
		}
		_ = l.syncRound(true)
	}
}

// syncRound fsyncs every dirty file and then raises durable to the target it
// saw when it started. timed: run the fsyncs under timeSync (the deferred
// rounds; the synchronous ones are inside a timed StoreLogs already).
func (l *leaderSync) syncRound(timed bool) error {
	l.round.Lock()
	defer l.round.Unlock()
	l.mu.Lock()
	if l.err != nil {
		err := l.err
		l.mu.Unlock()
		return err
	}
	files := make([]syncer, 0, len(l.dirty))
	for f := range l.dirty {
		files = append(files, f)
	}
	clear(l.dirty)
	target, gen := l.target, l.gen
	l.mu.Unlock()

	if len(files) > 0 {
		start := time.Now()
		syncAll := func() error {
			var err error
			for _, f := range files {
				err = errors.Join(err, f.syncNow())
			}
			return err
		}
		var err error
		if t := l.timeSync.Load(); timed && t != nil {
			err = (*t)(syncAll)
		} else {
			err = syncAll()
		}
		l.rounds.Add(1)
		l.roundNs.Add(uint64(time.Since(start)))
		if err != nil {
			l.fail(err)
			return err
		}
	}
	l.mu.Lock()
	if gen == l.gen && target > l.durable {
		l.durable = target
		l.notifyLocked()
	}
	l.mu.Unlock()
	return nil
}

func (l *leaderSync) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// fail makes err the sticky fsync error (unless there is one already).
func (l *leaderSync) fail(err error) {
	l.mu.Lock()
	if l.err == nil {
		l.err = fmt.Errorf("raftlog: fsync of the raft log failed; entries after index %d are not durable on this node: %w", l.durable, err)
	}
	l.notifyLocked()
	l.mu.Unlock()
}

// syncer is what a deferred fsync round makes durable: a raft-wal segment file
// (deferredFile), or the commitlog kind's entry log (entrystore.go).
type syncer interface{ syncNow() error }

// markDirty records that f has writes its caller wanted fsynced.
func (l *leaderSync) markDirty(f syncer) {
	l.mu.Lock()
	l.dirty[f] = struct{}{}
	l.mu.Unlock()
}

// forget drops f from the dirty set (it synced itself on Close).
func (l *leaderSync) forget(f syncer) {
	l.mu.Lock()
	delete(l.dirty, f)
	l.mu.Unlock()
}

// mayDefer reports whether the StoreLogs about to run may defer its fsync.
func (l *leaderSync) mayDefer() bool {
	p := l.shouldDefer.Load()
	return p != nil && (*p)()
}

// failed is the sticky fsync error, if any.
func (l *leaderSync) failed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// written records a deferred StoreLogs that wrote everything up to last, and
// wakes the syncer.
func (l *leaderSync) written(last uint64) {
	l.mu.Lock()
	l.target = max(l.target, last)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// synced records a StoreLogs that fsynced everything up to last itself.
func (l *leaderSync) synced(last uint64) {
	l.mu.Lock()
	l.target = max(l.target, last)
	if last > l.durable {
		l.durable = last
		l.notifyLocked()
	}
	l.mu.Unlock()
}

// truncated records a suffix truncation: nothing from first on is in the log.
func (l *leaderSync) truncated(first uint64) {
	l.mu.Lock()
	l.gen++
	l.target = min(l.target, first-1)
	if l.durable > first-1 {
		l.durable = first - 1
		l.notifyLocked()
	}
	l.mu.Unlock()
}

// reset sets durable (and target) to last: the log as opened, after a round
// fsynced every file it opened.
func (l *leaderSync) reset(last uint64) {
	l.mu.Lock()
	l.gen++
	l.target, l.durable = last, last
	l.notifyLocked()
	l.mu.Unlock()
}

// Durable is the highest index known to be on stable storage.
func (l *leaderSync) Durable() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.durable
}

// WaitDurable blocks until index is durable, the fsync failed, the stores
// closed, or stop is closed (then it returns ErrStoresClosed too).
func (l *leaderSync) WaitDurable(index uint64, stop <-chan struct{}) error {
	for {
		l.mu.Lock()
		d, err, closed, ch := l.durable, l.err, l.closed, l.changed
		l.mu.Unlock()
		switch {
		case d >= index:
			return nil
		case err != nil:
			return err
		case closed:
			return ErrStoresClosed
		}
		select {
		case <-ch:
		case <-stop:
			return ErrStoresClosed
		}
	}
}

// close stops the syncer after a last round (Close of the WAL syncs what is
// left as it closes its files).
func (l *leaderSync) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.notifyLocked()
	l.mu.Unlock()
	close(l.stop)
	<-l.done
}

// deferVFS hands raft-wal files whose Sync is deferred while ls.deferring.
type deferVFS struct {
	types.VFS
	ls *leaderSync
}

func (v deferVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := v.VFS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return &deferredFile{WritableFile: f, ls: v.ls}, nil
}

func (v deferVFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := v.VFS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	// A file opened for writing may hold writes of the previous process that
	// never got their fsync (it was killed; the page cache kept them): the
	// first round after open syncs it before Durable counts them.
	df := &deferredFile{WritableFile: f, ls: v.ls}
	v.ls.markDirty(df)
	return df, nil
}

// deferredFile is a raft-wal segment file whose Sync only marks it dirty while
// its leaderSync is deferring. raft-wal calls Sync in exactly one place, at the
// end of each append batch (segment Writer.sync), after writing the batch.
type deferredFile struct {
	types.WritableFile
	ls *leaderSync
	// pending: a Sync was deferred and no fsync has started since.
	pending atomic.Bool
	mu      sync.Mutex // orders syncNow against Close
	closed  bool
}

func (f *deferredFile) Sync() error {
	if f.ls.deferring.Load() {
		f.pending.Store(true)
		f.ls.markDirty(f)
		return nil
	}
	return f.syncNow()
}

// syncNow fsyncs the file unless it has been closed (Close synced it).
func (f *deferredFile) syncNow() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.pending.Store(false)
	if err := f.WritableFile.Sync(); err != nil {
		f.pending.Store(true)
		return err
	}
	return nil
}

// Close fsyncs deferred writes before closing. raft-wal closes a segment's
// writer on its own Close and on a reopen; a sealed segment was synced before
// its metadata commit (syncBeforeMeta).
func (f *deferredFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	f.ls.forget(f)
	var err error
	if f.pending.Load() {
		if err = f.WritableFile.Sync(); err != nil {
			f.ls.fail(err)
		}
	}
	return errors.Join(err, f.WritableFile.Close())
}

// noDurableLimit is Durable for a log store without deferred fsyncs.
const noDurableLimit = math.MaxUint64

// DeferLeaderFsync lets the raft-wal or commitlog log defer its fsync while isLeader
// reports true (leadersync.go); nil turns deferring off. isLeader is called by
// the goroutine calling StoreLogs, which for hashicorp/raft is its main
// goroutine, the only one that changes its state: raft.State() there is exact.
// The boltdb backend ignores it.
func (s *Stores) DeferLeaderFsync(isLeader func() bool) {
	if s.ls == nil {
		return
	}
	if isLeader == nil {
		s.ls.shouldDefer.Store(nil)
		return
	}
	s.ls.shouldDefer.Store(&isLeader)
}

// TimeDeferredFsync makes every deferred fsync round run inside t (the disk
// stall guard times them as it times StoreLogs).
func (s *Stores) TimeDeferredFsync(t func(func() error) error) {
	if s.ls != nil && t != nil {
		s.ls.timeSync.Store(&t)
	}
}

// DurableIndex is the highest raft index on stable storage here; with no
// deferred fsyncs (boltdb) every stored entry is, and it has no limit.
func (s *Stores) DurableIndex() uint64 {
	if s.ls == nil {
		return noDurableLimit
	}
	return s.ls.Durable()
}

// WaitDurable returns once index is on stable storage here, or with the
// fsync's error, or ErrStoresClosed once the stores close or stop is closed.
func (s *Stores) WaitDurable(index uint64, stop <-chan struct{}) error {
	if s.ls == nil {
		return nil
	}
	return s.ls.WaitDurable(index, stop)
}

// DeferredFsyncStats are the syncer's rounds since open and their total time.
func (s *Stores) DeferredFsyncStats() WriteStats {
	if s.ls == nil {
		return WriteStats{}
	}
	return WriteStats{Writes: s.ls.rounds.Load(), Total: time.Duration(s.ls.roundNs.Load())}
}
