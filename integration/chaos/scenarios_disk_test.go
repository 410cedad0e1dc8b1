package chaos

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// follower returns a node that is not the leader.
func follower(s *scenario) int { return (s.leader() + 1) % len(s.c.Nodes) }

// TestD4BitFlipFollower: stop a follower, flip one bit inside a committed message
// body of its CommitLog, start it. It must refuse to start with a clear error (then
// the operator wipes it and it rejoins) or rebuild the record; the checks then
// require identical replicas and nothing acknowledged lost.
func TestD4BitFlipFollower(t *testing.T) {
	requireChaos(t, inShort)
	s := begin(t, "D4", Options{}, defaultWorkload())
	sleep(5 * time.Second)
	f := follower(s)
	s.fault()
	s.c.Stop(f)
	rec, err := FlipBodyBit(s.c.Nodes[f].StoreDir(), 0.5)
	if err != nil {
		t.Fatalf("flip a bit in n%d's CommitLog: %v", f, err)
	}
	s.rep.Faults = fmt.Sprintf("bit flip in n%d CommitLog offset %d (body %q)", f, rec.Global, rec.Body)
	if err := s.c.Start(f); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.c.Nodes[f].Proc.Exited():
		s.rep.Note("n%d refused to start: %s", f, lastLine(s.c.Nodes[f].Proc.Tail(3)))
		// The operator's answer to a refusing replica: wipe it, let it rejoin.
		if err := os.RemoveAll(s.c.Nodes[f].DataDir); err != nil {
			t.Fatal(err)
		}
		if err := s.c.Start(f); err != nil {
			t.Fatal(err)
		}
		s.rep.Note("n%d wiped and restarted", f)
		s.healed()
	case <-time.After(15 * time.Second):
		s.rep.Note("n%d started despite the flipped bit (kept running 15 s)", f)
		s.healed()
	}
	sleep(5 * time.Second)
	s.finish()
}

func lastLine(s string) string {
	for i := len(s) - 1; i > 0; i-- {
		if s[i-1] == '\n' {
			return s[i:]
		}
	}
	return s
}

// TestD3TornTail: SIGKILL a follower, tear its CommitLog's last record (second half
// random bytes plus garbage after it), restart: it recovers a valid prefix and
// catches up to identical bytes.
func TestD3TornTail(t *testing.T) {
	requireChaos(t, fullOnly)
	s := begin(t, "D3", Options{}, defaultWorkload())
	rng := rand.New(rand.NewPCG(uint64(s.rep.Seed), 3))
	rounds := 3
	for range rounds {
		sleep(4 * time.Second)
		f := follower(s)
		s.fault()
		s.c.Kill(f)
		rec, err := TearTail(s.c.Nodes[f].StoreDir(), rng)
		if err != nil {
			t.Fatalf("tear n%d's CommitLog tail: %v", f, err)
		}
		s.rep.Note("tore n%d's last record at CommitLog offset %d", f, rec.Global)
		if err := s.c.Start(f); err != nil {
			t.Fatal(err)
		}
		s.healed()
		select {
		case <-s.c.Nodes[f].Proc.Exited():
			s.rep.Fail("n%d exited after a torn tail instead of recovering: %s", f, lastLine(s.c.Nodes[f].Proc.Tail(3)))
		case <-time.After(5 * time.Second):
		}
	}
	s.rep.Faults = fmt.Sprintf("torn tails %d", rounds)
	s.finish()
}

// TestD6WipeFollower: SIGKILL a follower, delete its data directory while the
// workload runs, restart: it rejoins (snapshot or log) and ends byte-identical.
func TestD6WipeFollower(t *testing.T) {
	requireChaos(t, fullOnly)
	s := begin(t, "D6", Options{}, defaultWorkload())
	sleep(5 * time.Second)
	f := follower(s)
	s.fault()
	s.c.Kill(f)
	if err := os.RemoveAll(s.c.Nodes[f].DataDir); err != nil {
		t.Fatal(err)
	}
	sleep(5 * time.Second)
	if err := s.c.Start(f); err != nil {
		t.Fatal(err)
	}
	s.healed()
	if err := waitCaughtUp(s, f, 60*time.Second); err != nil {
		s.rep.Fail("wiped n%d did not catch up: %v", f, err)
	}
	s.rep.Faults = fmt.Sprintf("wiped n%d", f)
	sleep(3 * time.Second)
	s.finish()
}
