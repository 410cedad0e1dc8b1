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
// node's files where a separate process cannot be reached. A real broker
// serves every node (inprocGroup) and their load is the real clients' paced
// load of pacedload_test.go.

const (
	diskLoadTopic  = "ChaosDiskLoad"
	diskLoadQueues = 8
)

// diskLoad is one disk-at-load scenario's group, load and leadership record.
type diskLoad struct {
	*pacedLoad
	disks *testcluster.DiskFaults
	rep   Report
	start time.Time

	leaders *leaderLog
}

// startDiskLoad starts the group, measures the maximum durable rate and
// leaves the paced load running, measured once more before the fault.
func startDiskLoad(t *testing.T, scenario string) *diskLoad {
	t.Helper()
	d := &diskLoad{start: time.Now()}
	d.rep = Report{Scenario: scenario, Seed: d.start.UnixNano() % 1000}
	d.disks = testcluster.NewDiskFaults(nil)
	c := testcluster.New(t, 3, testcluster.Options{TCP: true, Configure: d.disks.Configure, Logger: inprocLogger()})
	g := startInprocGroup(t, c, nil)
	d.leaders = watchLeaders(c)
	t.Cleanup(d.leaders.stop)
	d.pacedLoad = startPacedLoad(t, g, &d.rep, diskLoadTopic, diskLoadQueues)
	return d
}

// pick returns the ready leader and one follower.
func (d *diskLoad) pick() (leader, follower *testcluster.Member) {
	leader = d.g.c.WaitLeader(10 * time.Second)
	for _, m := range d.g.c.Members() {
		if m.ID != leader.ID {
			return leader, m
		}
	}
	d.t.Fatal("no follower")
	return nil, nil
}

// waitCaughtUp waits until m applied what the leader had applied when called.
func (d *diskLoad) waitCaughtUp(m *testcluster.Member, timeout time.Duration) (time.Duration, bool) {
	begin := time.Now()
	l := d.g.c.WaitLeader(timeout)
	target := l.Node().State().AppliedIndex
	for time.Since(begin) < timeout {
		if n := m.Node(); n != nil && n.State().AppliedIndex >= target {
			return time.Since(begin), true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(begin), false
}

// finish stops the load and judges the run (inprocFinish: the drain, live
// byte comparison, offline replicas, the checker).
func (d *diskLoad) finish() {
	d.leaders.stop()
	inprocFinish(d.t, d.g, d.pacedLoad, &d.rep, d.start)
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
