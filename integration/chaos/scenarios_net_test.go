package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// waitOtherLeader polls the nodes other than not until one reports role leader;
// it returns that node and how long it took from since, or -1.
func waitOtherLeader(s *scenario, not int, since time.Time, timeout time.Duration) (int, time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for i := range s.c.Nodes {
			if i == not {
				continue
			}
			if t, err := s.c.RuntimeInfo(context.Background(), i); err == nil && strings.EqualFold(t["role"], "leader") {
				return i, time.Since(since)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return -1, 0
}

// waitCaughtUp waits until node i has applied at least what the current leader
// had applied when called (the workload keeps running, so equality never holds).
func waitCaughtUp(s *scenario, i int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var target uint64
	for target == 0 && time.Now().Before(deadline) {
		if l := s.c.RaftLeader(context.Background()); l >= 0 {
			if t, err := s.c.RuntimeInfo(context.Background(), l); err == nil {
				target, _ = strconv.ParseUint(t["appliedIndex"], 10, 64)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	var got uint64
	for time.Now().Before(deadline) {
		if t, err := s.c.RuntimeInfo(context.Background(), i); err == nil {
			got, _ = strconv.ParseUint(t["appliedIndex"], 10, 64)
			if target > 0 && got >= target {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("n%d applied %d, leader had %d, after %v", i, got, target, timeout)
}

func commitIndex(s *scenario, i int) (uint64, error) {
	t, err := s.c.RuntimeInfo(context.Background(), i)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(t["commitIndex"], 10, 64)
}

// TestN1IsolateLeader cuts every raft link of the leader (clients still reach it).
// The isolated leader may commit nothing (its commitIndex stays put) and the
// majority elects a new leader within a few seconds.
func TestN1IsolateLeader(t *testing.T) {
	requireChaos(t, inShort)
	s := begin(t, "N1", Options{}, defaultWorkload())
	rounds := 2
	if isFull() {
		rounds = 4
	}
	var elections Latencies
	for r := range rounds {
		old := s.leader()
		at := s.fault()
		s.c.Isolate(old)
		time.Sleep(300 * time.Millisecond)
		c0, err0 := commitIndex(s, old)
		nl, took := waitOtherLeader(s, old, at, 15*time.Second)
		if nl < 0 {
			s.rep.Fail("round %d: majority elected no leader within 15 s of isolating n%d", r+1, old)
		} else {
			elections = append(elections, took)
		}
		sleep(6 * time.Second)
		c1, err1 := commitIndex(s, old)
		switch {
		case err0 != nil || err1 != nil:
			s.rep.Fail("round %d: runtime info of isolated n%d: %v %v", r+1, old, err0, err1)
		case c1 != c0:
			s.rep.Fail("round %d: isolated n%d committed entries %d..%d without a quorum", r+1, old, c0, c1)
		}
		s.c.HealAll()
		s.healed()
		if err := waitCaughtUp(s, old, 30*time.Second); err != nil {
			s.rep.Fail("round %d: after healing: %v", r+1, err)
		}
	}
	s.rep.Faults = fmt.Sprintf("isolations %d", rounds)
	s.rep.Note("isolation → new leader elected by the majority: %s; isolated leader's commitIndex frozen in every round unless FAILED below", elections.Summary())
	s.finish()
}

// TestN2OneWayCuts: the leader's outgoing raft traffic dropped (it still hears the
// followers), then the followers' traffic to the leader dropped. The leader must
// step down each time and no divergence appear.
func TestN2OneWayCuts(t *testing.T) {
	requireChaos(t, fullOnly)
	s := begin(t, "N2", Options{}, defaultWorkload())
	for _, outgoing := range []bool{true, false} {
		old := s.leader()
		at := s.fault()
		for j := range s.c.Nodes {
			if j == old {
				continue
			}
			if outgoing {
				s.c.CutOneWay(old, j)
			} else {
				s.c.CutOneWay(j, old)
			}
		}
		nl, took := waitOtherLeader(s, old, at, 20*time.Second)
		if nl < 0 {
			s.rep.Fail("cut outgoing=%v: no other leader within 20 s", outgoing)
		} else {
			s.rep.Note("cut of leader n%d's %s traffic: n%d leader after %v", old, map[bool]string{true: "outgoing", false: "incoming"}[outgoing], nl, took.Round(time.Millisecond))
		}
		sleep(4 * time.Second)
		if ti, err := s.c.RuntimeInfo(context.Background(), old); err == nil && strings.EqualFold(ti["role"], "leader") {
			s.rep.Fail("n%d still reports leader 4 s after another leader was elected (term %s)", old, ti["term"])
		}
		s.c.HealAll()
		s.healed()
		sleep(3 * time.Second)
	}
	s.rep.Faults = "one-way cuts 2"
	s.finish()
}

// TestN3PartitionElectHeal: isolate the leader, let the majority elect, heal,
// while writing, several times (hashicorp/raft #695 trigger): replicas agree.
func TestN3PartitionElectHeal(t *testing.T) {
	requireChaos(t, fullOnly)
	s := begin(t, "N3", Options{}, defaultWorkload())
	rounds := 5
	for r := range rounds {
		old := s.leader()
		at := s.fault()
		s.c.Isolate(old)
		if nl, _ := waitOtherLeader(s, old, at, 15*time.Second); nl < 0 {
			s.rep.Fail("round %d: no new leader", r+1)
		}
		sleep(time.Second)
		s.c.HealAll()
		s.healed()
		sleep(3 * time.Second)
	}
	s.rep.Faults = fmt.Sprintf("partitions %d", rounds)
	s.finish()
}
