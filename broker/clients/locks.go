package clients

import (
	"sync"
	"time"
)

// LockExpiry is how long a queue lock lives without renewal: Java's
// rocketmq.broker.rebalance.lockMaxLiveTime default. Go clients renew every 20 s
// (RebalanceLockInterval) and consider their own lock stale after 30 s.
const LockExpiry = 60 * time.Second

// lockTakeoverSlack is added to LockExpiry for the grace window of a new leader.
// An old leader keeps answering as leader until its raft leader lease lapses
// (hashicorp/raft LeaderLeaseTimeout, 500 ms by default) and a lock request may be
// in flight to it for the client's 1 s timeout, so the last lock it granted can be
// a few seconds younger than our term. 5 s covers both with margin.
const lockTakeoverSlack = 5 * time.Second

// HeartbeatCoverage is how long a node must have collected heartbeats before
// its registry lists every live client: Go clients heartbeat every broker
// address every 30 s.
const HeartbeatCoverage = 35 * time.Second

// MessageQueue is RocketMQ's queue identity as it appears in JSON bodies.
type MessageQueue struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
}

type lockEntry struct {
	clientID string
	renewed  time.Time
}

// LockView is what the lock manager needs to know about a group's clients to
// grant a lock during a new leader's grace window.
type LockView struct {
	// Members are the client ids that heartbeated for the group within LockExpiry.
	Members []string
	// Since is when this node started collecting heartbeats.
	Since time.Time
}

// lockManager is the leader's table of orderly-consumption queue locks
// (Java RebalanceLockManager). It is soft state: not replicated. A new leader does
// not know which locks the old one granted, so during a grace window of
// LockExpiry+lockTakeoverSlack from the start of its term (when the broker saw
// itself lead, or the term's first lock request if that came first) it grants a
// queue no other client holds only when the requester is provably the group's
// only live client (docs/decisions/0003-orderly-locks-after-failover.md).
//
// Deterministic: time and the leader's term are arguments.
type lockManager struct {
	mu sync.Mutex
	// term is the raft term the table belongs to; a request in another term
	// discards the table and opens a new grace window.
	term uint64
	// Invariant: graceUntil is set whenever term != 0.
	graceUntil time.Time
	groups     map[string]map[MessageQueue]*lockEntry
}

func newLockManager() *lockManager {
	return &lockManager{groups: make(map[string]map[MessageQueue]*lockEntry)}
}

// startTerm opens term's grace window at now unless it is open already: the
// broker calls it as it starts leading.
func (m *lockManager) startTerm(term uint64, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.enterTerm(term, now)
}

// enterTerm resets the table when the leader's term changed.
func (m *lockManager) enterTerm(term uint64, now time.Time) {
	if term == m.term {
		return
	}
	m.term = term
	m.graceUntil = now.Add(LockExpiry + lockTakeoverSlack)
	clear(m.groups)
}

// soleLiveClient reports whether clientID is the only client of the group that
// could hold a lock granted by a previous leader.
func soleLiveClient(v LockView, clientID string, now time.Time) bool {
	if now.Sub(v.Since) < HeartbeatCoverage {
		return false // a live client may not have reached this node yet
	}
	for _, id := range v.Members {
		if id != clientID {
			return false
		}
	}
	return true
}

// lock grants clientID every queue of mqs that is free, expired or already its
// own (renewing those), and returns the granted ones in request order.
func (m *lockManager) lock(term uint64, group, clientID string, mqs []MessageQueue, view LockView, now time.Time) []MessageQueue {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.enterTerm(term, now)
	table := m.groups[group]
	if table == nil {
		table = make(map[MessageQueue]*lockEntry)
		m.groups[group] = table
	}
	inGrace := now.Before(m.graceUntil)
	mayTakeFree := !inGrace || soleLiveClient(view, clientID, now)
	granted := make([]MessageQueue, 0, len(mqs))
	for _, mq := range mqs {
		e := table[mq]
		switch {
		case e != nil && e.clientID == clientID:
			e.renewed = now
		case e != nil && now.Sub(e.renewed) <= LockExpiry:
			continue // held by another live lock
		case !mayTakeFree:
			continue // a previous leader's lock may still be live
		default:
			table[mq] = &lockEntry{clientID: clientID, renewed: now}
		}
		granted = append(granted, mq)
	}
	return granted
}

// unlock releases the queues of mqs that clientID holds.
func (m *lockManager) unlock(term uint64, group, clientID string, mqs []MessageQueue, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.enterTerm(term, now)
	table := m.groups[group]
	for _, mq := range mqs {
		if e := table[mq]; e != nil && e.clientID == clientID {
			delete(table, mq)
		}
	}
	if len(table) == 0 {
		delete(m.groups, group)
	}
}

// isLocked reports whether mq of group is locked by a live lock, and by whom.
func (m *lockManager) isLocked(group string, mq MessageQueue, now time.Time) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.groups[group][mq]; e != nil && now.Sub(e.renewed) <= LockExpiry {
		return e.clientID, true
	}
	return "", false
}
