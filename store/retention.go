package store

import (
	"fmt"
	"slices"
	"time"
)

// segmentInfo is what the retention decision knows about one CommitLog segment.
type segmentInfo struct {
	start PhysicalOffset
	// lastModified is the largest STORETIMESTAMP of the segment's messages (zero time
	// for a segment without messages). We use the stored timestamps rather than the
	// file mtime because they are the same on every replica, survive copies and
	// snapshot installs, and are testable without touching the file system; the file's
	// mtime would be reset by a snapshot install on a new follower.
	lastModified time.Time
	// active marks the segment being written (the last one); never deleted.
	active bool
	// referenced keeps the segment: the retention guard's answer (a snapshot
	// stream still needs it), or the reput has not dispatched all of it yet
	// (deleting it would leave its messages out of the ConsumeQueues and stop the
	// reput on a missing segment).
	referenced bool
}

// retentionPolicy is the configuration plus the observed disk usage.
type retentionPolicy struct {
	reserved         time.Duration // FileReservedTime
	deleteWhenHours  []int         // Config.deleteHours(): now.Hour() must be one of them
	diskMaxUsedRatio float64       // DiskMaxUsedSpaceRatio
	diskUsedRatio    float64       // observed now
	maxPerCall       int           // bounds the I/O of one call (RocketMQ deleteFileBatchMax)
}

// due says whether a run at now may delete anything: the hour is one of
// deleteWhenHours, or the disk is over its ratio.
func (p retentionPolicy) due(now time.Time) bool {
	return p.diskUsedRatio > p.diskMaxUsedRatio || slices.Contains(p.deleteWhenHours, now.Hour())
}

// retentionMaxPerCall is RocketMQ's deleteFileBatchMax: at most this many segments go
// per call, so a backlog is worked off over several calls instead of one I/O burst.
const retentionMaxPerCall = 10

// decideRetention returns the indexes (always a prefix 0..n-1 of segs, which are in
// offset order) of the segments to delete at now:
//   - nothing unless now's hour is one of deleteWhenHours or the disk is over its ratio;
//   - expired segments (now - lastModified > reserved), oldest first;
//   - when the disk is over its ratio, at least the oldest segment even if it has not
//     expired (one per call: the caller checks again before deleting more);
//   - never the active segment, never a referenced one and nothing after either (the
//     CommitLog must stay contiguous), at most maxPerCall.
func decideRetention(now time.Time, segs []segmentInfo, p retentionPolicy) []int {
	if !p.due(now) {
		return nil
	}
	force := p.diskUsedRatio > p.diskMaxUsedRatio
	limit := p.maxPerCall
	if limit <= 0 {
		limit = retentionMaxPerCall
	}
	var out []int
	for i, s := range segs {
		if s.active || s.referenced || len(out) == limit {
			break
		}
		if now.Sub(s.lastModified) <= p.reserved {
			if force && len(out) == 0 {
				out = append(out, i)
			}
			break
		}
		out = append(out, i)
	}
	return out
}

// CleanExpired applies retention at now (the caller's clock; RocketMQ runs it every
// 10 s) with the observed disk usage ratio (see DiskUsedRatio). It deletes the CommitLog
// segments decideRetention picks, then the ConsumeQueue and IndexFiles wholly below the
// new minimum; min queue offsets advance and reads below them answer OFFSET_TOO_SMALL.
func (s *Store) CleanExpired(now time.Time, diskUsedRatio float64) (deletedSegments int, err error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	p := s.retentionPolicy(diskUsedRatio)
	if !p.due(now) {
		return 0, nil // decideRetention would pick nothing: no segment needs reading
	}
	s.loadSegmentTimes(now, p.reserved)
	unlock := s.lockWriters()
	defer unlock()
	cl := s.commitLog
	files := cl.mfq.snapshot()
	var guard func(PhysicalOffset) bool
	if g := s.guard.Load(); g != nil {
		guard = *g
	}
	dispatched := s.dispatcher.dispatched()
	if s.entries != nil {
		// Entries above the apply checkpoint are replayed from the log after a
		// restart: their segments stay.
		dispatched = min(dispatched, PhysicalOffset(s.entries.checkpointed.Load()))
	}
	// decideRetention looks at the oldest segments up to the first it keeps (active,
	// referenced or not expired), and at no more than retentionMaxPerCall+1: the
	// others' timestamps, which cost a read of the segment, are not needed.
	var segs []segmentInfo
	for i, f := range files[:min(len(files), retentionMaxPerCall+1)] {
		end := PhysicalOffset(f.start) + PhysicalOffset(cl.segSize)
		seg := segmentInfo{
			start:      PhysicalOffset(f.start),
			active:     i == len(files)-1,
			referenced: (guard != nil && guard(PhysicalOffset(f.start))) || dispatched < end,
		}
		if !seg.active && !seg.referenced {
			seg.lastModified = time.UnixMilli(cl.segmentMaxTimestamp(f))
		}
		segs = append(segs, seg)
		if seg.active || seg.referenced || now.Sub(seg.lastModified) <= p.reserved {
			break
		}
	}
	del := decideRetention(now, segs, p)
	if len(del) == 0 {
		return 0, nil
	}
	s.flushMu.Lock()
	err = cl.deleteFirst(len(del))
	s.flushMu.Unlock()
	newMin := cl.minOffset()
	if s.entries != nil && err == nil {
		// The entries whose entry record was in a deleted segment are gone with
		// it: raft sends a snapshot to a follower that needs them.
		err = s.entries.log.forgetBelowLocked(newMin)
		s.entries.dead.dropBelow(newMin)
	}
	if now.Sub(segs[del[0]].lastModified) <= p.reserved {
		// Only a full disk deletes a segment before fileReservedTime, and its
		// messages may not have been consumed: an operator must hear of it.
		s.log.Warn("disk over diskMaxUsedSpaceRatio: retention deleted a CommitLog segment before fileReservedTime",
			"count", len(del), "min", newMin, "disk_used_ratio", diskUsedRatio, "max_ratio", s.cfg.DiskMaxUsedSpaceRatio)
	} else {
		s.log.Info("retention deleted CommitLog segments", "count", len(del), "min", newMin, "disk_used_ratio", diskUsedRatio)
	}
	if err != nil {
		return len(del), fmt.Errorf("store: retention: %w", err)
	}
	if err := s.dispatcher.deleteBelow(newMin); err != nil {
		return len(del), fmt.Errorf("store: retention below %d: %w", newMin, err)
	}
	return len(del), nil
}

// retentionPolicy is the retention configuration (read under mu: SetRetention
// changes it) with the observed disk usage.
func (s *Store) retentionPolicy(diskUsedRatio float64) retentionPolicy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return retentionPolicy{
		reserved:         s.cfg.FileReservedTime,
		deleteWhenHours:  s.cfg.deleteHours(),
		diskMaxUsedRatio: s.cfg.DiskMaxUsedSpaceRatio,
		diskUsedRatio:    diskUsedRatio,
	}
}

// lockWriters takes the locks retention holds: the Store's write lock and, with the
// entry log, the log's (raft appends to the same segments and their timestamp table).
func (s *Store) lockWriters() (unlock func()) {
	s.mu.Lock()
	if s.entries == nil {
		return s.mu.Unlock
	}
	s.entries.log.mu.Lock()
	return func() {
		s.entries.log.mu.Unlock()
		s.mu.Unlock()
	}
}

// loadSegmentTimes computes the largest STORETIMESTAMP of the segments retention at
// now will look at and whose time is not cached yet (after a start, none is): oldest
// first, up to the first one that has not expired, which decideRetention keeps and
// stops at. Each costs a walk over the segment's records, a read of the whole segment
// when it is not in the page cache, so it runs without the write locks: holding them
// would stop raft's appends for as long as the reads take. A value is kept only if its
// segment is still the one read.
func (s *Store) loadSegmentTimes(now time.Time, reserved time.Duration) {
	cl := s.commitLog
	unlock := s.lockWriters()
	files := cl.mfq.snapshot()
	type known struct {
		f  *mappedFile
		ts int64
		ok bool
	}
	var segs []known
	for _, f := range files[:max(0, min(len(files), retentionMaxPerCall+1)-1)] { // not the active one
		ts, ok := cl.segMaxTs[f.start]
		if !ok && !f.acquire() {
			break
		}
		segs = append(segs, known{f, ts, ok})
	}
	unlock()
	var read []known
	for i := range segs {
		k := &segs[i]
		if !k.ok {
			k.ts = maxStoreTimestamp(k.f)
			read = append(read, *k)
		}
		if now.Sub(time.UnixMilli(k.ts)) <= reserved {
			break // kept: decideRetention stops here
		}
	}
	for _, k := range segs {
		if !k.ok {
			k.f.release()
		}
	}
	if len(read) == 0 {
		return
	}
	unlock = s.lockWriters()
	defer unlock()
	for _, k := range read {
		if cl.mfq.find(k.f.start) == k.f {
			if _, ok := cl.segMaxTs[k.f.start]; !ok {
				cl.segMaxTs[k.f.start] = k.ts
			}
		}
	}
}
