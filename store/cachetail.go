package store

import (
	"golang.org/x/sys/unix"
)

// dropStep is the least a CommitLog segment's page cache is handed back in: one
// posix_fadvise per 16 MiB keeps the call's own cost (invalidating each page, draining
// the per-CPU LRU batches) off the per-fsync path, where decision 0012 measured it
// costing more than it saved.
const dropStep = 16 << 20

// SetCachedTail bounds how much of the CommitLog stays in the page cache behind the
// newest byte that is both durable and dispatched: with n > 0, every flush hands the
// pages below that line minus n back to the kernel (decision 0022); n <= 0 keeps them,
// as Apache RocketMQ does. Safe to call at any time; the broker sets it on every change
// of role, because only a leader's CommitLog is read by consumers.
//
// Handing back is a hint and never changes a byte: a reader of a handed-back range
// faults it in from the file again.
func (s *Store) SetCachedTail(n int64) { s.cachedTail.Store(n) }

// CachedTail is the bound SetCachedTail set (<= 0: none).
func (s *Store) CachedTail() int64 { return s.cachedTail.Load() }

// dropBehindLocked hands back the page cache of the CommitLog below the cached-tail
// line, per segment in steps of at least dropStep. Called by flushLocked (caller holds
// flushMu, which guards mappedFile.dropped).
func (s *Store) dropBehindLocked(durable PhysicalOffset) {
	tail := s.cachedTail.Load()
	if tail <= 0 {
		return
	}
	limit := int64(min(durable, s.dispatcher.dispatched())) - tail
	if err := s.commitLog.dropBelow(limit); err != nil && !s.dropWarned {
		s.log.Warn("handing the CommitLog's old pages back to the kernel failed; they stay cached", "error", err)
		s.dropWarned = true
	}
}

// dropBelow hands back the page cache of every segment's durable bytes below limit
// (a global offset): the mapping's page-table entries first (MADV_DONTNEED, so that
// pages a reader touched through the mapping are no longer mapped and can go), then
// the file's clean pages (POSIX_FADV_DONTNEED). A segment's pages go in steps of
// dropStep, or all at once when the segment is complete.
func (c *commitLog) dropBelow(limit int64) error {
	files := c.mfq.snapshot()
	for i, f := range files {
		if f.start >= limit {
			break
		}
		to := min(limit-f.start, f.flushedPosition.Load()) / pageSize * pageSize
		from := f.dropped
		complete := i < len(files)-1
		if to <= from || (to-from < dropStep && !complete) {
			continue
		}
		if !f.acquire() {
			continue
		}
		err := dropPages(f, from, to)
		f.release()
		if err != nil {
			return err
		}
		f.dropped = to
	}
	return nil
}

// dropPages drops the page cache of f's bytes [from, to), both page-aligned.
func dropPages(f *mappedFile, from, to int64) error {
	if err := unix.Madvise(f.data[from:to], unix.MADV_DONTNEED); err != nil {
		return err
	}
	return unix.Fadvise(int(f.file.Fd()), from, to-from, unix.FADV_DONTNEED)
}

// lowerDropped moves the hand-back line of the segment holding off down to off
// after a cut there, so the bytes written over the cut are handed back in turn.
// Caller holds the Store's flushMu. (The entry log's own cuts need none: raft
// truncates only uncommitted entries, which lie above the dispatched offset and
// so above the line.)
func (c *commitLog) lowerDropped(off PhysicalOffset) {
	if f := c.mfq.find(int64(off)); f != nil {
		f.dropped = min(f.dropped, (int64(off)-f.start)/pageSize*pageSize)
	}
}
