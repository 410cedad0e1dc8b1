package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// TestK1KillLeader: SIGKILL the leader (asked first), measure failover, restart it,
// every ~10 s; 3 kills in the short suite, 20 in the full one.
func TestK1KillLeader(t *testing.T) {
	requireChaos(t, inShort)
	kills, every := 3, 6*time.Second
	if isFull() {
		kills, every = 20, 10*time.Second
	}
	s := begin(t, "K1", Options{}, defaultWorkload())
	var goGaps Latencies
	for k := range kills {
		roundStart := time.Now()
		old := s.leader()
		killAt := s.fault()
		s.c.Kill(old)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		nl, err := s.c.WaitLeader(ctx, old, 1)
		if err != nil {
			cancel()
			s.rep.Fail("kill %d: %v", k+1, err)
			break
		}
		s.rep.NSFailover = append(s.rep.NSFailover, time.Since(killAt))
		// First acked send (any client) called after the kill: only the new leader can
		// have committed it.
		var first time.Time
		for first.IsZero() && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
			first = s.w.History().FirstAckAfter(killAt, "raw")
		}
		cancel()
		if first.IsZero() {
			s.rep.Fail("kill %d of n%d: no acked send within 60 s (new leader n%d)", k+1, old, nl)
			break
		}
		s.rep.Failover = append(s.rep.Failover, first.Sub(killAt))
		if err := s.c.Start(old); err != nil {
			s.t.Fatalf("restart n%d: %v", old, err)
		}
		s.healed()
		ctx, cancel = context.WithTimeout(context.Background(), 60*time.Second)
		if _, err := s.c.WaitLeader(ctx, -1, len(s.c.Nodes)); err != nil {
			s.rep.Fail("after kill %d, n%d never listed again: %v", k+1, old, err)
		}
		cancel()
		if gap := goFirstAck(s, killAt); gap > 0 {
			goGaps = append(goGaps, gap)
		}
		time.Sleep(time.Until(roundStart.Add(every)))
	}
	// The Go client producers (default 30 s route refresh) recover later; their gap
	// is measured for each kill whose round left them time to recover.
	s.rep.Faults = "kills " + strconv.Itoa(len(s.rep.NSFailover))
	s.rep.Note("rocketmq-client-go producers (route refresh 30 s): kill → first ack %s", goGaps.Summary())
	s.finish()
}

// goFirstAck is kill → first Go-client ack, 0 if none yet.
func goFirstAck(s *scenario, killAt time.Time) time.Duration {
	if first := s.w.History().FirstAckAfter(killAt, "go"); !first.IsZero() {
		return first.Sub(killAt)
	}
	return 0
}

// TestK2KillRandomNode: SIGKILL a random node every ~8 s, restart it.
func TestK2KillRandomNode(t *testing.T) {
	requireChaos(t, fullOnly)
	s := begin(t, "K2", Options{}, defaultWorkload())
	rng := rand.New(rand.NewPCG(uint64(s.rep.Seed), 2))
	kills := 8
	for range kills {
		n := rng.IntN(len(s.c.Nodes))
		s.fault()
		s.c.Kill(n)
		sleep(3 * time.Second)
		if err := s.c.Start(n); err != nil {
			t.Fatalf("restart n%d: %v", n, err)
		}
		s.healed()
		sleep(5 * time.Second)
	}
	s.rep.Faults = fmt.Sprintf("kills %d", kills)
	s.finish()
}

// TestK3KillAll: SIGKILL all three nodes at once under load, restart: every ack
// survives (raft fsyncs its log before an entry is acknowledged).
func TestK3KillAll(t *testing.T) {
	requireChaos(t, fullOnly)
	s := begin(t, "K3", Options{}, defaultWorkload())
	rounds := 3
	for range rounds {
		sleep(5 * time.Second)
		s.fault()
		for i := range s.c.Nodes {
			go s.c.Kill(i)
		}
		for _, n := range s.c.Nodes {
			<-n.Proc.Exited()
		}
		sleep(time.Second)
		for i := range s.c.Nodes {
			if err := s.c.Start(i); err != nil {
				t.Fatalf("restart n%d: %v", i, err)
			}
		}
		s.healed()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		if _, err := s.c.WaitLeader(ctx, -1, 1); err != nil {
			s.rep.Fail("no leader after kill-all: %v", err)
		}
		cancel()
	}
	sleep(4 * time.Second) // the load's throughput after the last restart
	s.rep.Faults = fmt.Sprintf("kill-all rounds %d", rounds)
	s.finish()
}

// TestP1PauseLeader: SIGSTOP the leader beyond the election timeout, then SIGCONT.
// The paused leader must ack nothing after it was deposed: its commitIndex may not
// move while a newer term is in charge, and the checks find no lost ack.
func TestP1PauseLeader(t *testing.T) {
	requireChaos(t, fullOnly)
	s := begin(t, "P1", Options{}, defaultWorkload())
	rounds := 3
	for r := range rounds {
		old := s.leader()
		s.fault()
		s.c.Nodes[old].Proc.Pause()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		nl, err := s.c.WaitLeader(ctx, old, 1)
		cancel()
		if err != nil {
			s.rep.Fail("round %d: no new leader while n%d paused: %v", r+1, old, err)
		}
		sleep(4 * time.Second)
		s.c.Nodes[old].Proc.Resume()
		s.healed()
		sleep(4 * time.Second)
		if nl >= 0 {
			t, err := s.c.RuntimeInfo(context.Background(), old)
			if err == nil && t["role"] == "LEADER" && t["term"] != "" {
				s.rep.Note("round %d: resumed n%d reports LEADER again in term %s", r+1, old, t["term"])
			}
		}
	}
	s.rep.Faults = fmt.Sprintf("pauses %d", rounds)
	s.finish()
}
