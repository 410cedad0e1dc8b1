package store

import (
	"sync"
	"time"
)

// flushLocked flushes the CommitLog, then the ConsumeQueues (and the IndexFiles when
// indexFlushDue), then writes the checkpoint when it changed. The order matters: the
// checkpoint only ever names CommitLog bytes that were msync'd before it was written.
// Caller holds flushMu.
func (s *Store) flushLocked() (PhysicalOffset, error) {
	if obs := s.flushObserver.Load(); obs != nil {
		defer func(start time.Time) { (*obs)(time.Since(start)) }(time.Now())
	}
	dispatched := s.dispatcher.dispatched()
	var flushed PhysicalOffset
	var err error
	if s.entries != nil {
		// raft's StoreLogs syncs the CommitLog (EntryLog.Sync) before any of it is
		// applied; the store only reads how far that got. The dead records go
		// first: the ConsumeQueues this checkpoint covers were dispatched with them.
		flushed = s.commitLog.flushedOffset()
		if err := s.entries.dead.persist(s.cfg.Dir); err != nil {
			return flushed, err
		}
	} else if flushed, err = s.commitLog.flush(); err != nil {
		return flushed, err
	}
	if err := s.cq.flush(); err != nil {
		return flushed, err
	}
	if s.indexFlushDue() {
		if err := s.index.flush(s.final); err != nil {
			return flushed, err
		}
		s.lastIndexFlush = time.Now()
	} else if err := s.index.writeBack(); err != nil && !s.writeBackWarned {
		// Only a hint to the kernel: the index's own sync makes it durable, so a
		// file system that refuses it costs a warning, not the checkpoint.
		s.log.Warn("starting the IndexFiles' write-back failed; they are synced every indexFlushInterval regardless", "error", err)
		s.writeBackWarned = true
	}
	ts := s.lastStoreTimestamp.Load()
	ck := checkpoint{
		commitLogFlushed:   flushed,
		commitLogMin:       s.commitLog.minOffset(),
		logicsFlushed:      min(dispatched, flushed),
		physicMsgTimestamp: ts,
		indexMsgTimestamp:  ts,
	}
	if ck != s.lastCheckpoint {
		if err := writeCheckpoint(s.cfg.Dir, ck); err != nil {
			return flushed, err
		}
		s.lastCheckpoint = ck
	}
	s.dropBehindLocked(flushed)
	return flushed, nil
}

// indexFlushDue reports whether this flush msyncs the IndexFiles: every
// IndexFlushInterval and at close. Nothing needs them durable sooner: recovery
// re-indexes the CommitLog from their own checkpoint (dispatcher.reindex), and
// flushing them with every checkpoint wrote back most of the slot table's pages
// each second under random keys (decision 0017). Caller holds flushMu.
func (s *Store) indexFlushDue() bool {
	iv := s.cfg.IndexFlushInterval
	return iv < 0 || s.final || time.Since(s.lastIndexFlush) >= iv
}

// flusher is the background flush driver (RocketMQ's FlushRealTimeService): every
// interval it flushes what was appended and refreshes the checkpoint. It runs in both
// flush modes; with FlushSync it only has ConsumeQueues, IndexFiles and the checkpoint
// left to do.
type flusher struct {
	stopCh chan struct{}
	wg     sync.WaitGroup
}

func startFlusher(s *Store, interval time.Duration) *flusher {
	f := &flusher{stopCh: make(chan struct{})}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-f.stopCh:
				return
			case <-t.C:
			}
			s.flushMu.Lock()
			if _, err := s.flushLocked(); err != nil {
				s.log.Error("background flush failed", "error", err)
			}
			s.flushMu.Unlock()
		}
	}()
	return f
}

// stop ends the goroutine and waits for it.
func (f *flusher) stop() {
	close(f.stopCh)
	f.wg.Wait()
}

// SetFlushObserver registers f to be told how long each flush (CommitLog msync,
// ConsumeQueues, IndexFiles, checkpoint) took; the broker exports it as a metric.
// f must not block.
func (s *Store) SetFlushObserver(f func(time.Duration)) { s.flushObserver.Store(&f) }
