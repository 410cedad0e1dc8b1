// Package replica is the broker's vocabulary for its replicated state and the
// adapter that implements it over broker/node and fsm.
//
// The handlers above it (broker/clientapi, broker/adminapi), the leader-only
// services (broker/schedule, broker/transaction) and the broker's wiring speak to
// raft only through the interfaces here; each consumer declares the narrow part
// it needs (schedule's Writer, transaction's Writer) and Replica is their union.
// Concepts that the FSM already defines are used as they are, without a second
// type: fsm.TopicConfig, fsm.SubscriptionGroupConfig, fsm.OffsetEntry,
// fsm.MessageResult, fsm.ScheduleAdvance and the fsm.Perm* bits.
//
// It may import broker/node, fsm and store; nothing in it knows the wire protocol.
//
// # Usage
//
//	n, _ := node.Open(cfg)
//	rep := replica.NewNode(n, replica.NodeOptions{ObserveApply: m.ObserveApply})
//	res, err := rep.PutMessages(ctx, recs) // ErrNotLeader, ErrBusy, ErrNoLeader or ErrUnknownOutcome
//
// # Concurrency
//
// Every method is safe for concurrent use. RoleChanges returns one channel per
// Replica, holding only the newest status.
package replica
