package chaos

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// ResetStats is what the consumer checks found around one group's recorded
// offset resets.
type ResetStats struct {
	// Queues is how many (reset, queue) pairs moved the offset back below the
	// committed offset polled just before the reset.
	Queues int
	// Owed is the messages those resets put back: for each, the offsets from
	// the reset point up to the committed offset before it.
	Owed int
	// Redelivered of Owed were delivered again after their reset; Missed were
	// not (and no later reset moved the queue past them).
	Redelivered, Missed int
}

// checkResetRedeliveries is check 5: a reset is an operator asking for
// messages again. For every recorded reset of a queue to R whose committed
// offset, as last observed before the reset, was P > R, every offset in
// [R, P) must be delivered to the group again after the reset. An offset is
// excused only when a later reset set the queue past it (the operator moved
// on). ds is sorted by Start, obs by At.
//
// Check 2 (checkOffsets) holds the other half: from a reset on, every poll is
// at or above the reset point and at or above the poll before it, until the
// next reset; so an offset that a stale commit moved back up, or that the
// reset never replaced, fails there.
func (r *Report) checkResetRedeliveries(gs *GroupStats, ds []Delivery, obs map[QueueKey][]OffsetObs) {
	// latest[q][off] is the latest delivery of q@off (ds is in Start order).
	latest := map[QueueKey]map[int64]Delivery{}
	for _, d := range ds {
		if latest[d.Queue] == nil {
			latest[d.Queue] = map[int64]Delivery{}
		}
		latest[d.Queue][d.Offset] = d
	}
	for _, q := range slices.SortedFunc(maps.Keys(obs), compareQueue) {
		l := obs[q]
		for i, o := range l {
			if !o.Reset || i == 0 {
				continue
			}
			before := l[i-1].Offset
			if o.Offset >= before {
				continue
			}
			gs.Resets.Queues++
			missed := []int64{}
			for off := o.Offset; off < before; off++ {
				d, ok := latest[q][off]
				switch {
				case ok && !d.Start.Before(o.At):
					gs.Resets.Owed++
					gs.Resets.Redelivered++
				case skippedByLaterReset(l[i+1:], off):
				default:
					gs.Resets.Owed++
					gs.Resets.Missed++
					missed = append(missed, off)
				}
			}
			if len(missed) > 0 {
				r.ResetMissed += len(missed)
				r.problem(&r.Examples, fmt.Sprintf("reset not redelivered: group %s %s reset to %d at %s (committed %d before it); %d of the offsets in between never delivered again after it, first @%d",
					gs.Group.Name, q, o.Offset, o.At.Format("15:04:05.000"), before, len(missed), missed[0]))
			}
		}
	}
	r.ResetOwed += gs.Resets.Owed
	r.ResetRedelivered += gs.Resets.Redelivered
	r.ResetQueues += gs.Resets.Queues
}

// resetBetween reports whether a recorded reset in l, made after from and
// at or before to, set the queue at or below off: a delivery of off at to
// that was first delivered at from is then the reset's doing.
func resetBetween(l []OffsetObs, from, to time.Time, off int64) bool {
	for _, o := range l {
		if o.Reset && o.At.After(from) && !o.At.After(to) && o.Offset <= off {
			return true
		}
	}
	return false
}

// skippedByLaterReset reports whether a later reset in l set the queue past off.
func skippedByLaterReset(l []OffsetObs, off int64) bool {
	for _, o := range l {
		if o.Reset && o.Offset > off {
			return true
		}
	}
	return false
}

// ResetsOwed is how many messages the history's recorded resets put back
// that have not been delivered again yet (check 5's misses so far), for a
// scenario waiting for the redeliveries before it finishes.
func ResetsOwed(h *History) int {
	byGroup, obs := consumerView(h)
	var r Report
	for _, g := range h.Groups() {
		gs := GroupStats{Group: g}
		r.checkResetRedeliveries(&gs, byGroup[g.Name], obs[g.Name])
	}
	return r.ResetMissed
}
