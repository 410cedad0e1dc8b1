package chaos

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/testcluster"
)

// A paced load is the measured-then-paced background load of the in-process
// scenarios that run at load (D7–D9, C1–C5): in-process producers calling
// node.Propose on the ready leader (one message per call, no retries, group
// commit coalescing concurrent calls into multi-message entries), recorded in
// one History the usual checker judges. As in the network scenarios, the
// load first runs flat out to measure the maximum durable rate (an ack means
// fsynced on a quorum), then is paced open loop at a share of it; under a
// third fails the scenario.

const (
	pacedFlatProducers = 16
	// pacedProducers bounds the paced load's concurrency: enough for the
	// target rate at 60 ms per send, the slowest injected fsync plus a round.
	pacedProducers = 32
	pacedShare     = 0.45
	pacedMeasure   = 3 * time.Second
)

// pacedLoad is a group's measured-then-paced load and its History.
type pacedLoad struct {
	t   *testing.T
	c   *testcluster.Cluster
	h   *History
	rep *Report // the scenario's report the load notes into

	topic  string
	queues int32

	maxRate, rate float64
	paced         *inprocWorkload
	stopTokens    chan struct{}
	stopOnce      sync.Once
	tokensDone    sync.WaitGroup
}

// startPacedLoad measures c's maximum durable rate on topic (which must
// exist with queues queues) and leaves the paced load running, measured once
// more before the scenario's fault; it notes both into rep.
func startPacedLoad(t *testing.T, c *testcluster.Cluster, rep *Report, topic string, queues int32) *pacedLoad {
	t.Helper()
	p := &pacedLoad{t: t, c: c, h: &History{}, rep: rep, topic: topic, queues: queues, stopTokens: make(chan struct{})}
	flat := p.workload(nil)
	for i := range pacedFlatProducers {
		flat.wg.Add(1)
		go func() { defer flat.wg.Done(); flat.produce(i, 0) }()
	}
	time.Sleep(time.Second) // warm-up: segments allocated, connections up
	from := time.Now()
	time.Sleep(pacedMeasure)
	p.maxRate = p.throughput(from, time.Now())
	flat.Stop()
	if refused, first := p.refused(); refused > 0 {
		rep.Note("flat out: %d sends refused (first: %s); the checker holds them to not stored", refused, first)
	}
	p.paced = p.workload(nil)
	p.paced.unexpected.Add(flat.unexpected.Load())
	if p.maxRate < 50 {
		t.Fatalf("%s: flat-out load acknowledged only %.0f msgs/s", rep.Scenario, p.maxRate)
	}

	p.rate = pacedShare * p.maxRate
	gate := make(chan struct{}, 16)
	p.paced.gate = gate
	p.tokensDone.Add(1)
	go p.tokens(gate, p.rate)
	for i := range pacedProducers {
		p.paced.wg.Add(1)
		go func() { defer p.paced.wg.Done(); p.paced.produce(100+i, 0) }()
	}
	time.Sleep(time.Second)
	from = time.Now()
	time.Sleep(pacedMeasure)
	got := p.throughput(from, time.Now())
	rep.Note("load: max durable rate %.0f msgs/s (%d in-process producers flat out, one message per Propose, group commit), run at %.0f msgs/s (%.0f%% of max; target %.0f%%) before the fault",
		p.maxRate, pacedFlatProducers, got, 100*got/p.maxRate, 100*pacedShare)
	if got < p.maxRate/3 {
		rep.Fail("paced load ran at %.0f msgs/s, under a third of the max %.0f", got, p.maxRate)
	}
	return p
}

// workload is an inprocWorkload recording into the load's History.
func (p *pacedLoad) workload(gate <-chan struct{}) *inprocWorkload {
	return &inprocWorkload{c: p.c, h: p.h, topic: p.topic, queues: p.queues, stop: make(chan struct{}), gate: gate}
}

// tokens paces the load open loop: rate tokens a second, dropped when every
// producer is busy (so a slow group shows as lower throughput, not as a
// backlog that floods it after the fault).
func (p *pacedLoad) tokens(gate chan<- struct{}, rate float64) {
	defer p.tokensDone.Done()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	begin, issued := time.Now(), 0
	for {
		select {
		case <-p.stopTokens:
			return
		case now := <-tick.C:
			for due := int(rate * now.Sub(begin).Seconds()); issued < due; issued++ {
				select {
				case gate <- struct{}{}:
				default:
				}
			}
		}
	}
}

// stop ends the pacing and the producers; safe to call twice.
func (p *pacedLoad) stop() {
	p.stopOnce.Do(func() { close(p.stopTokens) })
	p.tokensDone.Wait()
	p.paced.Stop()
}

// throughput is the acknowledged sends a second that returned in [from, to).
func (p *pacedLoad) throughput(from, to time.Time) float64 {
	return sendsView(p.h.Sends()).throughput(from, to)
}

// sendsView is one copy of the History's sends. The report lines of a
// scenario read one view, not a copy each: a clock scenario's History holds
// up to 800,000 sends (~100 MB a copy), and C1's leader lost leadership
// right after a report that made twenty copies (likely the garbage, in the
// process that runs all three nodes).
type sendsView []SendOp

func (v sendsView) throughput(from, to time.Time) float64 {
	n := 0
	for _, s := range v {
		if s.Outcome == OK && !s.Return.Before(from) && s.Return.Before(to) {
			n++
		}
	}
	return float64(n) / to.Sub(from).Seconds()
}

// firstAck is how long after t the first send called at or after t was
// acknowledged ("none" if none); History.FirstAckAfter over the view.
func (v sendsView) firstAck(t time.Time) string {
	var first time.Time
	for _, s := range v {
		if s.Outcome == OK && !s.Call.Before(t) && (first.IsZero() || s.Return.Before(first)) {
			first = s.Return
		}
	}
	if first.IsZero() {
		return "none"
	}
	return first.Sub(t).Round(time.Millisecond).String()
}

// latencies are the call → ack times of the sends acknowledged that were
// called in [from, to).
func (v sendsView) latencies(from, to time.Time) Latencies {
	var l Latencies
	for _, s := range v {
		if s.Outcome == OK && !s.Call.Before(from) && s.Call.Before(to) {
			l = append(l, s.Return.Sub(s.Call))
		}
	}
	return l
}

// refused counts the sends refused so far and names the first error.
func (p *pacedLoad) refused() (n int, first string) {
	for _, s := range p.h.Sends() { // early: a small History
		if s.Outcome == Fail {
			if n == 0 {
				first = s.Err
			}
			n++
		}
	}
	return n, first
}

// refusals describes the refused sends by error and when the first of each
// returned, relative to since ("none" if none).
func (v sendsView) refusals(since time.Time) string {
	count := map[string]int{}
	first := map[string]time.Time{}
	var order []string
	for _, s := range v {
		if s.Outcome != Fail {
			continue
		}
		if count[s.Err] == 0 {
			order = append(order, s.Err)
			first[s.Err] = s.Return
		}
		count[s.Err]++
	}
	if len(order) == 0 {
		return "none"
	}
	out := ""
	for i, e := range order {
		if i > 0 {
			out += "; "
		}
		out += fmt.Sprintf("%d × %q (first at %v)", count[e], e, first[e].Sub(since).Round(100*time.Millisecond))
	}
	return out
}

// report adds the throughput and first-ack lines for a fault that ran from
// faultAt to healAt, after the load ran another `after` past the heal.
func (p *pacedLoad) report(label string, faultAt, healAt time.Time, after time.Duration) {
	time.Sleep(after)
	end := time.Now()
	p.reportSpan(sendsView(p.h.Sends()), label, faultAt, healAt, end)
}

// reportSpan is report over the view v, with the end of the after window
// given.
func (p *pacedLoad) reportSpan(v sendsView, label string, faultAt, healAt, end time.Time) {
	p.rep.Note("throughput: before %.0f msgs/s (%v), %s %.0f msgs/s (%v), after %.0f msgs/s (%v)",
		v.throughput(faultAt.Add(-pacedMeasure), faultAt), pacedMeasure, label,
		v.throughput(faultAt, healAt), healAt.Sub(faultAt).Round(100*time.Millisecond),
		v.throughput(healAt, end), end.Sub(healAt).Round(100*time.Millisecond))
	p.rep.Note("fault → first ack of a send called after it %s; heal → first ack %s", v.firstAck(faultAt), v.firstAck(healAt))
	p.rep.Note("ack latency: before %s; %s %s", v.latencies(faultAt.Add(-pacedMeasure), faultAt).Summary(), label, v.latencies(faultAt, healAt).Summary())
}
