package node

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Cause is why this node saw the leader change, as well as one node can tell.
type Cause string

const (
	// CauseRestart: the node (re)started; the first leader it learns of.
	CauseRestart Cause = "restart"
	// CauseElectionTimeout: a leader was elected after the previous one was lost
	// (a follower's election timer fired somewhere in the group).
	CauseElectionTimeout Cause = "election_timeout"
	// CauseLeadershipTransfer: an operator (or a shutting-down leader) handed
	// leadership over: this node started the transfer, was asked to take over,
	// or was asked for its vote by a transfer's candidate.
	CauseLeadershipTransfer Cause = "leadership_transfer"
	// CauseLostContact: this follower heard nothing from the leader for a
	// heartbeat timeout and dropped it.
	CauseLostContact Cause = "lost_contact"
	// CauseStepDown: this node led and stopped (lost its quorum, saw a higher
	// term, or was removed) without a transfer.
	CauseStepDown Cause = "step_down"
)

// LeadershipRing is how many observations a node keeps: a few days of an
// unsettled group, far more than an operator reads, about 40 KiB.
const LeadershipRing = 256

// transferWindow is how long after this node asked for a transfer (or saw a
// transfer's vote request) a leader change still counts as that transfer:
// hashicorp/raft gives up a transfer after one election timeout, well below it.
const transferWindow = 10 * time.Second

// LeadershipObservation is one leader change as this node observed it.
type LeadershipObservation struct {
	Time time.Time
	// Term is raft's current term on this node when it observed the change.
	Term uint64
	// Leader is the new leader's server id, "" while the node knows none.
	Leader raft.ServerID
	// PreviousLeader is the last non-empty leader before this one.
	PreviousLeader raft.ServerID
	Cause          Cause
	// Detail says what the cause was read from, for a human.
	Detail string
}

// leaderSignal is what the driver tells the core about one LeaderObservation.
type leaderSignal struct {
	now    time.Time
	term   uint64
	leader raft.ServerID
	// sinceContact is how long ago this node last heard from a leader.
	sinceContact time.Duration
}

// leadershipLog is the deterministic core: it classifies observations and keeps
// the newest LeadershipRing of them. Times are passed in.
//
// Concurrency: every method takes mu; the observer goroutine writes, admin
// requests read.
type leadershipLog struct {
	mu               sync.Mutex
	self             raft.ServerID
	heartbeatTimeout time.Duration
	// ring holds the observations oldest first once full; next is where the
	// next one goes. Invariant: len(ring) <= LeadershipRing.
	ring []LeadershipObservation
	next int
	// current is the leader as last observed ("" = none); previous the last
	// non-empty one. started turns false after the first non-empty leader.
	current, previous raft.ServerID
	// currentTerm is the term current was observed in.
	currentTerm uint64
	started     bool
	// transferAt is when a transfer was last asked for here or seen in a vote
	// request; lostCause is the cause of the last "no leader" observation.
	transferAt time.Time
	lostCause  Cause
}

func newLeadershipLog(self raft.ServerID, heartbeatTimeout time.Duration) *leadershipLog {
	return &leadershipLog{self: self, heartbeatTimeout: heartbeatTimeout, started: true}
}

// noteTransfer records that a leadership transfer is under way at now. term
// is the term of the transfer's vote request, 0 for this node's own request.
// A vote request whose term is not past the leader this node already follows
// is a stale one, of a transfer that is over: raft may hand it to us after the
// AppendEntries of the leader it elected (they come over different
// connections), and noting it then would call the next election, up to
// transferWindow later, a transfer too.
func (l *leadershipLog) noteTransfer(now time.Time, term uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if term != 0 && l.current != "" && term <= l.currentTerm {
		return
	}
	l.transferAt = now
}

// observe classifies one leader change and records it.
func (l *leadershipLog) observe(s leaderSignal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.leader == l.current {
		return // a repeated notification: nothing changed
	}
	transfer := !l.transferAt.IsZero() && s.now.Sub(l.transferAt) < transferWindow
	o := LeadershipObservation{Time: s.now, Term: s.term, Leader: s.leader, PreviousLeader: l.previous}
	switch {
	case s.leader == "" && l.current == l.self && transfer:
		o.Cause, o.Detail = CauseLeadershipTransfer, "this node handed leadership over"
	case s.leader == "" && l.current == l.self:
		o.Cause, o.Detail = CauseStepDown, "this node stopped leading"
	case s.leader == "" && l.current != "" && s.sinceContact < l.heartbeatTimeout:
		// A follower that drops a leader it heard from within the heartbeat
		// timeout was told to: raft's TimeoutNow of a transfer.
		o.Cause, o.Detail = CauseLeadershipTransfer, "asked to take over by "+string(l.current)
	case s.leader == "":
		o.Cause, o.Detail = CauseLostContact, "no contact with the leader for "+s.sinceContact.Round(time.Millisecond).String()
	case l.started:
		o.Cause, o.Detail = CauseRestart, "first leader seen since this node started"
	case transfer || l.lostCause == CauseLeadershipTransfer:
		o.Cause, o.Detail = CauseLeadershipTransfer, "elected by a leadership transfer"
	default:
		o.Cause, o.Detail = CauseElectionTimeout, "elected after the previous leader was lost"
	}
	if s.leader == "" {
		l.lostCause = o.Cause
	} else {
		l.lostCause, l.started, l.previous = "", false, s.leader
		if transfer {
			l.transferAt = time.Time{} // this transfer is done
		}
	}
	l.current, l.currentTerm = s.leader, s.term
	l.add(o)
}

func (l *leadershipLog) add(o LeadershipObservation) {
	if len(l.ring) < LeadershipRing {
		l.ring = append(l.ring, o)
		return
	}
	l.ring[l.next] = o
	l.next = (l.next + 1) % LeadershipRing
}

// history returns the observations oldest first, as a copy.
func (l *leadershipLog) history() []LeadershipObservation {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]LeadershipObservation, 0, len(l.ring))
	out = append(out, l.ring[l.next:]...)
	return append(out, l.ring[:l.next]...)
}

// watchLeadership is the driver: it feeds raft's leader observations and the
// vote requests of transfers into l until stop closes.
//
// Each observation is classified inside the observer's filter, which raft
// calls on its own goroutine at the moment the leader changes. Reading
// LastContact later, from a goroutine of ours, was wrong under load: by then
// raft could have granted a vote (which refreshes LastContact), so a follower
// that lost its leader to a timeout looked like one told to take over by a
// transfer (TestLeadershipHistoryOverTheWire failed that way at load).
func watchLeadership(r *raft.Raft, l *leadershipLog, now func() time.Time, stop <-chan struct{}) {
	ch := make(chan raft.Observation, 1) // nothing is ever sent: the filter does the work
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		switch d := o.Data.(type) {
		case raft.LeaderObservation:
			// sinceContact is measured against raft's own reading of
			// LastContact (time.Now, monotonic), not the injected wall clock:
			// a wall-clock jump must not turn into a minutes-long silence.
			l.observe(leaderSignal{now: now(), term: r.CurrentTerm(), leader: d.LeaderID, sinceContact: time.Since(r.LastContact())})
		case raft.RequestVoteRequest:
			if d.LeadershipTransfer {
				l.noteTransfer(now(), d.Term)
			}
		}
		return false
	})
	r.RegisterObserver(obs)
	defer r.DeregisterObserver(obs)
	// A leader raft learnt before the observer was registered is still news.
	if _, id := r.LeaderWithID(); id != "" {
		l.observe(leaderSignal{now: now(), term: r.CurrentTerm(), leader: id, sinceContact: time.Since(r.LastContact())})
	}
	<-stop
}
