package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A paced load is the background load of the in-process scenarios (D1, D2,
// D7–D9, C1–C5): the same Load as the process-based scenarios' (load.go; 4
// rocketmq-client-go, 12 raw and, where a JVM and the built module are
// there, 4 Java rocketmq-client 4.9.8 producers), sending over loopback TCP
// to the real brokers of the scenario's inprocGroup through its in-process
// nameserver, recorded in one History the usual checker judges. As in the
// network scenarios, it first runs flat out to measure the maximum durable
// rate (an ack means fsynced on a quorum), then is paced to a share of it;
// under a third fails the scenario.

// pacedShare is the process scenarios' share (load_test.go), so the
// in-process figures compare with theirs.
const (
	pacedShare   = loadShare
	pacedMeasure = loadBench
)

// pacedLoad is a group's measured-then-paced real-client load and its History.
type pacedLoad struct {
	t   *testing.T
	g   *inprocGroup
	h   *History
	rep *Report // the scenario's report the load notes into

	load    *Load
	level   LoadLevel
	maxRate float64
	stopped bool
}

// startPacedLoad creates topic with queues queues through the brokers,
// measures g's maximum durable rate with the real clients and leaves the load
// running paced; it notes the level into rep (and fails rep under a third).
func startPacedLoad(t *testing.T, g *inprocGroup, rep *Report, topic string, queues int32) *pacedLoad {
	t.Helper()
	g.createTopic(topic, queues)
	p := &pacedLoad{t: t, g: g, h: &History{}, rep: rep}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	java := javaOptions(t.TempDir())
	o := LoadOptions{Topic: topic, Queues: int(queues), History: p.h, GoProducers: loadGoProducers, RawProducers: loadRawProducers,
		Java: java, Share: pacedShare, Warmup: loadWarmup, Bench: loadBench, Tries: loadTries, Rounds: loadRounds}
	var err error
	if p.load, err = StartLoad(ctx, g.view, o); err != nil {
		t.Fatalf("%s: load: %v", rep.Scenario, err)
	}
	t.Cleanup(p.stop) // before the brokers close (last in, first out)
	if p.level, err = p.load.Measure(ctx); err != nil {
		t.Fatalf("%s: load: %v", rep.Scenario, err)
	}
	if java == nil {
		p.level.JavaSkipped = envJava + "=off"
	}
	if p.level.JavaSkipped != "" {
		t.Logf("%s: load without Java producers: %s", rep.Scenario, p.level.JavaSkipped)
	}
	p.maxRate = p.level.Max
	rep.Note("load: %s", p.level)
	if p.level.BelowFloor() {
		rep.Fail("load ran at %.0f msgs/s in the best of %d windows of %v, below a third of the measured maximum %.0f msgs/s, in each of %d rounds (%s)",
			p.level.Achieved, p.level.Windows, loadBench, p.level.Max, p.level.Rounds, strings.Join(p.level.Earlier, ", "))
	}
	return p
}

// stop ends the load (the JVM answers or times out every send in flight);
// a Java producer whose output broke the protocol fails the scenario (a send
// may be missing from the history). Safe to call twice.
func (p *pacedLoad) stop() {
	if p.stopped {
		return
	}
	p.stopped = true
	if err := p.load.Stop(); err != nil {
		p.rep.Fail("load: %v", err)
	}
}

// waitAcks waits until n sends called after since were acknowledged.
func (p *pacedLoad) waitAcks(since time.Time, n int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p.h.AcksCalledSince(since) >= n {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// noteJava says what the Java producers did, or why they did not run, with
// their first ack after each of faults.
func (p *pacedLoad) noteJava(v sendsView, faults ...time.Time) {
	p.rep.Note("%s", javaNote(p.level, p.load.Topic(), v, faults))
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
	p.noteJava(v, faultAt)
}
