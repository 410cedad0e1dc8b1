package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Directory names under the store root (RocketMQ's layout).
const (
	commitLogDir    = "commitlog"
	consumeQueueDir = "consumequeue"
	indexDir        = "index"
)

// minSegmentSize keeps a segment large enough for the largest header plus padding;
// tests use 64 KiB, production 1 GiB.
const minSegmentSize = 4096

// Store is one broker's message store: the CommitLog plus the ConsumeQueues and
// IndexFiles dispatched from it.
//
// Concurrency: writers (AppendBatch, Truncate, ResetFrom, CleanExpired, Close) are
// serialised by mu; in a raft group they all come from the FSM anyway. Reads (the
// methods in read.go, ReadRange, the offset getters) run concurrently with writers,
// except with ResetFrom, which replaces the ConsumeQueues and IndexFiles and must run
// while nothing reads (raft's Restore, with the node out of service).
type Store struct {
	cfg Config
	log hclog.Logger

	// mu serialises writers; lock order: mu, then flushMu.
	mu sync.Mutex
	// flushMu serialises flushes and checkpoint writes with cuts and deletions, so
	// flushed positions only grow and the checkpoint never names a cut region.
	flushMu sync.Mutex
	closed  atomic.Bool
	// flushObserver, when set, is told each flush's duration (SetFlushObserver).
	flushObserver atomic.Pointer[func(time.Duration)]

	commitLog  *commitLog     // CL: implements recordSource
	entries    *entryMode     // set with Config.RaftEntryLog (entrymode.go)
	cq         *consumeQueues // DQ: consumequeue.go
	index      *indexService  // DQ: indexservice.go
	dispatcher *dispatcher    // DQ: dispatch.go

	// queueOffsets is the next queue offset per queue. Guarded by mu.
	queueOffsets *queueOffsetTable
	// lastStoreTimestamp is the STORETIMESTAMP of the last appended batch.
	lastStoreTimestamp atomic.Int64
	// lastCheckpoint is what the checkpoint file holds. Guarded by flushMu.
	lastCheckpoint checkpoint
	// lastIndexFlush is when the IndexFiles were last msync'd, and writeBackWarned
	// whether a failed write-back of their entries was logged. Guarded by flushMu.
	lastIndexFlush  time.Time
	writeBackWarned bool
	// cachedTail is SetCachedTail's bound; dropWarned whether a failed hand-back was
	// logged (guarded by flushMu).
	cachedTail atomic.Int64
	dropWarned bool
	// final is set by Close, under flushMu, once the dispatcher has stopped: its
	// flush writes the IndexFiles' slot tables from memory into the files.
	final bool

	guard   atomic.Pointer[func(PhysicalOffset) bool]
	flusher *flusher

	// scrub checks the segments open did not (scrub.go); corrupt carries what it
	// found (Corrupt).
	scrub     *scrub
	corrupt   chan error
	scrubLeft atomic.Int64
}

// AppendResult says where one appended message went.
type AppendResult struct {
	Topic          string
	QueueID        int32
	QueueOffset    QueueOffset
	PhysicalOffset PhysicalOffset
	Size           int32
	StoreTimestamp int64
}

func (c Config) validate() error {
	switch {
	case c.Dir == "":
		return errors.New("store: config Dir is empty")
	case c.CommitLogSegmentSize < minSegmentSize:
		return fmt.Errorf("store: config CommitLogSegmentSize=%d, minimum %d", c.CommitLogSegmentSize, minSegmentSize)
	case c.DeleteWhenHour < 0 || c.DeleteWhenHour > 23:
		return fmt.Errorf("store: config DeleteWhenHour=%d, want 0-23", c.DeleteWhenHour)
	case slices.ContainsFunc(c.DeleteWhenHours, func(h int) bool { return h < 0 || h > 23 }):
		return fmt.Errorf("store: config DeleteWhenHours=%v, want hours 0-23", c.DeleteWhenHours)
	case c.DiskMaxUsedSpaceRatio <= 0 || c.DiskMaxUsedSpaceRatio > 1:
		return fmt.Errorf("store: config DiskMaxUsedSpaceRatio=%g, want (0,1]", c.DiskMaxUsedSpaceRatio)
	case c.FlushInterval < 0:
		return fmt.Errorf("store: config FlushInterval=%s is negative", c.FlushInterval)
	}
	return nil
}

// Open opens (or creates) the store under cfg.Dir and recovers it: the CommitLog is
// scanned and cut at its valid end (an error wrapping ErrCorrupt when a bad record
// lies below the checkpointed flush offset), then the ConsumeQueues and IndexFiles are
// cut or rebuilt to match it, and the reput and flush goroutines start.
func Open(cfg Config) (*Store, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger.Named("store")
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: mkdir root: %w", err)
	}
	// The marker is created before anything is touched: a crash from here on is seen
	// as dirty by the next Open. It stays if Open fails.
	dirty, err := createAbortMarker(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	ck, haveCk, err := readCheckpoint(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	s := &Store{cfg: cfg, log: log, corrupt: make(chan error, 1)}
	s.commitLog = newCommitLog(filepath.Join(cfg.Dir, commitLogDir), cfg.CommitLogSegmentSize, cfg.PreZeroSegments, log)
	s.commitLog.setHook(cfg.IOHook)
	s.commitLog.writeThrough = cfg.RaftEntryLog // raft's appends: pwrite and fdatasync
	fail := func(err error) (*Store, error) {
		s.commitLog.close()
		return nil, fmt.Errorf("store: open: %w", err)
	}
	if err := s.commitLog.mfq.load(); err != nil {
		return fail(err)
	}
	end, checkedFrom, err := recoverCommitLog(s.commitLog, ck, haveCk, !dirty)
	if err != nil {
		return fail(err)
	}
	if cfg.RaftEntryLog {
		if end, err = s.openEntryMode(); err != nil {
			return fail(err)
		}
		checkedFrom = min(checkedFrom, s.entries.log.scannedFrom)
	}
	log.Info("CommitLog recovered", "min", s.commitLog.minOffset(), "max", end, "clean", !dirty, "checkpoint", haveCk, "raft_entry_log", cfg.RaftEntryLog)
	s.lastStoreTimestamp.Store(ck.physicMsgTimestamp)
	s.lastCheckpoint = ck
	if err := s.openLogics(end, nil, !dirty); err != nil {
		return fail(err)
	}
	if !cfg.RaftEntryLog {
		// Not with the entry log: it writes with pwrite, which takes no page fault,
		// and the warmer's dirty zero pages would go to disk with every fdatasync.
		s.commitLog.startWarmer(cfg.WarmAhead)
	}
	if l := s.commitLog.mfq.last(); l != nil {
		s.commitLog.alloc.request(l.end())
	}
	s.flusher = startFlusher(s, cfg.FlushInterval)
	s.startScrub(checkedFrom, cfg.ScrubRate)
	return s, nil
}

// openLogics opens the ConsumeQueues and IndexFiles, makes them match a CommitLog
// that ends at end, rebuilds the queue offset table and starts the reput goroutine.
// clean says the store was closed cleanly (newIndexService's slotsDurable).
func (s *Store) openLogics(end PhysicalOffset, prepare func(cq *consumeQueues, end PhysicalOffset) error, clean bool) error {
	cq, err := newConsumeQueues(filepath.Join(s.cfg.Dir, consumeQueueDir), s.cfg.ConsumeQueueEntriesPerFile, s.log)
	if err != nil {
		return err
	}
	idx, err := newIndexService(filepath.Join(s.cfg.Dir, indexDir), s.cfg.IndexHashSlots, s.cfg.IndexMaxEntries, clean, s.log)
	if err != nil {
		cq.close()
		return err
	}
	d := newDispatcher(s.commitLog, cq, idx, s.log)
	if s.dispatcher != nil {
		// ResetFrom: keep the notifier the broker installed on the old dispatcher.
		if n := s.dispatcher.notifier.Load(); n != nil {
			d.setNotifier(*n)
		}
	}
	if s.entries != nil {
		d.dead = s.entries.dead
	}
	recover := d.recover
	if s.entries != nil && prepare == nil {
		recover = d.recoverCut // Open: the tail is raft's, not yet applied
	}
	if prepare != nil {
		err = prepare(cq, end)
	}
	if err == nil {
		err = recover(end)
	}
	if err != nil {
		cq.close()
		_ = idx.close()
		return fmt.Errorf("recover dispatch to %d: %w", end, err)
	}
	s.cq, s.index, s.dispatcher = cq, idx, d
	s.queueOffsets = newQueueOffsetTable(cq.maxOffsets())
	if s.entries != nil {
		s.entries.applyEnd = d.dispatched()
	}
	d.setConfirmed(d.dispatched())
	d.start()
	return nil
}

// openEntryMode opens the entry log over the recovered CommitLog (Config.RaftEntryLog)
// and returns the CommitLog's end after the entry log cut a torn entry.
func (s *Store) openEntryMode() (PhysicalOffset, error) {
	dead, err := loadDeadRecords(s.cfg.Dir)
	if err != nil {
		return 0, err
	}
	el, err := openEntryLogOn(s.commitLog, s.log.Named("entrylog"))
	if err != nil {
		return 0, err
	}
	s.entries = &entryMode{log: el, dead: dead}
	return s.commitLog.maxOffset(), nil
}

// Close flushes everything, writes the checkpoint and removes the abort marker, so
// the next Open knows the shutdown was clean.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.stopScrub()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flusher.stop()
	s.dispatcher.stop()
	s.flushMu.Lock()
	s.final = true
	_, err := s.flushLocked()
	s.flushMu.Unlock()
	s.cq.close()
	err = errors.Join(err, s.index.close())
	if s.entries != nil {
		s.entries.log.mu.Lock() // raft must have stopped; this only orders the close
		s.commitLog.close()
		s.entries.log.mu.Unlock()
	} else {
		s.commitLog.close()
	}
	if err == nil {
		err = removeAbortMarker(s.cfg.Dir)
	}
	if err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// AppendBatch appends pre-encoded messages (AppendMessage bytes) as one unit: each is
// copied into the CommitLog with QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP
// patched, so the same inputs give the same bytes on every replica. recs are not
// modified. A record that is malformed or larger than a segment rejects the whole
// batch (ErrMessageIllegal) before anything is written. The reput goroutine is then
// allowed to dispatch up to the new end: in a raft group every append is committed.
func (s *Store) AppendBatch(recs [][]byte, storeTimestamp int64) ([]AppendResult, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if s.entries != nil {
		return nil, fmt.Errorf("store: append batch: %w: raft appends, Apply uses ApplyEntry", ErrNotEntryLog)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return nil, ErrClosed
	}
	out, err := s.commitLog.appendBatch(recs, storeTimestamp, s.queueOffsets, make([]AppendResult, 0, len(recs)))
	if err != nil {
		return nil, fmt.Errorf("store: append batch of %d: %w", len(recs), err)
	}
	s.lastStoreTimestamp.Store(storeTimestamp)
	if s.cfg.FlushMode == FlushSync {
		s.flushMu.Lock()
		_, err = s.commitLog.flush()
		s.flushMu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("store: sync flush: %w", err)
		}
	}
	s.dispatcher.setConfirmed(s.commitLog.maxOffset())
	return out, nil
}

// Truncate cuts the CommitLog at off, which must be a record boundary in [min, max],
// then cuts the ConsumeQueues and IndexFiles to match and rebuilds the queue offset
// table. The checkpoint is lowered first, so a crash midway never finds a checkpoint
// naming bytes that were cut.
func (s *Store) Truncate(off PhysicalOffset) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if s.entries != nil {
		return fmt.Errorf("store: truncate to %d: %w: raft owns the tail, use RewindDispatch", off, ErrNotEntryLog)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cl := s.commitLog
	if off < cl.minOffset() || off > cl.maxOffset() {
		return fmt.Errorf("store: truncate to %d: %w (min %d, max %d)", off, ErrOffsetOutOfRange, cl.minOffset(), cl.maxOffset())
	}
	if !cl.isBoundary(off) {
		return fmt.Errorf("store: truncate to %d: %w: not a record boundary", off, ErrOffsetOutOfRange)
	}
	if err := s.dispatcher.waitDispatched(context.Background(), cl.maxOffset()); err != nil {
		return fmt.Errorf("store: truncate to %d: wait for dispatch: %w", off, err)
	}
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	if s.lastCheckpoint.commitLogFlushed > off || s.lastCheckpoint.logicsFlushed > off {
		ck := s.lastCheckpoint
		ck.commitLogFlushed = min(ck.commitLogFlushed, off)
		ck.logicsFlushed = min(ck.logicsFlushed, off)
		if err := writeCheckpoint(s.cfg.Dir, ck); err != nil {
			return fmt.Errorf("store: truncate to %d: %w", off, err)
		}
		s.lastCheckpoint = ck
	}
	if err := cl.cut(off); err != nil {
		return fmt.Errorf("store: truncate to %d: %w", off, err)
	}
	cl.lowerDropped(off)
	if err := s.dispatcher.truncate(off); err != nil {
		return fmt.Errorf("store: truncate to %d: %w", off, err)
	}
	s.queueOffsets = newQueueOffsetTable(s.cq.maxOffsets())
	s.dispatcher.setConfirmed(off)
	return nil
}

// isBoundary reports whether a record starts at off (or off is the end or a segment
// start), judged from the bytes there: a message whose PHYSICALOFFSET is off, or a
// blank record that runs to its segment's end.
func (c *commitLog) isBoundary(off PhysicalOffset) bool {
	if off == c.maxOffset() || int64(off)%c.segSize == 0 {
		return true
	}
	rec, _, release, err := c.recordAt(off)
	if err != nil {
		return false
	}
	defer release()
	_, magic, _ := RecordSize(rec)
	switch magic {
	case MagicBlank:
		return int64(off)+int64(len(rec)) == c.segmentStart(off)+c.segSize
	case MagicV1, MagicV2:
		return len(rec) >= fixedV1Size && PhysicalOffsetOf(rec) == off
	}
	return false
}

// Flush makes the CommitLog, ConsumeQueues and IndexFiles durable, writes the
// checkpoint and returns the durable CommitLog offset.
func (s *Store) Flush() (PhysicalOffset, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	return s.flushLocked()
}

// MinPhysicalOffset is the first CommitLog byte still stored.
func (s *Store) MinPhysicalOffset() PhysicalOffset { return s.commitLog.minOffset() }

// MaxPhysicalOffset is one past the last CommitLog byte appended.
func (s *Store) MaxPhysicalOffset() PhysicalOffset { return s.commitLog.maxOffset() }

// FlushedPhysicalOffset is the offset below which the CommitLog is durable.
func (s *Store) FlushedPhysicalOffset() PhysicalOffset { return s.commitLog.flushedOffset() }

// SetRetentionGuard installs the hook CleanExpired asks before deleting a segment:
// true means a reader (a snapshot being streamed) still needs the segment starting at
// segmentStart, so it and every later segment are kept. nil removes the guard.
func (s *Store) SetRetentionGuard(guard func(segmentStart PhysicalOffset) bool) {
	if guard == nil {
		s.guard.Store(nil)
		return
	}
	s.guard.Store(&guard)
}
