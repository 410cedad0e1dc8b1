package broker

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

var testStoreHost = netip.MustParseAddrPort("127.0.0.1:10911")

func openTestStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 4 << 20, ConsumeQueueEntriesPerFile: 1000, IndexHashSlots: 100, IndexMaxEntries: 4000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// putScheduled stores n messages as the send path would for level (REAL_TOPIC
// "Real", REAL_QID alternating 0/1) and returns their UNIQ_KEYs.
func putScheduled(t *testing.T, rep *fakeReplica, level DelayLevel, prefix string, n int) []string {
	t.Helper()
	var recs [][]byte
	var keys []string
	for i := range n {
		key := fmt.Sprintf("%s-%04d", prefix, i)
		keys = append(keys, key)
		m := store.Message{
			Topic: scheduleTopic, QueueID: level.queueID(), BornTimestamp: 1700000000000, BornHost: testStoreHost,
			StoreHost: testStoreHost, ReconsumeTimes: 2, Body: []byte("body-" + key),
			Properties: store.EncodeProperties(map[string]string{
				store.PropertyUniqKey: key, store.PropertyTags: "TagA", store.PropertyDelayLevel: strconv.Itoa(int(level)),
				store.PropertyRealTopic: "Real", store.PropertyRealQueueID: strconv.Itoa(i % 2),
			}),
		}
		rec, err := store.AppendMessage(nil, &m)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if _, err := rep.PutMessages(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	waitStoreDispatched(t, rep.st)
	return keys
}

// delivered reads everything in Real's two queues: UNIQ_KEY → count, and checks
// each delivered message is rebuilt correctly.
func delivered(t *testing.T, st *store.Store) map[string]int {
	t.Helper()
	out := map[string]int{}
	for q := int32(0); q < 2; q++ {
		res, err := st.GetMessages("Real", q, 0, 10000, 64<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range res.Messages {
			m, err := store.DecodeMessage(b, true)
			if err != nil {
				t.Fatal(err)
			}
			p := store.ParseProperties(m.Properties)
			key := p[store.PropertyUniqKey]
			out[key]++
			for _, gone := range []string{store.PropertyDelayLevel, store.PropertyRealTopic, store.PropertyRealQueueID} {
				if _, ok := p[gone]; ok {
					t.Errorf("%s: property %s survived delivery", key, gone)
				}
			}
			if p[store.PropertyTags] != "TagA" || string(m.Body) != "body-"+key || m.ReconsumeTimes != 2 || m.BornTimestamp != 1700000000000 {
				t.Errorf("%s: rebuilt message differs: tags=%q body=%q reconsume=%d born=%d", key, p[store.PropertyTags], m.Body, m.ReconsumeTimes, m.BornTimestamp)
			}
		}
		res.Release()
	}
	return out
}

// waitStoreDispatched waits until the ConsumeQueues cover everything appended.
func waitStoreDispatched(t *testing.T, st *store.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.WaitDispatched(ctx, st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newTestSchedule(st *store.Store, rep *fakeReplica, clock *fakeClock, maxBatch int) *scheduleService {
	return newScheduleService(scheduleConfig{StoreHost: testStoreHost, Now: clock.now, MaxBatchMsgs: maxBatch}, st, rep)
}

func TestScheduleDeliversOnlyDueMessagesManyPerEntry(t *testing.T) {
	st := openTestStore(t)
	rep := newFakeReplica(st, RoleLeader)
	keys := putScheduled(t, rep, 2, "L2", 100) // 5 s
	putScheduled(t, rep, 5, "L5", 3)           // 1 min
	clock := &fakeClock{t: time.Now()}
	svc := newTestSchedule(st, rep, clock, 0)
	puts := rep.puts

	clock.t = clock.t.Add(4 * time.Second)
	n, _, err := svc.tick(context.Background())
	if err != nil || n != 0 || rep.putCount() != puts {
		t.Fatalf("at +4s: delivered %d (puts %d→%d), err %v; nothing is due", n, puts, rep.puts, err)
	}
	clock.t = clock.t.Add(1100 * time.Millisecond)
	n, more, err := svc.tick(context.Background())
	if err != nil || n != 100 || more {
		t.Fatalf("at +5.1s: delivered %d more=%v err %v, want 100", n, more, err)
	}
	waitStoreDispatched(t, st)
	if rep.puts != puts+1 {
		t.Errorf("100 due messages took %d entries, want 1", rep.puts-puts)
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
	if n, _, _ := svc.tick(context.Background()); n != 0 {
		t.Errorf("a second tick delivered %d again", n)
	}
	clock.t = clock.t.Add(time.Minute)
	if n, _, _ := svc.tick(context.Background()); n != 3 {
		t.Errorf("level 5 after a minute: delivered %d, want 3", n)
	}
}

// TestScheduleResumesAfterFailover: a service stopped after some entries (the old
// leader) and a new instance (the new leader) reading the replicated progress
// deliver every message exactly once; a stale entry from the old one stores nothing.
func TestScheduleResumesAfterFailover(t *testing.T) {
	st := openTestStore(t)
	rep := newFakeReplica(st, RoleLeader)
	keys := putScheduled(t, rep, 1, "L1", 100)
	clock := &fakeClock{t: time.Now().Add(2 * time.Second)}
	old := newTestSchedule(st, rep, clock, 30)
	n, more, err := old.tick(context.Background())
	if err != nil || n != 30 || !more {
		t.Fatalf("first tick: %d more=%v err=%v, want a full batch of 30", n, more, err)
	}
	// The old leader proposed its next batch, but the outcome was lost: the same
	// range re-proposed by anyone must conflict once the first has applied.
	stale := []ScheduleAdvance{{Level: 1, From: 0, To: 30}}
	if _, err := rep.DeliverScheduled(context.Background(), nil, stale); err == nil {
		t.Fatal("a re-proposed range applied twice")
	}
	next := newTestSchedule(st, rep, clock, 30)
	total := n
	for range 10 {
		n, more, err := next.tick(context.Background())
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
	waitStoreDispatched(t, st)
	got := delivered(t, st)
	for _, k := range keys {
		if got[k] != 1 {
			t.Errorf("%s delivered %d times", k, got[k])
		}
	}
}

func TestScheduleSkipsUndeliverableAndClampsSkewedClock(t *testing.T) {
	st := openTestStore(t)
	rep := newFakeReplica(st, RoleLeader)
	bad := store.Message{Topic: scheduleTopic, QueueID: 0, StoreHost: testStoreHost, BornHost: testStoreHost, Body: []byte("x"),
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
	n, _, err := svc.tick(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("delivered %d, err %v; want the 2 good ones past the bad head", n, err)
	}
	waitStoreDispatched(t, st)
	if got := delivered(t, st); got[keys[0]] != 1 || got[keys[1]] != 1 {
		t.Errorf("delivered %v", got)
	}
	if p := rep.ScheduleProgress(); p[1] != 3 {
		t.Errorf("progress %v, want level 1 at 3", p)
	}
}

func TestTimerHopPicksTheLargestLevelThatDoesNotOvershoot(t *testing.T) {
	levels := DefaultMessageDelayLevel
	for _, c := range []struct {
		remainingMS int64
		level       DelayLevel
		wait        bool
	}{
		{-5000, 0, false}, {0, 0, false}, {500, 0, false},
		{501, 1, true}, {4999, 1, true}, {5000, 2, true}, {61_000, 5, true},
		{3*3600_000 + 1, 18, true},
	} {
		level, wait := timerHop(levels, c.remainingMS)
		if level != c.level || wait != c.wait {
			t.Errorf("timerHop(%d ms) = %d %v, want %d %v", c.remainingMS, level, wait, c.level, c.wait)
		}
	}
}

// TestTimedMessageHopsUntilDue: a TIMER_DELIVER_MS message 7 s ahead waits in the
// 5 s level, then hops through the 1 s level, and is delivered once, within half a
// second of its time.
func TestTimedMessageHopsUntilDue(t *testing.T) {
	st := openTestStore(t)
	rep := newFakeReplica(st, RoleLeader)
	start := time.Now()
	due := start.Add(7 * time.Second).UnixMilli()
	m := store.Message{
		Topic: scheduleTopic, QueueID: DelayLevel(2).queueID(), BornTimestamp: 1700000000000, BornHost: testStoreHost,
		StoreHost: testStoreHost, ReconsumeTimes: 2, Body: []byte("body-T1"),
		Properties: timedProps(store.EncodeProperties(map[string]string{store.PropertyUniqKey: "T1", store.PropertyTags: "TagA",
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
	waitStoreDispatched(t, st)
	clock := &fakeClock{t: start}
	svc := newTestSchedule(st, rep, clock, 0)
	var deliveredAt time.Time
	for step := 0; step < 200 && deliveredAt.IsZero(); step++ {
		clock.t = clock.t.Add(100 * time.Millisecond)
		if _, _, err := svc.tick(context.Background()); err != nil {
			t.Fatal(err)
		}
		waitStoreDispatched(t, st)
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
	if hops := readQueue(t, st, scheduleTopic, DelayLevel(1).queueID()); len(hops) == 0 {
		t.Fatal("expected the message to hop through the 1 s level")
	}
}
