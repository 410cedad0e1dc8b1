package node

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Role is a node's part in its group as the broker sees it.
type Role uint8

const (
	RoleFollower Role = iota
	RoleCandidate
	// RoleLeader: raft leader that has passed its barrier (applied == commit);
	// the broker registers brokerId 0 only in this role.
	RoleLeader
	// RoleLeaderPending: raft leader still applying earlier entries.
	RoleLeaderPending
	RoleShutdown
)

func (r Role) String() string {
	switch r {
	case RoleFollower:
		return "follower"
	case RoleCandidate:
		return "candidate"
	case RoleLeader:
		return "leader"
	case RoleLeaderPending:
		return "leader-pending"
	case RoleShutdown:
		return "shutdown"
	}
	return "unknown"
}

// RoleEvent is published to subscribers on every role or leader change.
type RoleEvent struct {
	Role       Role
	Term       uint64
	LeaderID   raft.ServerID
	LeaderAddr raft.ServerAddress
}

// barrierRetry is the pause before retrying a failed leader barrier while
// raft still says we lead (e.g. the barrier timed out enqueuing).
const barrierRetry = 50 * time.Millisecond

// roleWatcher turns raft's leadership notifications into RoleEvents, running
// the leader barrier before announcing RoleLeader.
//
// Concurrency: run is the only writer of ready; waitWritable and subscribers
// read under mu. Subscriber channels hold one event and are overwritten with
// the newest, so a slow subscriber never blocks the watcher and never acts on
// a stale role.
type roleWatcher struct {
	r   *raft.Raft
	log hclog.Logger

	obsCh chan raft.Observation
	obs   *raft.Observer

	mu sync.Mutex
	// readyTerm is the term in which this node passed its leader barrier (0 =
	// none). It counts only while it equals raft's current term, so a stale
	// value from an earlier leadership never makes the node writable.
	readyTerm uint64
	changed   chan struct{} // closed and replaced on every change
	subs      map[int]chan RoleEvent
	nextSub   int
	closed    bool
}

func newRoleWatcher(r *raft.Raft, log hclog.Logger) *roleWatcher {
	w := &roleWatcher{
		r:       r,
		log:     log,
		obsCh:   make(chan raft.Observation, 16),
		changed: make(chan struct{}),
		subs:    make(map[int]chan RoleEvent),
	}
	w.obs = raft.NewObserver(w.obsCh, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	r.RegisterObserver(w.obs)
	return w
}

func (w *roleWatcher) run(notify <-chan bool, stop <-chan struct{}) {
	for {
		select {
		case isLeader := <-notify:
			if isLeader {
				w.becomeLeader(notify, stop)
			} else {
				w.setReady(0)
			}
		case <-w.obsCh:
			w.publish()
		case <-stop:
			return
		}
	}
}

// becomeLeader runs the barrier; it returns early when a step-down is queued.
func (w *roleWatcher) becomeLeader(notify <-chan bool, stop <-chan struct{}) {
	w.publish() // RoleLeaderPending
	start := time.Now()
	term := w.r.CurrentTerm()
	for {
		// raft never answers a barrier still buffered in its apply channel at
		// shutdown, so the wait must also end on stop.
		bf := w.r.Barrier(0)
		errCh := make(chan error, 1)
		go func() { errCh <- bf.Error() }()
		var err error
		select {
		case err = <-errCh:
		case <-stop:
			return
		}
		if err == nil {
			break
		}
		w.log.Warn("leader barrier failed", "error", err)
		select {
		case isLeader := <-notify:
			if !isLeader {
				w.setReady(0)
				return
			}
		case <-stop:
			return
		case <-time.After(barrierRetry):
		}
		if w.r.State() != raft.Leader || w.r.CurrentTerm() != term {
			w.setReady(0)
			return
		}
	}
	// A step-down that raced the barrier is still queued in notify and will
	// reset ready right after.
	w.log.Info("leader ready", "term", term, "barrier", time.Since(start))
	w.setReady(term)
}

func (w *roleWatcher) setReady(term uint64) {
	w.mu.Lock()
	w.readyTerm = term
	w.mu.Unlock()
	w.publish()
}

// isReady reports whether this node leads and has passed the barrier of the
// current term.
func (w *roleWatcher) isReady() bool {
	w.mu.Lock()
	t := w.readyTerm
	w.mu.Unlock()
	return t != 0 && t == w.r.CurrentTerm() && w.r.State() == raft.Leader
}

// current reads the role as subscribers see it.
func (w *roleWatcher) current() RoleEvent {
	ready := w.isReady()
	addr, id := w.r.LeaderWithID()
	ev := RoleEvent{Term: w.r.CurrentTerm(), LeaderID: id, LeaderAddr: addr}
	switch w.r.State() {
	case raft.Leader:
		ev.Role = RoleLeaderPending
		if ready {
			ev.Role = RoleLeader
		}
	case raft.Candidate:
		ev.Role = RoleCandidate
	case raft.Shutdown:
		ev.Role = RoleShutdown
	default:
		ev.Role = RoleFollower
	}
	return ev
}

func (w *roleWatcher) publish() {
	ev := w.current()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	close(w.changed)
	w.changed = make(chan struct{})
	for _, ch := range w.subs {
		offerLatest(ch, ev)
	}
}

// offerLatest replaces whatever ch holds with ev. Only the publisher sends, under
// roleWatcher.mu, so the second send cannot block.
func offerLatest(ch chan RoleEvent, ev RoleEvent) {
	select {
	case <-ch:
	default:
	}
	ch <- ev
}

func (w *roleWatcher) subscribe() (<-chan RoleEvent, func()) {
	ev := w.current()
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan RoleEvent, 1)
	ch <- ev
	if w.closed {
		return ch, func() {}
	}
	id := w.nextSub
	w.nextSub++
	w.subs[id] = ch
	return ch, func() {
		w.mu.Lock()
		delete(w.subs, id)
		w.mu.Unlock()
	}
}

// writableNow is waitWritable's test without the wait: true when a proposal
// would not have to wait for the barrier (or for anything).
func (w *roleWatcher) writableNow() bool {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	return !closed && (w.r.State() != raft.Leader || w.isReady())
}

// waitWritable returns once the node may propose: it is not the raft leader
// (raft will answer ErrNotLeader), or it is and has passed its barrier.
func (w *roleWatcher) waitWritable(ctx context.Context) error {
	for {
		w.mu.Lock()
		changed, closed := w.changed, w.closed
		w.mu.Unlock()
		if closed {
			return ErrClosed
		}
		if w.r.State() != raft.Leader || w.isReady() {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(barrierRetry):
			// raft may have stepped down without us seeing notify yet.
		}
	}
}

func (w *roleWatcher) close() {
	w.r.DeregisterObserver(w.obs)
	w.mu.Lock()
	w.closed = true
	w.readyTerm = 0
	close(w.changed)
	w.changed = make(chan struct{})
	ev := RoleEvent{Role: RoleShutdown, Term: w.r.CurrentTerm()}
	for id, ch := range w.subs {
		offerLatest(ch, ev)
		delete(w.subs, id)
	}
	w.mu.Unlock()
}
