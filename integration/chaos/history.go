package chaos

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Outcome is what a client learned about one send attempt.
type Outcome int

const (
	// OK: the broker acknowledged the send at a (queue, offset).
	OK Outcome = iota
	// Fail: the broker clearly refused it (not applied, by the broker's word).
	Fail
	// Unknown: timeout, lost connection or an error that does not say whether the
	// message was applied; both outcomes are legal.
	Unknown
)

func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Fail:
		return "fail"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// QueueKey names one message queue of the group.
type QueueKey struct {
	Topic   string
	QueueID int32
}

func (q QueueKey) String() string { return fmt.Sprintf("%s#%d", q.Topic, q.QueueID) }

// SendOp is one send attempt. ID is the workload's unique id, also the body; a
// retry of the same id is a new SendOp with Attempt+1.
type SendOp struct {
	Client  string
	ID      string
	Attempt int
	Queue   QueueKey
	Outcome Outcome
	// Offset is the acknowledged queue offset (OK only; -1 otherwise).
	Offset      int64
	BrokerMsgID string
	Addr        string // broker address the client sent to
	Call        time.Time
	Return      time.Time
	Err         string
}

// ReadOp is one message a reader saw at (queue, offset). Session numbers a
// reader's sequential scan; within a session offsets must advance by one.
type ReadOp struct {
	Client  string
	Session int
	Queue   QueueKey
	Offset  int64
	ID      string
	At      time.Time
}

// History is the record of every client operation of a scenario. Safe for
// concurrent use.
type History struct {
	mu    sync.Mutex
	sends []SendOp
	reads []ReadOp
	cons  consumerLog // groups, deliveries and offsets (consumer_history.go)
}

// AddSend records one send attempt.
func (h *History) AddSend(op SendOp) {
	h.mu.Lock()
	h.sends = append(h.sends, op)
	h.mu.Unlock()
}

// AddRead records one read.
func (h *History) AddRead(op ReadOp) {
	h.mu.Lock()
	h.reads = append(h.reads, op)
	h.mu.Unlock()
}

// Sends returns a copy of the send attempts.
func (h *History) Sends() []SendOp {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]SendOp(nil), h.sends...)
}

// Reads returns a copy of the reads.
func (h *History) Reads() []ReadOp {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]ReadOp(nil), h.reads...)
}

// AcksCalledSince counts the acknowledged sends called at or after t
// (without copying the history: an in-process scenario polls it).
func (h *History) AcksCalledSince(t time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.sends {
		if s.Outcome == OK && !s.Call.Before(t) {
			n++
		}
	}
	return n
}

// FirstAckAfter is the Return time of the first OK send whose Call is at or after
// t, by a client whose name starts with clientPrefix; zero if none.
func (h *History) FirstAckAfter(t time.Time, clientPrefix string) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	var best time.Time
	for _, s := range h.sends {
		if s.Outcome != OK || s.Call.Before(t) || !strings.HasPrefix(s.Client, clientPrefix) {
			continue
		}
		if best.IsZero() || s.Return.Before(best) {
			best = s.Return
		}
	}
	return best
}

// ReplicaLog is one replica's final content: for each queue the ids at offsets
// 0, 1, … ("" where a record's body could not be read) and the raw CommitLog bytes
// from CommitLogMin on.
type ReplicaLog struct {
	Node         string
	Queues       map[QueueKey][]string
	CommitLogMin int64
	CommitLog    []byte
	// RaftLog: the CommitLog is also the raft log (raftLogStore=commitlog). Its
	// tail may then hold entries one replica has and another not yet (the node
	// stopped first misses the next leader's first entry), so only the range
	// every replica holds is compared.
	RaftLog bool
}
