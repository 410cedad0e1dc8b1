package chaos

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// consumerDrainStall is how long a group that still misses acknowledged
// messages may go without being delivered one of them before finish gives up
// on it: an orderly group of two consumers gets no lock from a new leader for
// its grace window (LockExpiry 60 s + 5 s slack, docs/decisions/0003), then the
// clients renew within orderlyLockRenew; a concurrent group's clients refresh
// routes every 30 s. consumerDrainWait caps the whole wait: an orderly group
// drains a queue at under 1,000 messages a second (its callback sleeps 1 ms,
// one message at a time) and gets none during a kill series (every leader
// change reopens the window), so its backlog after K1 on a fast machine takes
// over a minute (the fixed 120 s wait this replaced failed K1 and K2 with
// every group still consuming at full speed).
const (
	consumerDrainStall = 90 * time.Second
	consumerDrainWait  = 8 * time.Minute
)

// consumerWarmup bounds the wait for the concurrent group's first
// consumerWarmupMsgs deliveries at the start of a scenario.
const (
	consumerWarmup     = 15 * time.Second
	consumerWarmupMsgs = 50
)

// orderlyScenarios are the scenarios whose leader changes, where the full
// matrix also runs an orderly group: kills, a pause, partitions, the stale
// leader, a blackholed leader.
var orderlyScenarios = map[string]bool{"K1": true, "K2": true, "P1": true, "N1": true, "N3": true, "R1": true, "R2": true}

// envConsumerHistory names a file the consumer side of a scenario's history
// is written to also when it passes (groups, deliveries, offset polls), for
// studying redeliveries and offsets around faults.
const envConsumerHistory = "ROCKETRAFT_CHAOS_CONSUMER_HISTORY"

// startConsumers runs the scenario's consumer groups on every topic its
// history acknowledges sends to (the workload's and, once it starts, the load's).
// It waits until the concurrent group has consumed a few messages, so the
// scenario's first fault finds it consuming (the orderly group gets its first
// locks only after the leader's grace window, docs/decisions/0003).
//
// Every scenario runs the concurrent group. The orderly group runs in the full
// matrix's leader-change scenarios (orderlyScenarios) only: it gets no lock for
// a new leader's grace window (60 s lock expiry + 5 s), so it adds over a
// minute of final wait to a scenario, and where the leader changes is where
// two owners of one queue could appear.
func (s *scenario) startConsumers() {
	kinds := []GroupKind{Concurrent}
	if isFull() && orderlyScenarios[s.id] {
		kinds = append(kinds, Orderly)
	}
	s.cons = StartConsumers(s.c, s.w.History(), kinds...)
	deadline := time.Now().Add(consumerWarmup)
	for time.Now().Before(deadline) {
		n := 0
		for _, d := range s.w.History().Deliveries() {
			if d.Group == groupName(s.w.Topic(), Concurrent) {
				n++
			}
		}
		if n >= consumerWarmupMsgs {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.rep.Note("consumers: the concurrent group consumed fewer than %d messages in %v before the fault", consumerWarmupMsgs, consumerWarmup)
}

// drainConsumers waits until every group has every acknowledged message, then
// stops the consumers (the producers have stopped, the cluster has healed).
func (s *scenario) drainConsumers() {
	if s.cons == nil {
		return
	}
	for _, e := range s.cons.Errors() {
		s.rep.Fail("consumer group: %s", e)
	}
	from := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), consumerDrainWait)
	defer cancel()
	if err := s.cons.WaitDelivered(ctx, consumerDrainStall); err != nil {
		s.rep.Note("consumers: %v", err) // the checker counts what is missing as lost deliveries
	} else {
		s.rep.Note("consumers: every group had every acknowledged message %v after healing", time.Since(from).Round(100*time.Millisecond))
	}
	s.cons.Stop()
	if path := os.Getenv(envConsumerHistory); path != "" {
		_ = os.WriteFile(path, []byte(consumerHistoryText(s.w.History())), 0o644)
	}
}

// consumerHistoryText is the consumer side of a kept history.txt.
func consumerHistoryText(h *History) string {
	var b strings.Builder
	for _, g := range h.Groups() {
		fmt.Fprintf(&b, "group %s %s %s\n", g.Name, g.Kind, g.Topic)
	}
	for _, d := range h.Deliveries() {
		fmt.Fprintf(&b, "deliver %s %s %s@%d %s %s %s\n", d.Group, d.Consumer, d.Queue, d.Offset, d.ID,
			d.Start.Format(time.RFC3339Nano), d.End.Format(time.RFC3339Nano))
	}
	for _, o := range h.Offsets() {
		fmt.Fprintf(&b, "offset %s %s %d reset=%v addr=%s %s\n", o.Group, o.Queue, o.Offset, o.Reset, o.Addr, o.At.Format(time.RFC3339Nano))
	}
	return b.String()
}
