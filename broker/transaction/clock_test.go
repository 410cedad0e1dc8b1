package transaction_test

import (
	"context"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/transaction"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
)

// TestC4CheckBacksResumeAfterLeaderClockStepsBack is chaos C4's regression
// test. The leader stores two half messages, its clock steps back 10 minutes,
// and it stores two more: those carry stamps 10 minutes older than the first
// two. Once the later ones are past the timeout by the leader's clock they
// must be asked about, although the first two, earlier in the queue, still
// look young (stamped in the clock's future). The scan used to stop at the
// first young message, which held every check-back for the 10 minutes.
func TestC4CheckBacksResumeAfterLeaderClockStepsBack(t *testing.T) {
	st := fakereplica.OpenStore(t)
	rep := fakereplica.New(st, replica.RoleLeader)
	clock := &fakeClock{t: time.Now()}
	rep.Clock = clock.now
	putHalf(t, rep, "pg", 2) // half offsets 0, 1 at T
	clock.t = clock.t.Add(-10 * time.Minute)
	putHalf(t, rep, "pg", 2) // half offsets 2, 3 at T-10m
	conn := &recConn{}
	svc := transaction.NewChecker(transaction.Config{Timeout: 6 * time.Second, Now: clock.now,
		Producer: func(string) (transaction.CheckConn, bool) { return conn, true }}, st, rep)
	ctx := context.Background()
	if s, err := svc.Round(ctx); err != nil || s.Checked != 0 {
		t.Fatalf("right after the step back: %+v %v, want nothing asked", s, err)
	}
	clock.t = clock.t.Add(7 * time.Second)
	s, err := svc.Round(ctx)
	if err != nil || s.Checked != 2 {
		t.Fatalf("7 s after the step back: %+v %v, want the 2 half messages stored after it asked", s, err)
	}
	for _, r := range conn.take() {
		if off := r.Field("tranStateTableOffset"); off != "2" && off != "3" {
			t.Errorf("asked about half offset %s, stamped in the clock's future", off)
		}
	}
	if c := rep.TransactionState().Checks(0); c != 0 {
		t.Errorf("half offset 0 (stamped 10 min ahead of the clock) was counted as checked %d times", c)
	}
	// Once the clock is past the first two as well, they are asked too.
	clock.t = clock.t.Add(10 * time.Minute)
	if s, err := svc.Round(ctx); err != nil || s.Checked != 4 {
		t.Fatalf("after the clock caught up: %+v %v, want all 4 asked", s, err)
	}
}
