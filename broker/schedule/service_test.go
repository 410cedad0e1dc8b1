package schedule_test

import (
	"context"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/schedule"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/store"
)

func TestScheduleDeliversOnlyDueMessagesManyPerEntry(t *testing.T) {
	st := fakereplica.OpenStore(t)
	rep := fakereplica.New(st, replica.RoleLeader)
	// The fake stamps records with the service's clock, so what is due below does
	// not depend on how long the store took.
	clock := &fakeClock{t: time.Now()}
	rep.Clock = clock.now
	keys := putScheduled(t, rep, 2, "L2", 100) // 5 s
	putScheduled(t, rep, 5, "L5", 3)           // 1 min
	svc := newTestSchedule(st, rep, clock, 0)
	puts := rep.PutCount()

	clock.t = clock.t.Add(4 * time.Second)
	n, _, err := svc.Tick(context.Background())
	if err != nil || n != 0 || rep.PutCount() != puts {
		t.Fatalf("at +4s: delivered %d (puts %d→%d), err %v; nothing is due", n, puts, rep.PutCount(), err)
	}
	clock.t = clock.t.Add(1100 * time.Millisecond)
	n, more, err := svc.Tick(context.Background())
	if err != nil || n != 100 || more {
		t.Fatalf("at +5.1s: delivered %d more=%v err %v, want 100", n, more, err)
	}
	fakereplica.WaitDispatched(t, st)
	if got := rep.PutCount(); got != puts+1 {
		t.Errorf("100 due messages took %d entries, want 1", got-puts)
	}
	got := delivered(t, st)
	for _, k := range keys {
		if got[k] != 1 {
			t.Errorf("%s delivered %d times", k, got[k])
		}
	}
	if len(got) != 100 {
		t.Errorf("delivered %d distinct messages, want 100 (level 5 is not due)", len(got))
	}
	if p := rep.ScheduleProgress(); p[2] != 100 || p[5] != 0 {
		t.Errorf("progress %v, want level 2 at 100, level 5 untouched", p)
	}
	if n, _, _ := svc.Tick(context.Background()); n != 0 {
		t.Errorf("a second tick delivered %d again", n)
	}
	clock.t = clock.t.Add(time.Minute)
	if n, _, _ := svc.Tick(context.Background()); n != 3 {
		t.Errorf("level 5 after a minute: delivered %d, want 3", n)
	}
}

// TestScheduleResumesAfterFailover: a service stopped after some entries (the old
// leader) and a new instance (the new leader) reading the replicated progress
// deliver every message exactly once; a stale entry from the old one stores nothing.
func TestScheduleResumesAfterFailover(t *testing.T) {
	st := fakereplica.OpenStore(t)
	rep := fakereplica.New(st, replica.RoleLeader)
	keys := putScheduled(t, rep, 1, "L1", 100)
	clock := &fakeClock{t: time.Now().Add(2 * time.Second)}
	old := newTestSchedule(st, rep, clock, 30)
	n, more, err := old.Tick(context.Background())
	if err != nil || n != 30 || !more {
		t.Fatalf("first tick: %d more=%v err=%v, want a full batch of 30", n, more, err)
	}
	// The old leader proposed its next batch, but the outcome was lost: the same
	// range re-proposed by anyone must conflict once the first has applied.
	stale := []fsm.ScheduleAdvance{{Level: 1, From: 0, To: 30}}
	if _, err := rep.DeliverScheduled(context.Background(), nil, stale); err == nil {
		t.Fatal("a re-proposed range applied twice")
	}
	next := newTestSchedule(st, rep, clock, 30)
	total := n
	for range 10 {
		n, more, err := next.Tick(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		total += n
		if !more {
			break
		}
	}
	if total != 100 {
		t.Fatalf("delivered %d in all, want 100", total)
	}
	fakereplica.WaitDispatched(t, st)
	got := delivered(t, st)
	for _, k := range keys {
		if got[k] != 1 {
			t.Errorf("%s delivered %d times", k, got[k])
		}
	}
}

func TestScheduleSkipsUndeliverableAndClampsSkewedClock(t *testing.T) {
	st := fakereplica.OpenStore(t)
	rep := fakereplica.New(st, replica.RoleLeader)
	bad := store.Message{Topic: schedule.Topic, QueueID: 0, StoreHost: testStoreHost, BornHost: testStoreHost, Body: []byte("x"),
		Properties: store.EncodeProperties(map[string]string{store.PropertyDelayLevel: "1"})}
	rec, err := store.AppendMessage(nil, &bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rep.PutMessages(context.Background(), [][]byte{rec}); err != nil {
		t.Fatal(err)
	}
	keys := putScheduled(t, rep, 1, "after", 2)
	// A clock far behind the store timestamps (a previous leader ran fast by more
	// than the delay): delivered now instead of being held for the skew.
	clock := &fakeClock{t: time.Now().Add(-time.Hour)}
	svc := newTestSchedule(st, rep, clock, 0)
	n, _, err := svc.Tick(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("delivered %d, err %v; want the 2 good ones past the bad head", n, err)
	}
	fakereplica.WaitDispatched(t, st)
	if got := delivered(t, st); got[keys[0]] != 1 || got[keys[1]] != 1 {
		t.Errorf("delivered %v", got)
	}
	if p := rep.ScheduleProgress(); p[1] != 3 {
		t.Errorf("progress %v, want level 1 at 3", p)
	}
}
