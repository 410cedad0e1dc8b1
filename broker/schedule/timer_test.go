package schedule_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/schedule"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/store"
)

func TestTimerHopPicksTheLargestLevelThatDoesNotOvershoot(t *testing.T) {
	levels := schedule.DefaultMessageDelayLevel
	for _, c := range []struct {
		remainingMS int64
		level       schedule.DelayLevel
		wait        bool
	}{
		{-5000, 0, false}, {0, 0, false}, {500, 0, false},
		{501, 1, true}, {4999, 1, true}, {5000, 2, true}, {61_000, 5, true},
		{3*3600_000 + 1, 18, true},
	} {
		level, wait := schedule.TimerHop(levels, c.remainingMS)
		if level != c.level || wait != c.wait {
			t.Errorf("TimerHop(%d ms) = %d %v, want %d %v", c.remainingMS, level, wait, c.level, c.wait)
		}
	}
}

// TestTimedMessageHopsUntilDue: a TIMER_DELIVER_MS message 7 s ahead waits in the
// 5 s level, then hops through the 1 s level, and is delivered once, within half a
// second of its time.
func TestTimedMessageHopsUntilDue(t *testing.T) {
	st := fakereplica.OpenStore(t)
	rep := fakereplica.New(st, replica.RoleLeader)
	start := time.Now()
	due := start.Add(7 * time.Second).UnixMilli()
	m := store.Message{
		Topic: schedule.Topic, QueueID: schedule.DelayLevel(2).QueueID(), BornTimestamp: 1700000000000, BornHost: testStoreHost,
		StoreHost: testStoreHost, ReconsumeTimes: 2, Body: []byte("body-T1"),
		Properties: schedule.TimedProps(store.EncodeProperties(map[string]string{store.PropertyUniqKey: "T1", store.PropertyTags: "TagA",
			store.PropertyTimerDeliverMS: strconv.FormatInt(due, 10)}), "Real", 0, 2),
	}
	rec, err := store.AppendMessage(nil, &m)
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.AppendBatch([][]byte{rec}, start.UnixMilli())
	if err != nil || len(res) != 1 {
		t.Fatal(err)
	}
	fakereplica.WaitDispatched(t, st)
	clock := &fakeClock{t: start}
	rep.Clock = clock.now // re-parked hops are stamped by the leader's clock
	svc := newTestSchedule(st, rep, clock, 0)
	var deliveredAt time.Time
	for step := 0; step < 200 && deliveredAt.IsZero(); step++ {
		clock.t = clock.t.Add(100 * time.Millisecond)
		if _, _, err := svc.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
		fakereplica.WaitDispatched(t, st)
		if got := delivered(t, st); got["T1"] == 1 {
			deliveredAt = clock.t
		} else if got["T1"] > 1 {
			t.Fatalf("delivered %d times", got["T1"])
		}
	}
	if deliveredAt.IsZero() {
		t.Fatal("never delivered")
	}
	if d := deliveredAt.UnixMilli() - due; d < -500 || d > 600 {
		t.Fatalf("delivered %d ms from its time, want within ±500 ms (+ one tick)", d)
	}
	if hops := fakereplica.ReadQueue(t, st, schedule.Topic, schedule.DelayLevel(1).QueueID()); len(hops) == 0 {
		t.Fatal("expected the message to hop through the 1 s level")
	}
}
