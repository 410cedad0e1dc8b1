package clients

import (
	"slices"
	"testing"
	"time"
)

var (
	mq0 = MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}
	mq1 = MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 1}
)

// settled is a view outside any grace concern: the registry is old and lists both clients.
func settled(t0 time.Time) LockView {
	return LockView{Members: []string{"A", "B"}, Since: t0.Add(-time.Hour)}
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
	at := t0.Add(LockExpiry + time.Second)
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
	grace := LockExpiry + lockTakeoverSlack
	cases := []struct {
		name  string
		view  LockView
		at    time.Duration // after the term's first request
		grant bool
	}{
		{"other live client seen", LockView{Members: []string{"A", "B"}, Since: t0.Add(-time.Hour)}, 0, false},
		{"other live client, just before grace ends", LockView{Members: []string{"A", "B"}, Since: t0.Add(-time.Hour)}, grace - time.Millisecond, false},
		{"other live client, grace over", LockView{Members: []string{"A", "B"}, Since: t0.Add(-time.Hour)}, grace, true},
		{"sole client, registry complete", LockView{Members: []string{"A"}, Since: t0.Add(-HeartbeatCoverage)}, 0, true},
		{"sole client, registry too young", LockView{Members: []string{"A"}, Since: t0.Add(-HeartbeatCoverage + time.Second)}, 0, false},
		{"no heartbeat at all yet, registry complete", LockView{Since: t0.Add(-time.Hour)}, 0, true},
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

// The window opens when the broker starts leading, not at the first lock
// request, which a client with a stale route sends up to a route refresh later;
// a lock request earlier than that (a race with the role event) opens it, and
// the later start does not move it.
func TestGraceWindowOpensAtTermStart(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	grace := LockExpiry + lockTakeoverSlack
	view := LockView{Members: []string{"A", "B"}, Since: t0.Add(-time.Hour)}
	m := newLockManager()
	m.startTerm(7, t0)
	// The first request comes 30 s into the term; the window still ends at t0+grace.
	if got := m.lock(7, "g", "A", []MessageQueue{mq0}, view, t0.Add(30*time.Second)); len(got) != 0 {
		t.Fatalf("inside the window: %v", got)
	}
	if got := m.lock(7, "g", "A", []MessageQueue{mq0}, view, t0.Add(grace-time.Millisecond)); len(got) != 0 {
		t.Fatalf("just before the window ends: %v", got)
	}
	if got := m.lock(7, "g", "A", []MessageQueue{mq0}, view, t0.Add(grace)); len(got) != 1 {
		t.Fatalf("window over (term start + %s): %v", grace, got)
	}
	// A repeated start of the same term keeps the window and the table.
	m.startTerm(7, t0.Add(grace+time.Minute))
	if who, ok := m.isLocked("g", mq0, t0.Add(grace+time.Second)); !ok || who != "A" {
		t.Fatalf("restarting the same term lost A's lock: %q %v", who, ok)
	}
	// A request that beat the role event opens the window; the start after it
	// does not push it later.
	m = newLockManager()
	m.lock(8, "g", "A", []MessageQueue{mq0}, view, t0)
	m.startTerm(8, t0.Add(10*time.Second))
	if got := m.lock(8, "g", "A", []MessageQueue{mq0}, view, t0.Add(grace)); len(got) != 1 {
		t.Fatalf("window from the first request: %v", got)
	}
}

func TestTermChangeDiscardsTable(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	m := newLockManager()
	view := LockView{Members: []string{"A", "B"}, Since: t0.Add(-time.Hour)}
	m.lock(3, "g", "A", []MessageQueue{mq0}, view, t0.Add(-2*LockExpiry)) // term 3, grace over by t0
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
