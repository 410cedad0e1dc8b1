package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// ReadRange streams the CommitLog bytes [from, to) to fn in chunks of at most one
// segment, blank padding included, so that writing them back (ResetFrom) reproduces
// the segments exactly. Chunks alias the mapping and are valid only during fn. It runs
// concurrently with appends; install a retention guard for the range first, otherwise
// CleanExpired may delete a segment before it is read (ErrOffsetOutOfRange).
func (s *Store) ReadRange(from, to PhysicalOffset, fn func(chunk []byte) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	cl := s.commitLog
	if from > to || from < cl.minOffset() || to > cl.maxOffset() {
		return fmt.Errorf("store: read range [%d,%d): %w (min %d, max %d)", from, to, ErrOffsetOutOfRange, cl.minOffset(), cl.maxOffset())
	}
	for off := from; off < to; {
		f := cl.mfq.find(int64(off))
		if f == nil || !f.acquire() {
			return fmt.Errorf("store: read range at %d: %w: segment gone", off, ErrOffsetOutOfRange)
		}
		end := min(int64(to), f.start+f.wrotePosition.Load())
		if end <= int64(off) {
			f.release()
			return fmt.Errorf("store: read range at %d: %w: segment %s ends at %d", off, ErrOffsetOutOfRange, fileName(f.start), end)
		}
		err := fn(f.slice(int64(off)-f.start, end-f.start))
		f.release()
		if err != nil {
			return err
		}
		off = PhysicalOffset(end)
	}
	return nil
}

// ResetFrom replaces the whole store with a CommitLog image (a snapshot streamed from
// another replica's ReadRange): every segment, ConsumeQueue and IndexFile is dropped,
// r is written as the CommitLog starting at start, checked record by record (a bad
// record anywhere is ErrCorrupt: the stream is the committed region), made durable,
// and the ConsumeQueues and IndexFiles are rebuilt from it.
//
// start must be a segment boundary (a replica's minimum always is: segments are
// deleted whole). Nothing may read the store meanwhile (see Store). On error the store
// is left empty or partial and must be reset again or closed.
func (s *Store) ResetFrom(start PhysicalOffset, r io.Reader) error {
	if s.entries != nil {
		return fmt.Errorf("store: reset from %d: %w: use ResetFromEntries", start, ErrNotEntryLog)
	}
	return s.resetFrom(start, r, nil, nil)
}

// resetFrom is ResetFrom; tail, when set, is taken after the store's locks for the
// whole reset (the entry log's, ResetFromEntries), and prepare, when set, runs once
// the image is written and the empty ConsumeQueues are open, before the reput
// rebuilds them.
func (s *Store) resetFrom(start PhysicalOffset, r io.Reader, tail sync.Locker, prepare func(cq *consumeQueues, end PhysicalOffset) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	cl := s.commitLog
	s.stopScrub() // it walks the segments the reset destroys; the image is checked as written
	if start < 0 || int64(start)%cl.segSize != 0 {
		return fmt.Errorf("store: reset from %d: %w: not a segment boundary (segment size %d)", start, ErrOffsetOutOfRange, cl.segSize)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	if tail != nil {
		tail.Lock()
		defer tail.Unlock()
	}

	s.dispatcher.stop()
	s.cq.close()
	if err := s.index.close(); err != nil {
		s.log.Warn("closing index before reset", "error", err)
	}
	// From here a crash must not find a checkpoint naming the old data.
	if err := os.Remove(filepath.Join(s.cfg.Dir, checkpointFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("store: reset: %w", err)
	}
	s.lastCheckpoint = checkpoint{}
	for _, d := range []string{consumeQueueDir, indexDir} {
		if err := os.RemoveAll(filepath.Join(s.cfg.Dir, d)); err != nil {
			return fmt.Errorf("store: reset: remove %s: %w", d, err)
		}
	}
	if err := cl.reset(start); err != nil {
		return fmt.Errorf("store: reset: %w", err)
	}
	end, err := cl.writeImage(start, r)
	if err != nil {
		return fmt.Errorf("store: reset from %d: %w", start, err)
	}
	if _, err := cl.flush(); err != nil {
		return fmt.Errorf("store: reset: flush: %w", err)
	}
	s.log.Info("CommitLog reset from snapshot", "min", start, "max", end)
	if err := s.openLogics(end, prepare, true); err != nil { // the IndexFiles were removed
		return fmt.Errorf("store: reset: %w", err)
	}
	if _, err := s.flushLocked(); err != nil {
		return fmt.Errorf("store: reset: %w", err)
	}
	return nil
}

// reset destroys every segment; the next one starts at start.
func (c *commitLog) reset(start PhysicalOffset) error {
	c.alloc.take(-1) // discards a pending pre-allocation
	var err error
	if f := c.mfq.first(); f != nil {
		err = c.mfq.truncate(f.start)
	}
	clear(c.segMaxTs)
	c.emptyStart.Store(int64(start))
	return err
}

// writeImage copies r into fresh segments from start and verifies it with the
// recovery scan; it returns the end of the image.
func (c *commitLog) writeImage(start PhysicalOffset, r io.Reader) (PhysicalOffset, error) {
	next := int64(start)
	for {
		f, err := c.newSegment(next)
		if err != nil {
			return 0, err
		}
		n, err := io.ReadFull(r, f.data[:f.size])
		f.wrotePosition.Store(int64(n))
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("read image at %d: %w", next+int64(n), err)
		}
		next = f.end()
	}
	end := c.maxOffset()
	off := start
	for off < end {
		f := c.mfq.find(int64(off))
		got, err := scanRecords(f.data[int64(off)-f.start:f.wrotePosition.Load()], off)
		if err != nil {
			return 0, fmt.Errorf("image: %w", err)
		}
		if got == off {
			return 0, corruptf("image: records end at %d, image at %d", off, end)
		}
		off = got
	}
	// An image ending exactly at a segment end leaves an empty last segment: drop it.
	if l := c.mfq.last(); l != nil && l.wrotePosition.Load() == 0 && l.start > int64(start) {
		if err := c.mfq.truncate(l.start); err != nil {
			return 0, err
		}
	}
	return end, nil
}
