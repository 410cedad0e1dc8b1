package node

import "errors"

// Sentinel errors. The broker maps them onto RocketMQ response codes; match them
// with errors.Is (they are wrapped with the raft error and identifiers).
// Invariant: an error that matches ErrUnknownOutcome never also matches
// ErrNotLeader, ErrBusy or ErrClosed, so a broker may test them in any order.
var (
	// ErrNotLeader: this node is not the leader; the messages were definitely
	// not applied. The broker forwards the request to the leader.
	ErrNotLeader = errors.New("node: not the leader")
	// ErrBusy: too many messages are waiting for an entry, or raft did not take
	// the entry in time; definitely not applied (SYSTEM_BUSY).
	ErrBusy = errors.New("node: busy")
	// ErrUnknownOutcome: the entry was handed to raft but its fate is unknown
	// (leadership lost, shutdown or a local log failure after append, caller
	// stopped waiting). It may still commit. The broker answers SYSTEM_ERROR,
	// never SEND_OK.
	ErrUnknownOutcome = errors.New("node: outcome unknown")
	// ErrClosed: the node is closed; definitely not applied.
	ErrClosed = errors.New("node: closed")
	// ErrConfig reports an invalid Config.
	ErrConfig = errors.New("node: invalid config")
)

// ErrUnknownServer: the server id is not in the group's configuration.
var ErrUnknownServer = errors.New("node: unknown server")
