package broker

import (
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// jumpClock is a wall clock a test steps: the real time plus an offset,
// without a monotonic reading (a step of the system clock does not move
// CLOCK_MONOTONIC, and Go cannot build a time whose wall reading moved alone).
type jumpClock struct{ off atomic.Int64 }

func (c *jumpClock) now() time.Time        { return time.Now().Round(0).Add(time.Duration(c.off.Load())) }
func (c *jumpClock) jump(d time.Duration)  { c.off.Add(int64(d)) }
func (c *jumpClock) offset() time.Duration { return time.Duration(c.off.Load()) }

// fakeMono is a monotonic clock a test advances by hand.
type fakeMono struct {
	base time.Time
	at   atomic.Int64
}

func (m *fakeMono) now() time.Time          { return m.base.Add(time.Duration(m.at.Load())) }
func (m *fakeMono) advance(d time.Duration) { m.at.Add(int64(d)) }

// startClockBroker is startTestBroker with the replica's wall clock and the
// broker's monotonic clock given.
func startClockBroker(t *testing.T, wall func() time.Time, mono func() time.Time) *testBroker {
	t.Helper()
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 1 << 20, ConsumeQueueEntriesPerFile: 1000, IndexHashSlots: 100, IndexMaxEntries: 400})
	if err != nil {
		t.Fatal(err)
	}
	rep := fakereplica.New(st, replica.RoleLeader)
	rep.Clock = wall
	b, err := New(Config{
		ClusterName: "c", BrokerName: "broker-a", ListenAddr: "127.0.0.1:0", ClientAddr: "127.0.0.1:10911",
		SelfID: "n0", MaxMessageSize: 1024, OffsetFlushInterval: time.Hour, Monotonic: mono,
	}, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	c := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	t.Cleanup(func() { c.Close(); b.Close(); st.Close() })
	return &testBroker{b: b, st: st, replica: rep, client: c}
}

func lockGranted(t *testing.T, tb *testBroker, client string, mqs ...clients.MessageQueue) []clients.MessageQueue {
	t.Helper()
	r := tb.call(t, transport.LockBatchMQ, nil, lockBody(t, "g", client, mqs...))
	if r.ResponseCode() != transport.Success {
		t.Fatalf("lock by %s: %v %s", client, r.ResponseCode(), r.Remark)
	}
	var ans struct {
		LockOKMQSet []clients.MessageQueue `json:"lockOKMQSet"`
	}
	if err := json.Unmarshal(r.Body, &ans); err != nil {
		t.Fatalf("lock answer %s: %v", r.Body, err)
	}
	return ans.LockOKMQSet
}

// TestC1LockSurvivesLeaderClockJump is chaos C1's regression test: the
// leader's wall clock steps 10 minutes forward while consumer A holds a queue
// lock. With lock ages measured on the wall clock every lock looked 10
// minutes old, and B was handed A's queue while A still held it (two owners
// of one orderly queue). A step back must not make the lock outlive its 60 s
// either: it expires after LockExpiry of monotonic time, whatever the wall
// clock says.
func TestC1LockSurvivesLeaderClockJump(t *testing.T) {
	wall := &jumpClock{}
	mono := &fakeMono{base: time.Now()}
	tb := startClockBroker(t, wall.now, mono.now)
	registryComplete(tb.b)
	if got := lockGranted(t, tb, "A", mq0); !slices.Equal(got, []clients.MessageQueue{mq0}) {
		t.Fatalf("A's first lock: %v", got)
	}
	// Past the new term's grace window, so a free queue goes to whoever asks.
	mono.advance(clients.LockExpiry + 10*time.Second)
	if got := lockGranted(t, tb, "A", mq0); len(got) != 1 {
		t.Fatalf("A's renewal after the grace window: %v", got)
	}

	wall.jump(10 * time.Minute)
	if got := lockGranted(t, tb, "B", mq0); len(got) != 0 {
		t.Fatalf("after a +10 min wall-clock jump B was granted A's live lock: %v", got)
	}
	mono.advance(20 * time.Second)
	if got := lockGranted(t, tb, "A", mq0); len(got) != 1 {
		t.Fatalf("A's renewal after the jump refused: %v", got)
	}

	wall.jump(-20 * time.Minute) // 10 minutes behind the real time now
	mono.advance(clients.LockExpiry - time.Second)
	if got := lockGranted(t, tb, "B", mq0); len(got) != 0 {
		t.Fatalf("B took A's lock %v before it expired (wall offset %v)", got, wall.offset())
	}
	// A stopped renewing: its lock must end LockExpiry after the last renewal,
	// not LockExpiry plus the 10 minutes the wall clock went back.
	mono.advance(2 * time.Second)
	if got := lockGranted(t, tb, "B", mq0); !slices.Equal(got, []clients.MessageQueue{mq0}) {
		t.Fatalf("A's lock outlived LockExpiry after a -20 min wall-clock jump: B got %v", got)
	}
}
