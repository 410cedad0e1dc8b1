package chaos

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"
)

// maxExamples bounds the examples a Report keeps per kind of problem.
const maxExamples = 5

// Check judges a history against the replicas' final logs (reliability-plan.md,
// checks 1-6, 8 and 9; check 7's group offsets are not used by this workload, its
// per-session advance is PollSkips). logs[0] is the reference; the others must be
// identical to it. drain, when not nil, is what a final pull from offset 0 of every
// queue returned and must equal the reference.
func Check(h *History, logs []ReplicaLog, drain map[QueueKey][]string) Report {
	var r Report
	if len(logs) == 0 {
		r.problem(&r.ReplicaDiffs, "no replica logs to check")
		return r
	}
	ref := logs[0]
	r.Replicas = len(logs)
	r.Identical = 1
	for _, l := range logs[1:] {
		if d := diffReplicas(ref, l); d != "" {
			r.problem(&r.ReplicaDiffs, d)
		} else {
			r.Identical++
		}
	}

	// Where each id sits in the reference log.
	type pos struct {
		q   QueueKey
		off int64
	}
	where := map[string][]pos{}
	for q, ids := range ref.Queues {
		for off, id := range ids {
			where[id] = append(where[id], pos{q, int64(off)})
		}
	}
	sends := h.Sends()
	attempts := map[string][]SendOp{}
	for _, s := range sends {
		attempts[s.ID] = append(attempts[s.ID], s)
	}

	r.Attempted = len(attempts)
	for _, id := range slices.Sorted(maps.Keys(attempts)) {
		ops := attempts[id]
		present := len(where[id]) > 0
		var okOps []SendOp
		unknown := false
		for _, s := range ops {
			switch s.Outcome {
			case OK:
				okOps = append(okOps, s)
			case Unknown:
				unknown = true
			}
		}
		switch {
		case len(okOps) > 0:
			r.Acked++
			for _, s := range okOps {
				ids := ref.Queues[s.Queue]
				switch {
				case s.Offset >= 0 && s.Offset < int64(len(ids)) && ids[s.Offset] == id:
				case present:
					r.OffsetMismatch++
					r.problem(&r.Examples, fmt.Sprintf("offset mismatch: %s acked at %s@%d, log has it at %v", id, s.Queue, s.Offset, where[id]))
				default:
					r.LostAcked++
					r.problem(&r.Examples, fmt.Sprintf("lost ack: %s acked at %s@%d by %s (%s) is in no queue", id, s.Queue, s.Offset, s.Client, s.Addr))
				}
			}
		case unknown:
			r.Unknown++
			if present {
				r.Recovered++
			} else {
				r.NotApplied++
			}
		default:
			r.Failed++
			if present {
				r.FailedPresent++
				r.problem(&r.Examples, fmt.Sprintf("refused but stored: %s (errors %q) is at %v", id, ops[len(ops)-1].Err, where[id]))
			}
		}
		if n := len(where[id]); n > 1 {
			extra := n - 1
			if n <= len(ops) {
				r.RetryDuplicates += extra
			} else {
				r.Duplicates += extra
				r.problem(&r.Examples, fmt.Sprintf("duplicate: %s stored %d times after %d attempts: %v", id, n, len(ops), where[id]))
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(where)) {
		if _, sent := attempts[id]; !sent {
			r.Phantom++
			r.problem(&r.Examples, fmt.Sprintf("phantom: %q at %v was sent by nobody", id, where[id]))
		}
	}

	r.checkReads(h.Reads(), ref)
	r.checkOrder(sends)
	r.checkConsumers(h, ref)
	if drain != nil {
		r.Drained = true
		for _, q := range slices.SortedFunc(maps.Keys(unionKeys(ref.Queues, drain)), compareQueue) {
			if !slices.Equal(ref.Queues[q], drain[q]) {
				r.DrainMismatch++
				r.problem(&r.Examples, fmt.Sprintf("final drain of %s returned %d messages, replicas hold %d", q, len(drain[q]), len(ref.Queues[q])))
			}
		}
	}
	return r
}

func (r *Report) checkReads(reads []ReadOp, ref ReplicaLog) {
	type sessionKey struct {
		client  string
		session int
		q       QueueKey
	}
	last := map[sessionKey]int64{}
	for _, rd := range reads {
		r.Reads++
		ids := ref.Queues[rd.Queue]
		if rd.Offset < 0 || rd.Offset >= int64(len(ids)) || ids[rd.Offset] != rd.ID {
			r.VisibleThenLost++
			r.problem(&r.Examples, fmt.Sprintf("visible then lost: %s read %s at %s@%d at %s", rd.Client, rd.ID, rd.Queue, rd.Offset, rd.At.Format("15:04:05.000")))
		}
		k := sessionKey{rd.Client, rd.Session, rd.Queue}
		if prev, ok := last[k]; ok && rd.Offset != prev+1 {
			r.PollSkips++
			r.problem(&r.Examples, fmt.Sprintf("poll skip: %s session %d on %s went %d → %d", rd.Client, rd.Session, rd.Queue, prev, rd.Offset))
		}
		last[k] = rd.Offset
	}
}

// checkOrder verifies real-time order per queue: if a returned before b was
// called, a's offset is below b's.
func (r *Report) checkOrder(sends []SendOp) {
	byQueue := map[QueueKey][]SendOp{}
	for _, s := range sends {
		if s.Outcome == OK {
			byQueue[s.Queue] = append(byQueue[s.Queue], s)
		}
	}
	for _, q := range slices.SortedFunc(maps.Keys(byQueue), compareQueue) {
		ops := byQueue[q]
		sort.Slice(ops, func(i, j int) bool { return ops[i].Return.Before(ops[j].Return) })
		// prefixMax[i] = op with the highest offset among ops[0..i].
		prefixMax := make([]int, len(ops))
		for i := range ops {
			prefixMax[i] = i
			if i > 0 && ops[prefixMax[i-1]].Offset > ops[i].Offset {
				prefixMax[i] = prefixMax[i-1]
			}
		}
		for _, b := range ops {
			// ops[:n] returned strictly before b was called.
			n := sort.Search(len(ops), func(i int) bool { return !ops[i].Return.Before(b.Call) })
			if n == 0 {
				continue
			}
			if a := ops[prefixMax[n-1]]; a.Offset >= b.Offset {
				r.OrderViolations++
				r.problem(&r.Examples, fmt.Sprintf("real-time order: %s acked at %s@%d returned %s, before %s was called (%s) and acked at offset %d",
					a.ID, q, a.Offset, a.Return.Format("15:04:05.000000"), b.ID, b.Call.Format("15:04:05.000000"), b.Offset))
			}
		}
	}
}

// diffReplicas describes the first differences between two replicas, "" if none.
func diffReplicas(a, b ReplicaLog) string {
	for _, q := range slices.SortedFunc(maps.Keys(unionKeys(a.Queues, b.Queues)), compareQueue) {
		x, y := a.Queues[q], b.Queues[q]
		if len(x) != len(y) {
			return fmt.Sprintf("%s vs %s: queue %s has %d vs %d messages", a.Node, b.Node, q, len(x), len(y))
		}
		for i := range x {
			if x[i] != y[i] {
				return fmt.Sprintf("%s vs %s: queue %s offset %d holds %q vs %q", a.Node, b.Node, q, i, x[i], y[i])
			}
		}
	}
	// CommitLog bytes over the range both hold.
	lo := max(a.CommitLogMin, b.CommitLogMin)
	hiA, hiB := a.CommitLogMin+int64(len(a.CommitLog)), b.CommitLogMin+int64(len(b.CommitLog))
	hi := hiA
	switch {
	case a.RaftLog || b.RaftLog:
		hi = min(hiA, hiB) // the raft log's tail may differ in length: compare what both hold
	case hiA != hiB:
		return fmt.Sprintf("%s vs %s: CommitLog max offset %d vs %d", a.Node, b.Node, hiA, hiB)
	}
	if lo > hi {
		return ""
	}
	xa, xb := a.CommitLog[lo-a.CommitLogMin:hi-a.CommitLogMin], b.CommitLog[lo-b.CommitLogMin:hi-b.CommitLogMin]
	if !bytes.Equal(xa, xb) {
		i := 0
		for i < len(xa) && xa[i] == xb[i] {
			i++
		}
		return fmt.Sprintf("%s vs %s: CommitLog bytes differ first at offset %d", a.Node, b.Node, lo+int64(i))
	}
	return ""
}

func unionKeys(a, b map[QueueKey][]string) map[QueueKey]bool {
	u := map[QueueKey]bool{}
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

func compareQueue(a, b QueueKey) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.QueueID - b.QueueID)
}

// Latencies summarises failover measurements.
type Latencies []time.Duration

// Percentile returns the p-th percentile (0-100, nearest rank); 0 when empty.
func (l Latencies) Percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	rank := int(p/100*float64(len(s)) + 0.999999)
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// Summary is "p50 … p99 … max … (n=…)".
func (l Latencies) Summary() string {
	if len(l) == 0 {
		return "n/a"
	}
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("p50 %v p99 %v max %v (n=%d)", r(l.Percentile(50)), r(l.Percentile(99)), r(l.Percentile(100)), len(l))
}
