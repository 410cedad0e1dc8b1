package broker

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

var (
	mq0 = MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}
	mq1 = MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 1}
)

// settled is a view outside any grace concern: the registry is old and lists both clients.
func settled(t0 time.Time) lockView {
	return lockView{Members: []string{"A", "B"}, Since: t0.Add(-time.Hour)}
}

func TestLockGrantRenewExpire(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	m := newLockManager()
	// Term 0 opens no grace window (only a real leader term does), so these steps
	// exercise the steady-state rules.
	if got := m.lock(0, "g", "A", []MessageQueue{mq0, mq1}, settled(t0), t0); !slices.Equal(got, []MessageQueue{mq0, mq1}) {
		t.Fatalf("A locks free queues: got %v", got)
	}
	if got := m.lock(0, "g", "B", []MessageQueue{mq0, mq1}, settled(t0), t0.Add(30*time.Second)); len(got) != 0 {
		t.Fatalf("B must not take A's live locks: got %v", got)
	}
	// A renews mq0 only; mq1 expires 60 s after its grant.
	if got := m.lock(0, "g", "A", []MessageQueue{mq0}, settled(t0), t0.Add(50*time.Second)); !slices.Equal(got, []MessageQueue{mq0}) {
		t.Fatalf("A renews mq0: got %v", got)
	}
	at := t0.Add(lockExpiry + time.Second)
	if got := m.lock(0, "g", "B", []MessageQueue{mq0, mq1}, settled(t0), at); !slices.Equal(got, []MessageQueue{mq1}) {
		t.Fatalf("B after mq1 expired: got %v, want only mq1", got)
	}
	if who, ok := m.isLocked("g", mq1, at); !ok || who != "B" {
		t.Fatalf("mq1 holder = %q %v, want B", who, ok)
	}
	// Another group's locks are independent.
	if got := m.lock(0, "other", "B", []MessageQueue{mq0}, settled(t0), at); len(got) != 1 {
		t.Fatalf("other group: got %v", got)
	}
}

func TestUnlockReleasesOnlyOwnLocks(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	m := newLockManager()
	m.lock(0, "g", "A", []MessageQueue{mq0}, settled(t0), t0)
	m.unlock(0, "g", "B", []MessageQueue{mq0}, t0) // not B's: no effect
	if got := m.lock(0, "g", "B", []MessageQueue{mq0}, settled(t0), t0); len(got) != 0 {
		t.Fatalf("B took A's lock after B's own unlock: %v", got)
	}
	m.unlock(0, "g", "A", []MessageQueue{mq0}, t0)
	if got := m.lock(0, "g", "B", []MessageQueue{mq0}, settled(t0), t0.Add(time.Millisecond)); len(got) != 1 {
		t.Fatalf("B after A unlocked: got %v", got)
	}
}

func TestNewTermGraceWindow(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	grace := lockExpiry + lockTakeoverSlack
	cases := []struct {
		name  string
		view  lockView
		at    time.Duration // after the term's first request
		grant bool
	}{
		{"other live client seen", lockView{Members: []string{"A", "B"}, Since: t0.Add(-time.Hour)}, 0, false},
		{"other live client, just before grace ends", lockView{Members: []string{"A", "B"}, Since: t0.Add(-time.Hour)}, grace - time.Millisecond, false},
		{"other live client, grace over", lockView{Members: []string{"A", "B"}, Since: t0.Add(-time.Hour)}, grace, true},
		{"sole client, registry complete", lockView{Members: []string{"A"}, Since: t0.Add(-heartbeatCoverage)}, 0, true},
		{"sole client, registry too young", lockView{Members: []string{"A"}, Since: t0.Add(-heartbeatCoverage + time.Second)}, 0, false},
		{"no heartbeat at all yet, registry complete", lockView{Since: t0.Add(-time.Hour)}, 0, true},
	}
	for _, c := range cases {
		m := newLockManager()
		m.lock(7, "warmup", "X", nil, c.view, t0) // the term's first request opens the window
		got := m.lock(7, "g", "A", []MessageQueue{mq0}, c.view, t0.Add(c.at))
		if (len(got) == 1) != c.grant {
			t.Errorf("%s: granted=%v, want %v", c.name, len(got) == 1, c.grant)
		}
	}
}

func TestTermChangeDiscardsTable(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	m := newLockManager()
	view := lockView{Members: []string{"A", "B"}, Since: t0.Add(-time.Hour)}
	m.lock(3, "g", "A", []MessageQueue{mq0}, view, t0.Add(-2*lockExpiry)) // term 3, grace over by t0
	if got := m.lock(3, "g", "A", []MessageQueue{mq0}, view, t0); len(got) != 1 {
		t.Fatalf("A in term 3 after grace: %v", got)
	}
	// Leadership lost and won again: term 5 knows nothing and waits out the window,
	// even for the client that held the lock before (another leader may have
	// granted the queue to B meanwhile).
	if got := m.lock(5, "g", "A", []MessageQueue{mq0}, view, t0.Add(time.Second)); len(got) != 0 {
		t.Fatalf("A in a new term inside the grace window: %v", got)
	}
	if _, ok := m.isLocked("g", mq0, t0.Add(time.Second)); ok {
		t.Fatal("term change kept the old table")
	}
}

func lockBody(t *testing.T, group, client string, mqs ...MessageQueue) []byte {
	t.Helper()
	b, err := json.Marshal(lockBatchBody{ConsumerGroup: group, ClientID: client, MQSet: mqs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// registryComplete makes the broker's client registry old enough to list every
// live client, so a lock is granted during the term's grace window when the
// requester is the group's only client.
func registryComplete(b *Broker) {
	b.clients.mu.Lock()
	b.clients.since = time.Now().Add(-time.Hour)
	b.clients.mu.Unlock()
}

func TestLockBatchOverTheWire(t *testing.T) {
	tb := startTestBroker(t, RoleLeader, nil)
	registryComplete(tb.b)
	r := tb.call(t, transport.LockBatchMQ, nil, lockBody(t, "g", "A", mq0, mq1))
	if r.ResponseCode() != transport.Success {
		t.Fatalf("lock: %v %s", r.ResponseCode(), r.Remark)
	}
	var ans struct {
		LockOKMQSet []MessageQueue `json:"lockOKMQSet"`
	}
	if err := json.Unmarshal(r.Body, &ans); err != nil || !slices.Equal(ans.LockOKMQSet, []MessageQueue{mq0, mq1}) {
		t.Fatalf("lock answer %s (%v)", r.Body, err)
	}
	r = tb.call(t, transport.LockBatchMQ, nil, lockBody(t, "g", "B", mq0, mq1))
	if err := json.Unmarshal(r.Body, &ans); err != nil || len(ans.LockOKMQSet) != 0 {
		t.Fatalf("B's lock answer %s (%v), want none", r.Body, err)
	}
	if r := tb.call(t, transport.UnlockBatchMQ, nil, lockBody(t, "g", "A", mq1)); r.ResponseCode() != transport.Success {
		t.Fatalf("unlock: %v %s", r.ResponseCode(), r.Remark)
	}
	r = tb.call(t, transport.LockBatchMQ, nil, lockBody(t, "g", "B", mq0, mq1))
	if err := json.Unmarshal(r.Body, &ans); err != nil || !slices.Equal(ans.LockOKMQSet, []MessageQueue{mq1}) {
		t.Fatalf("B after A unlocked mq1: %s (%v)", r.Body, err)
	}
	if r := tb.call(t, transport.LockBatchMQ, nil, []byte(`{"consumerGroup":"g"}`)); r.ResponseCode() != transport.InvalidParameter {
		t.Fatalf("lock without clientId: %v %s", r.ResponseCode(), r.Remark)
	}
}

func TestLockOnFollowerIsForwarded(t *testing.T) {
	leader := startTestBroker(t, RoleLeader, nil)
	follower := startTestBroker(t, RoleFollower, []Peer{{ID: "n0", ClientAddr: leader.b.Addr()}, {ID: "n1"}})
	registryComplete(leader.b)
	r := follower.call(t, transport.LockBatchMQ, nil, lockBody(t, "g", "A", mq0))
	if r.ResponseCode() != transport.Success {
		t.Fatalf("lock via follower: %v %s", r.ResponseCode(), r.Remark)
	}
	if who, ok := leader.b.clients.locks.isLocked("g", mq0, time.Now()); !ok || who != "A" {
		t.Fatalf("leader's table after a forwarded lock: %q %v", who, ok)
	}
	if _, ok := follower.b.clients.locks.isLocked("g", mq0, time.Now()); ok {
		t.Fatal("the follower kept a lock of its own")
	}
}
