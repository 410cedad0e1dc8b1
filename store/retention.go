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
	force := p.diskUsedRatio > p.diskMaxUsedRatio
	if !force && !slices.Contains(p.deleteWhenHours, now.Hour()) {
		return nil
	}
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries != nil {
		// raft appends to the same segments, and to their timestamp table.
		s.entries.log.mu.Lock()
		defer s.entries.log.mu.Unlock()
	}
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
	segs := make([]segmentInfo, len(files))
	for i, f := range files {
		end := PhysicalOffset(f.start) + PhysicalOffset(cl.segSize)
		segs[i] = segmentInfo{
			start:        PhysicalOffset(f.start),
			lastModified: time.UnixMilli(cl.segmentMaxTimestamp(f)),
			active:       i == len(files)-1,
			referenced:   (guard != nil && guard(PhysicalOffset(f.start))) || dispatched < end,
		}
	}
	del := decideRetention(now, segs, retentionPolicy{
		reserved:         s.cfg.FileReservedTime,
		deleteWhenHours:  s.cfg.deleteHours(),
		diskMaxUsedRatio: s.cfg.DiskMaxUsedSpaceRatio,
		diskUsedRatio:    diskUsedRatio,
	})
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
	if now.Sub(segs[del[0]].lastModified) <= s.cfg.FileReservedTime {
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
