package chaos

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"
)

// redeliverySlack bounds how long before a redelivery the queue may have been
// re-pulled: a re-pulled batch waits in the client's process queue behind
// what was pulled before it (at most pullThresholdForQueue, 1024 messages:
// about 2 s at this suite's rates) before the callback sees it; 5 s leaves
// room for a loaded machine.
const redeliverySlack = 5 * time.Second

// GroupStats is one consumer group's figures in a Report.
type GroupStats struct {
	Group      ConsumerGroup
	Deliveries int // callbacks' messages, redeliveries included
	Distinct   int // distinct (queue, offset) delivered
	// Redelivered are deliveries of a (queue, offset) delivered before, by
	// the reason the checker found: after a leader change (the committed
	// offset the queue was re-pulled from was the replicated one, older than
	// the consumer's last commit to the old leader) or after a rebalance with
	// no leader change; Unexplained ones were at or below an offset committed
	// redeliverySlack before they came again, which no re-pull explains.
	// OwnPosition ones came to a consumer continuing its own pull position
	// on a queue another consumer held meanwhile (see ownPositionWindow).
	AfterLeaderChange, AfterRebalance, OwnPosition, Unexplained int
	// AfterReset are redeliveries a recorded reset between the first
	// delivery and this one put back (checker_resets.go).
	AfterReset int
	Resets     ResetStats // checker_resets.go
}

// checkConsumers runs the consumer-side checks over every consumer group the
// history recorded (nothing when it recorded none):
//
//  1. every acknowledged message of the group's topic was delivered to it at
//     least once, and every delivery is the message the replicas hold at its
//     (queue, offset);
//  2. committed offsets never move backwards except through a recorded reset;
//  3. orderly groups: no two consumers' callbacks on one queue overlap in time,
//     and per queue first deliveries come in offset order and no owner steps
//     past an offset nobody delivered;
//  4. every redelivery is explained by a re-pull from the committed offset: it
//     is at or above the group's committed offset of that queue as polled
//     redeliverySlack before it. So at most what was delivered after the last
//     commit that reached the replicas is delivered twice: the client commits
//     every 5 s and the leader replicates offsets every second, so about 6 s of
//     a queue's messages per leader change or rebalance. Or it is explained
//     by a consumer that never gave the queue up resuming its own position
//     (ownPositionWindow);
//  5. after a recorded reset the group gets the messages from the reset point
//     up to the offset committed before it again (checker_resets.go).
func (r *Report) checkConsumers(h *History, ref ReplicaLog) {
	groups := h.Groups()
	if len(groups) == 0 {
		return
	}
	acked := ackedByTopic(h.Sends())
	byGroup, obs := consumerView(h)
	for _, g := range groups {
		ds := byGroup[g.Name]
		gs := GroupStats{Group: g, Deliveries: len(ds)}
		r.Deliveries += len(ds)
		r.checkDelivered(g, ds, acked[g.Topic], ref)
		r.checkOffsets(g, obs[g.Name])
		if g.Kind == Orderly {
			r.checkOrderly(g, ds)
		}
		r.checkRedeliveries(&gs, ds, obs[g.Name])
		r.checkResetRedeliveries(&gs, ds, obs[g.Name])
		r.Groups = append(r.Groups, gs)
	}
}

// consumerView is h's deliveries by group in Start order and its offset
// observations by group and queue in At order.
func consumerView(h *History) (map[string][]Delivery, map[string]map[QueueKey][]OffsetObs) {
	byGroup := map[string][]Delivery{}
	for _, d := range h.Deliveries() {
		byGroup[d.Group] = append(byGroup[d.Group], d)
	}
	for _, ds := range byGroup {
		sort.SliceStable(ds, func(i, j int) bool { return ds[i].Start.Before(ds[j].Start) })
	}
	obs := map[string]map[QueueKey][]OffsetObs{}
	for _, o := range h.Offsets() {
		if obs[o.Group] == nil {
			obs[o.Group] = map[QueueKey][]OffsetObs{}
		}
		obs[o.Group][o.Queue] = append(obs[o.Group][o.Queue], o)
	}
	for _, qs := range obs {
		for _, l := range qs {
			sort.SliceStable(l, func(i, j int) bool { return l[i].At.Before(l[j].At) })
		}
	}
	return byGroup, obs
}

// checkDelivered is check 1.
func (r *Report) checkDelivered(g ConsumerGroup, ds []Delivery, acked map[string]bool, ref ReplicaLog) {
	got := map[string]bool{}
	for _, d := range ds {
		got[d.ID] = true
		ids := ref.Queues[d.Queue]
		if d.Queue.Topic != g.Topic || d.Offset < 0 || d.Offset >= int64(len(ids)) || ids[d.Offset] != d.ID {
			r.DeliveryMismatch++
			r.problem(&r.Examples, fmt.Sprintf("delivery mismatch: group %s got %q as %s@%d (consumer %s at %s); the replicas do not hold it there",
				g.Name, d.ID, d.Queue, d.Offset, d.Consumer, d.Start.Format("15:04:05.000")))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(acked)) {
		if !got[id] {
			r.LostDeliveries++
			r.problem(&r.Examples, fmt.Sprintf("lost delivery: acknowledged %s never delivered to group %s", id, g.Name))
		}
	}
}

// checkOffsets is check 2.
func (r *Report) checkOffsets(g ConsumerGroup, byQueue map[QueueKey][]OffsetObs) {
	for _, q := range slices.SortedFunc(maps.Keys(byQueue), compareQueue) {
		var prev *OffsetObs
		for i := range byQueue[q] {
			o := &byQueue[q][i]
			if o.Reset {
				r.OffsetResets++
				prev = o
				continue
			}
			r.OffsetPolls++
			if prev != nil && o.Offset < prev.Offset {
				r.OffsetRegressions++
				was := fmt.Sprintf("committed %d (%s at %s)", prev.Offset, prev.Addr, prev.At.Format("15:04:05.000"))
				if prev.Reset {
					was = fmt.Sprintf("reset to %d at %s", prev.Offset, prev.At.Format("15:04:05.000"))
				}
				r.problem(&r.Examples, fmt.Sprintf("offset regression: group %s %s %s then %d (%s at %s) with no reset between",
					g.Name, q, was, o.Offset, o.Addr, o.At.Format("15:04:05.000")))
			}
			prev = o
		}
	}
}

// checkOrderly is check 3; ds is sorted by Start.
func (r *Report) checkOrderly(g ConsumerGroup, ds []Delivery) {
	byQueue := map[QueueKey][]Delivery{}
	for _, d := range ds {
		byQueue[d.Queue] = append(byQueue[d.Queue], d)
	}
	for _, q := range slices.SortedFunc(maps.Keys(byQueue), compareQueue) {
		// Overlaps: the latest callback end of each consumer so far, in start order.
		lastEnd := map[string]Delivery{}
		delivered := map[int64]bool{}
		maxFirst := int64(-1)
		ownerLast := map[string]int64{}
		for _, d := range byQueue[q] {
			for c, o := range lastEnd {
				if c != d.Consumer && o.End.After(d.Start) {
					r.OrderlyOverlaps++
					r.problem(&r.Examples, fmt.Sprintf("two owners: group %s %s consumed by %s (@%d, %s–%s) and %s (@%d from %s) at once",
						g.Name, q, c, o.Offset, o.Start.Format("15:04:05.000"), o.End.Format("15:04:05.000"), d.Consumer, d.Offset, d.Start.Format("15:04:05.000")))
					delete(lastEnd, c) // one report per overlap
				}
			}
			if e, ok := lastEnd[d.Consumer]; !ok || d.End.After(e.End) {
				lastEnd[d.Consumer] = d
			}
			prev, owned := ownerLast[d.Consumer]
			if !owned {
				prev = -1
			}
			for off := prev + 1; off < d.Offset; off++ {
				if !delivered[off] {
					r.OrderlyOutOfOrder++
					r.problem(&r.Examples, fmt.Sprintf("orderly skip: group %s consumer %s went %s@%d → @%d while @%d was not delivered yet",
						g.Name, d.Consumer, q, prev, d.Offset, off))
					break
				}
			}
			ownerLast[d.Consumer] = d.Offset
			if !delivered[d.Offset] {
				if d.Offset < maxFirst {
					r.OrderlyOutOfOrder++
					r.problem(&r.Examples, fmt.Sprintf("orderly order: group %s first delivered %s@%d (by %s at %s) after @%d",
						g.Name, q, d.Offset, d.Consumer, d.Start.Format("15:04:05.000"), maxFirst))
				}
				delivered[d.Offset] = true
				maxFirst = max(maxFirst, d.Offset)
			}
		}
	}
}

// ownPositionWindow is how far from the highest offset a consumer had
// delivered on a queue a redelivery to it of an offset it never had itself
// still counts as that consumer continuing its own pull position: the Go
// client buffers up to 1,024 messages of a queue (PullThresholdForQueue) and
// consumes them on 20 goroutines, so its callbacks do not come in offset order.
// Found by K3: after a kill-all, client c1's long poll on q3 waited out its
// request timeout (the Go client does not fail a request whose connection
// dies); meanwhile c0, seeing only itself in the group, took q3 from its
// committed offset, consumed a batch, committed past it and gave q3 back;
// c1's next pull went on from its own position, below that commit. That is a
// rebalance's two owners, not a committed offset going back, and no broker
// answer can prevent it.
const ownPositionWindow = 1024

// checkRedeliveries is check 4; ds is sorted by Start, obs by At.
func (r *Report) checkRedeliveries(gs *GroupStats, ds []Delivery, obs map[QueueKey][]OffsetObs) {
	type msgKey struct {
		q   QueueKey
		off int64
	}
	type posKey struct {
		consumer string
		q        QueueKey
	}
	type ownKey struct {
		consumer string
		m        msgKey
	}
	first := map[msgKey]Delivery{}
	highest := map[posKey]int64{} // per consumer and queue, the highest offset delivered so far
	had := map[ownKey]bool{}      // what each consumer was delivered
	for _, d := range ds {
		k := msgKey{d.Queue, d.Offset}
		pk := posKey{d.Consumer, d.Queue}
		top, hadQueue := highest[pk]
		if !hadQueue || d.Offset > top {
			highest[pk] = d.Offset
		}
		hadOwn := had[ownKey{d.Consumer, k}]
		had[ownKey{d.Consumer, k}] = true
		ownStream := hadQueue && !hadOwn && d.Offset > top-ownPositionWindow && d.Offset <= top+ownPositionWindow
		f, seen := first[k]
		if !seen {
			first[k] = d
			continue
		}
		r.Redelivered++
		l := obs[d.Queue]
		committed, known := committedBefore(l, d.Start.Add(-redeliverySlack), d.Start)
		switch {
		case known && d.Offset < committed && ownStream:
			gs.OwnPosition++
		case known && d.Offset < committed:
			gs.Unexplained++
			r.RedeliveredUnexplained++
			r.problem(&r.Examples, fmt.Sprintf("unexplained redelivery: group %s %s@%d again to %s at %s (first to %s at %s), below offset %d committed by %s",
				gs.Group.Name, d.Queue, d.Offset, d.Consumer, d.Start.Format("15:04:05.000"), f.Consumer, f.Start.Format("15:04:05.000"),
				committed, d.Start.Add(-redeliverySlack).Format("15:04:05.000")))
		case resetBetween(l, f.Start, d.Start, d.Offset):
			gs.AfterReset++
		case leaderChanged(l, f.Start, d.Start):
			gs.AfterLeaderChange++
		default:
			gs.AfterRebalance++
		}
	}
	gs.Distinct = len(first)
}

// committedBefore is the lowest committed offset a re-pull at or after from
// can have started from: the last observation at or before from, lowered by
// any observation in (from, to] (a reset, or a regression check 2 reports).
func committedBefore(l []OffsetObs, from, to time.Time) (int64, bool) {
	var c int64
	known := false
	for _, o := range l {
		if o.At.After(to) {
			break
		}
		switch {
		case !o.At.After(from):
			c, known = o.Offset, true
		case !known || o.Offset < c:
			c, known = o.Offset, true
		}
	}
	return c, known
}

// leaderChanged reports whether the node answering the offset polls changed
// between from and to (brokerId 0 moved: a failover or a transfer).
func leaderChanged(l []OffsetObs, from, to time.Time) bool {
	addr := ""
	for _, o := range l {
		if o.Reset || o.At.After(to) {
			continue
		}
		if o.At.Before(from) {
			addr = o.Addr
			continue
		}
		if addr != "" && o.Addr != addr {
			return true
		}
		addr = o.Addr
	}
	return false
}
