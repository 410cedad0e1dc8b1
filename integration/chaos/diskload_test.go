package chaos

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/internal/testcluster"
)

// The disk-at-load scenarios (D7–D9, scenarios_diskload_test.go) run an
// in-process group over loopback TCP with a testcluster.Disk under every
// node (raft log segments and CommitLog), because the faults sit under the
// node's files where a separate process cannot be reached. Their load is
// in-process producers calling node.Propose on the ready leader (one message
// per call, no retries, group commit coalescing concurrent calls into
// multi-message entries), recorded in one History the usual checker judges.
// As in the network scenarios, the load first runs flat out to measure the
// maximum durable rate (an ack means fsynced on a quorum), then is paced
// open loop at a share of it; under a third fails the scenario.

const (
	diskLoadTopic     = "ChaosDiskLoad"
	diskLoadQueues    = 8
	diskFlatProducers = 16
	// diskPacedProducers bounds the paced load's concurrency: enough for the
	// target rate at 60 ms per send, the slowest injected fsync plus a round.
	diskPacedProducers = 32
	diskLoadShare      = 0.45
	diskMeasure        = 3 * time.Second
)

// diskLoad is one disk-at-load scenario's group, load and leadership record.
type diskLoad struct {
	t     *testing.T
	c     *testcluster.Cluster
	disks *testcluster.DiskFaults
	h     *History
	rep   Report
	start time.Time

	maxRate, rate float64
	paced         *inprocWorkload
	stopTokens    chan struct{}
	tokensDone    sync.WaitGroup

	leaders *leaderLog
}

// startDiskLoad starts the group, measures the maximum durable rate and
// leaves the paced load running, measured once more before the fault.
func startDiskLoad(t *testing.T, scenario string) *diskLoad {
	t.Helper()
	d := &diskLoad{t: t, start: time.Now(), h: &History{}, stopTokens: make(chan struct{})}
	d.rep = Report{Scenario: scenario, Seed: d.start.UnixNano() % 1000}
	d.disks = testcluster.NewDiskFaults(nil)
	d.c = testcluster.New(t, 3, testcluster.Options{TCP: true, Configure: d.disks.Configure, Logger: inprocLogger()})
	d.c.CreateTopic(diskLoadTopic, diskLoadQueues)
	d.leaders = watchLeaders(d.c)
	t.Cleanup(d.leaders.stop)

	flat := d.workload(nil)
	for p := range diskFlatProducers {
		flat.wg.Add(1)
		go func() { defer flat.wg.Done(); flat.produce(p, 0) }()
	}
	time.Sleep(time.Second) // warm-up: segments allocated, connections up
	from := time.Now()
	time.Sleep(diskMeasure)
	d.maxRate = d.throughput(from, time.Now())
	flat.Stop()
	d.paced = d.workload(nil)
	d.paced.unexpected.Add(flat.unexpected.Load())
	if d.maxRate < 50 {
		t.Fatalf("%s: flat-out load acknowledged only %.0f msgs/s", scenario, d.maxRate)
	}

	d.rate = diskLoadShare * d.maxRate
	gate := make(chan struct{}, 16)
	d.paced.gate = gate
	d.tokensDone.Add(1)
	go d.tokens(gate, d.rate)
	for p := range diskPacedProducers {
		d.paced.wg.Add(1)
		go func() { defer d.paced.wg.Done(); d.paced.produce(100+p, 0) }()
	}
	time.Sleep(time.Second)
	from = time.Now()
	time.Sleep(diskMeasure)
	got := d.throughput(from, time.Now())
	d.rep.Note("load: max durable rate %.0f msgs/s (%d in-process producers flat out, one message per Propose, group commit), run at %.0f msgs/s (%.0f%% of max; target %.0f%%) before the fault",
		d.maxRate, diskFlatProducers, got, 100*got/d.maxRate, 100*diskLoadShare)
	if got < d.maxRate/3 {
		d.rep.Fail("paced load ran at %.0f msgs/s, under a third of the max %.0f", got, d.maxRate)
	}
	return d
}

// workload is an inprocWorkload recording into the scenario's History.
func (d *diskLoad) workload(gate <-chan struct{}) *inprocWorkload {
	return &inprocWorkload{c: d.c, h: d.h, topic: diskLoadTopic, queues: diskLoadQueues, stop: make(chan struct{}), gate: gate}
}

// tokens paces the load open loop: rate tokens a second, dropped when every
// producer is busy (so a slow group shows as lower throughput, not as a
// backlog that floods it after the fault).
func (d *diskLoad) tokens(gate chan<- struct{}, rate float64) {
	defer d.tokensDone.Done()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	begin, issued := time.Now(), 0
	for {
		select {
		case <-d.stopTokens:
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

// throughput is the acknowledged sends a second that returned in [from, to).
func (d *diskLoad) throughput(from, to time.Time) float64 {
	n := 0
	for _, s := range d.h.Sends() {
		if s.Outcome == OK && !s.Return.Before(from) && s.Return.Before(to) {
			n++
		}
	}
	return float64(n) / to.Sub(from).Seconds()
}

// firstAck is how long after t the first send called at or after t was
// acknowledged ("none" if none).
func (d *diskLoad) firstAck(t time.Time) string {
	first := d.h.FirstAckAfter(t, "p")
	if first.IsZero() {
		return "none"
	}
	return first.Sub(t).Round(time.Millisecond).String()
}

// pick returns the ready leader and one follower.
func (d *diskLoad) pick() (leader, follower *testcluster.Member) {
	leader = d.c.WaitLeader(10 * time.Second)
	for _, m := range d.c.Members() {
		if m.ID != leader.ID {
			return leader, m
		}
	}
	d.t.Fatal("no follower")
	return nil, nil
}

// report adds the throughput and first-ack lines for a fault that ran from
// faultAt to healAt, after the load ran another `after` past the heal.
func (d *diskLoad) report(label string, faultAt, healAt time.Time, after time.Duration) {
	time.Sleep(after)
	end := time.Now()
	d.rep.Note("throughput: before %.0f msgs/s (%v), %s %.0f msgs/s (%v), after %.0f msgs/s (%v)",
		d.throughput(faultAt.Add(-diskMeasure), faultAt), diskMeasure, label,
		d.throughput(faultAt, healAt), healAt.Sub(faultAt).Round(100*time.Millisecond),
		d.throughput(healAt, end), end.Sub(healAt).Round(100*time.Millisecond))
	d.rep.Note("fault → first ack of a send called after it %s; heal → first ack %s", d.firstAck(faultAt), d.firstAck(healAt))
	d.rep.Note("ack latency: before %s; %s %s", d.latencies(faultAt.Add(-diskMeasure), faultAt).Summary(), label, d.latencies(faultAt, healAt).Summary())
}

// latencies are the call → ack times of the sends acknowledged that were
// called in [from, to).
func (d *diskLoad) latencies(from, to time.Time) Latencies {
	var l Latencies
	for _, s := range d.h.Sends() {
		if s.Outcome == OK && !s.Call.Before(from) && s.Call.Before(to) {
			l = append(l, s.Return.Sub(s.Call))
		}
	}
	return l
}

// waitCaughtUp waits until m applied what the leader had applied when called.
func (d *diskLoad) waitCaughtUp(m *testcluster.Member, timeout time.Duration) (time.Duration, bool) {
	begin := time.Now()
	l := d.c.WaitLeader(timeout)
	target := l.Node().State().AppliedIndex
	for time.Since(begin) < timeout {
		if n := m.Node(); n != nil && n.State().AppliedIndex >= target {
			return time.Since(begin), true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(begin), false
}

// finish stops the load and judges the run (inprocFinish: live byte
// comparison, offline replicas, the checker).
func (d *diskLoad) finish() {
	close(d.stopTokens)
	d.tokensDone.Wait()
	d.leaders.stop()
	inprocFinish(d.t, d.c, d.paced, &d.rep, d.start)
}

// leaderLog records every change of the ready leader (polled every 5 ms).
type leaderLog struct {
	mu      sync.Mutex
	changes []leaderChange
	done    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

type leaderChange struct {
	at time.Time
	id raft.ServerID // "" while no node is a ready leader
}

func watchLeaders(c *testcluster.Cluster) *leaderLog {
	l := &leaderLog{done: make(chan struct{})}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		var last raft.ServerID = "?"
		for {
			var id raft.ServerID
			for _, m := range c.Members() {
				if n := m.Node(); n != nil && n.State().Role == node.RoleLeader {
					id = m.ID
				}
			}
			if id != last {
				l.mu.Lock()
				l.changes = append(l.changes, leaderChange{at: time.Now(), id: id})
				l.mu.Unlock()
				last = id
			}
			select {
			case <-l.done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return l
}

func (l *leaderLog) stop() {
	l.once.Do(func() { close(l.done) })
	l.wg.Wait()
}

// since describes the leadership from t on: who led at t and every change
// after it, with its delay from t.
func (l *leaderLog) since(t time.Time, until time.Time) (steppedDown bool, desc string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var at raft.ServerID
	desc = ""
	for _, ch := range l.changes {
		if !ch.at.After(t) {
			at = ch.id
			continue
		}
		if ch.at.After(until) {
			break
		}
		who := string(ch.id)
		if who == "" {
			who = "none"
		}
		desc += fmt.Sprintf(", %s at +%v", who, ch.at.Sub(t).Round(time.Millisecond))
		if ch.id != at {
			steppedDown = true
		}
	}
	name := string(at)
	if name == "" {
		name = "none"
	}
	if desc == "" {
		return false, fmt.Sprintf("%s led throughout", name)
	}
	return steppedDown, fmt.Sprintf("%s led at the fault%s", name, desc)
}
