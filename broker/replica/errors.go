package replica

import "errors"

// Outcomes of a replicated write besides success. broker/route maps each to its
// RocketMQ response code.
var (
	// ErrNotLeader: this node does not lead; nothing was applied. The request is
	// forwarded to the leader.
	ErrNotLeader = errors.New("not the leader")
	// ErrBusy: too many writes are queued; nothing was applied.
	ErrBusy = errors.New("system busy")
	// ErrUnknownOutcome: the write may or may not commit. Never answered as ok.
	ErrUnknownOutcome = errors.New("outcome unknown")
	// ErrNoLeader: the group has no leader (election, or this node is closed).
	ErrNoLeader = errors.New("no leader")
	// ErrNothingToSnapshot: raft has applied nothing since its last snapshot; the
	// state the operator asked for holds.
	ErrNothingToSnapshot = errors.New("nothing new to snapshot")
	// ErrUnknownMember: a membership change named a server that is not in the
	// group's configuration.
	ErrUnknownMember = errors.New("not a member of the group")
)

// ErrConfigRefused: the FSM refused a topic, group or offset change (invalid
// values, or a name that is not there); the wrapped fsm error says which.
var ErrConfigRefused = errors.New("config change refused")
