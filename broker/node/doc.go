// Package node is one replicated member of a broker group: hashicorp/raft wired
// to the raftlog stores, the fsm (which applies committed entries to the store),
// a raft transport, and group commit in front of it all.
//
// # What it owns
//
//   - Open/Close of the node's data directory: raft/ (raftlog stores),
//     snapshots/ (raftlog's CommitLog-aware snapshot store: a local snapshot
//     is metadata plus a CommitLog range, streamed from the live segments;
//     2 retained), store/ (CommitLog, ConsumeQueues, IndexFiles and the FSM's
//     apply checkpoint).
//   - raft configuration: NoSnapshotRestoreOnStart (the store and apply
//     checkpoint survive restarts; raft replays only what follows the
//     checkpoint), BatchApplyCh, timings from Config. A fresh node that is in
//     the static peer list bootstraps the group (every such node may; raft's
//     ErrCantBootstrap is ignored).
//   - Group commit (proposer.go): concurrent Propose calls are coalesced into
//     one PutMessages entry, bounded by MaxBatchBytes and MaxBatchMessages,
//     with up to MaxInflight entries pipelined in raft; while one is in
//     flight, the next is proposed only once PipelineMinBytes are queued (or a
//     full batch), else it waits and grows. With nothing in flight, the queue
//     waits up to GatherMax (and half the last commit) for the callers the
//     last entry answered, so N sync producers share one entry instead of
//     alternating 1 and N-1. Each caller gets its own results.
//     More than MaxPending queued messages fail fast with ErrBusy.
//   - Roles: RoleLeader is announced (Subscribe, State) only after the leader
//     barrier — the node has applied everything committed before its term —
//     and Propose on a leader waits for it. Leadership transfer, voters and
//     non-voters (AddVoter, AddNonvoter, Promote, RemoveServer).
//   - The FSM's apply checkpoint every CheckpointInterval and at Close.
//   - The raft transport's pipelines, wrapped so their responses are always
//     taken off the transport at once (pipeline.go: hashicorp/raft v1.7.3
//     otherwise deadlocks replication to a follower that refused an append),
//     and fenced while a disk write hangs (diskguard.go).
//   - The leader's raft log fsync alongside replication (decision 0015): raft's
//     stores defer the leader's fsync (DeferLeaderFsync, installed after
//     NewRaft), the FSM waits for an entry to be durable before applying it
//     (fsm.Config.WaitLogDurable), and every AppendEntries the leader sends
//     carries a commit index no higher than its durable index (commitcap.go).
//     The disk guard times the deferred fsyncs too. SerialLeaderFsync turns
//     it off.
//
// It must not be imported by store, fsm, raftlog or transport; only the broker
// (and tests) use it. internal/testcluster builds groups of nodes for tests.
//
// # Outcomes of a write
//
//	nil                 committed on a quorum (each fsynced) and applied here;
//	                    per-message business failures are in fsm.MessageResult.Err
//	ErrNotLeader        not applied; forward to State().LeaderAddr
//	ErrBusy, ErrClosed  not applied; the client may retry
//	ErrUnknownOutcome   may or may not be applied (leadership lost after the
//	                    entry was appended, shutdown, caller gave up): the
//	                    broker answers SYSTEM_ERROR, never SEND_OK
//
// # Concurrency
//
// Every exported method is safe for concurrent use. Goroutines per node: the
// proposer's batching goroutine and completion goroutine (raft applies
// entries in order, so one goroutine waits for futures in proposal order), a
// role watcher that consumes raft's leadership notifications and runs the
// barrier, and the checkpoint ticker. No goroutine per call or per message.
//
// # Usage
//
//	n, err := node.Open(node.Config{
//		ID: "n0", Dir: dataDir, Peers: peers, Transport: trans,
//		Store: store.Config{CommitLogSegmentSize: 1 << 30}, StoreHost: brokerAddr,
//		Logger: logger,
//	})
//	roles, cancel := n.Subscribe() // register brokerId 0 on RoleLeader
//	res, err := n.Propose(ctx, [][]byte{encodedMsg})
//	switch {
//	case errors.Is(err, node.ErrNotLeader): // forward to n.State().LeaderAddr
//	case errors.Is(err, node.ErrUnknownOutcome): // SYSTEM_ERROR
//	}
//	defer n.Close()
package node
