package chaos

import (
	"fmt"
	"strings"
	"time"
)

// Report is the outcome of Check plus what the scenario adds (duration, faults,
// failover figures, notes); String prints reliability-plan.md's block.
type Report struct {
	Scenario string
	Duration time.Duration
	Seed     int64
	Faults   string // e.g. "kills 20"

	// Sends, counted per unique id (retries of one id count once).
	Attempted, Acked, Failed, Unknown, Recovered, NotApplied int
	// FailedPresent: ids the broker clearly refused that are stored anyway.
	FailedPresent int

	LostAcked, Duplicates, RetryDuplicates, Phantom, OffsetMismatch int
	Reads, VisibleThenLost, PollSkips, OrderViolations              int
	Drained                                                         bool
	DrainMismatch                                                   int

	Replicas, Identical int
	ReplicaDiffs        []string

	// Consumer side (checker_consumers.go), over every group the history
	// recorded: deliveries and what is wrong with them.
	Groups                                       []GroupStats
	Deliveries, LostDeliveries, DeliveryMismatch int
	OffsetPolls, OffsetResets, OffsetRegressions int
	OrderlyOverlaps, OrderlyOutOfOrder           int
	Redelivered, RedeliveredUnexplained          int
	// Offset resets (checker_resets.go): queues moved back, the messages that
	// put back, how many came again after the reset and how many did not.
	ResetQueues, ResetOwed, ResetRedelivered, ResetMissed int

	// Failover: kill → first acked send on the new leader; NSFailover: kill → new
	// leader listed as brokerId 0 on the nameserver.
	Failover, NSFailover Latencies

	Examples []string // first problems of each run, for the failure message
	Notes    []string // scenario-specific findings (pass criteria beyond the checks)
	Failures []string // scenario-specific failed criteria
}

func (r *Report) problem(list *[]string, s string) {
	if len(*list) < 4*maxExamples {
		*list = append(*list, s)
	}
}

// Fail records a failed scenario criterion.
func (r *Report) Fail(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// Note records a finding that is not a failure.
func (r *Report) Note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// OK reports whether every check and scenario criterion passed.
func (r *Report) OK() bool {
	return r.LostAcked == 0 && r.Duplicates == 0 && r.Phantom == 0 && r.OffsetMismatch == 0 &&
		r.VisibleThenLost == 0 && r.PollSkips == 0 && r.OrderViolations == 0 && r.DrainMismatch == 0 &&
		r.FailedPresent == 0 && r.Replicas > 0 && r.Identical == r.Replicas && len(r.Failures) == 0 &&
		r.LostDeliveries == 0 && r.DeliveryMismatch == 0 && r.OffsetRegressions == 0 &&
		r.OrderlyOverlaps == 0 && r.OrderlyOutOfOrder == 0 && r.RedeliveredUnexplained == 0 &&
		r.ResetMissed == 0
}

// String is the report block of reliability-plan.md, followed by notes and problems.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s  duration %v  seed %d", r.Scenario, r.Duration.Round(time.Second), r.Seed)
	if r.Faults != "" {
		fmt.Fprintf(&b, "  %s", r.Faults)
	}
	fmt.Fprintf(&b, "\nsends: attempted %d | acked %d | failed %d | unknown %d (recovered %d, not applied %d)",
		r.Attempted, r.Acked, r.Failed, r.Unknown, r.Recovered, r.NotApplied)
	if r.FailedPresent > 0 {
		fmt.Fprintf(&b, " | refused-but-stored %d", r.FailedPresent)
	}
	fmt.Fprintf(&b, "\nlost acked: %d  duplicates: %d (retry-induced: %d)  phantom: %d  offset mismatches: %d  order violations: %d",
		r.LostAcked, r.Duplicates, r.RetryDuplicates, r.Phantom, r.OffsetMismatch, r.OrderViolations)
	drain := "not run"
	if r.Drained {
		drain = fmt.Sprintf("%d mismatches", r.DrainMismatch)
	}
	fmt.Fprintf(&b, "\nreads: %d ok | visible-then-lost: %d | poll-skips: %d | final drain: %s",
		r.Reads-r.VisibleThenLost, r.VisibleThenLost, r.PollSkips, drain)
	if len(r.Groups) > 0 {
		fmt.Fprintf(&b, "\nconsumers: groups %d | deliveries %d | lost deliveries %d | mismatched %d | offset regressions %d (polls %d, resets %d) | two-owner overlaps %d | orderly out of order %d | redelivered %d (unexplained %d)",
			len(r.Groups), r.Deliveries, r.LostDeliveries, r.DeliveryMismatch, r.OffsetRegressions, r.OffsetPolls, r.OffsetResets,
			r.OrderlyOverlaps, r.OrderlyOutOfOrder, r.Redelivered, r.RedeliveredUnexplained)
		if r.OffsetResets > 0 {
			fmt.Fprintf(&b, "\nresets: %d recorded | queues moved back %d | messages put back %d | redelivered after the reset %d | missed %d",
				r.OffsetResets, r.ResetQueues, r.ResetOwed, r.ResetRedelivered, r.ResetMissed)
		}
		for _, g := range r.Groups {
			fmt.Fprintf(&b, "\ngroup %s (%s, %s): %d deliveries of %d messages, duplicates %d (after a leader change %d, after a rebalance %d, own position resumed %d, unexplained %d)",
				g.Group.Name, g.Group.Kind, g.Group.Topic, g.Deliveries, g.Distinct, g.Deliveries-g.Distinct, g.AfterLeaderChange, g.AfterRebalance, g.OwnPosition, g.Unexplained)
			if g.Resets.Queues > 0 || g.AfterReset > 0 {
				fmt.Fprintf(&b, "; after a reset %d; resets moved %d queue(s) back, %d messages put back, %d redelivered, %d missed",
					g.AfterReset, g.Resets.Queues, g.Resets.Owed, g.Resets.Redelivered, g.Resets.Missed)
			}
		}
	}
	fmt.Fprintf(&b, "\nreplicas: %d/%d identical", r.Identical, r.Replicas)
	if len(r.Failover) > 0 {
		fmt.Fprintf(&b, "   failover (kill → first ack on new leader) %s", r.Failover.Summary())
	}
	if len(r.NSFailover) > 0 {
		fmt.Fprintf(&b, "\nnameserver failover (kill → new brokerId 0 listed) %s", r.NSFailover.Summary())
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\nnote: %s", n)
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "\nFAILED: %s", f)
	}
	for _, d := range r.ReplicaDiffs {
		fmt.Fprintf(&b, "\nreplica diff: %s", d)
	}
	for i, e := range r.Examples {
		if i == 3*maxExamples {
			fmt.Fprintf(&b, "\n… %d more", len(r.Examples)-i)
			break
		}
		fmt.Fprintf(&b, "\nproblem: %s", e)
	}
	return b.String()
}
