// Package fsm is the raft.FSM of a broker group: the versioned command codec, Apply
// into the store, replicated metadata (topics, groups, consumer offsets, delay
// progress), the apply checkpoint, snapshot and restore.
//
// It may import store only and never touches the network. Apply is deterministic:
// no clocks, randomness, map iteration order or node-local configuration. Timestamps
// and the store host come inside the command from the leader.
//
// # Commands
//
// A command is one type byte, one version byte, then the payload (big-endian,
// length-prefixed). Type numbers are append-only and pinned by golden files in
// testdata (go test ./fsm -run Golden -update rewrites them after a deliberate change;
// a renumbering always fails the test).
//
//	| code | command                 | payload                                            | result        |
//	|------|-------------------------|----------------------------------------------------|---------------|
//	|  1   | PutMessages             | ts int64, host (len|addr|port), n, n×(len|record)  | *PutResult    |
//	|  2   | TopicUpsert             | JSON TopicConfig (RocketMQ field names)             | *ConfigResult |
//	|  3   | TopicDelete             | name (uint16 len), flag byte 0                      | *ConfigResult |
//	|  4   | SubscriptionGroupUpsert | JSON SubscriptionGroupConfig                        | *ConfigResult |
//	|  5   | SubscriptionGroupDelete | name, cleanOffsets byte                             | *ConfigResult |
//	|  6   | ConsumerOffsets         | n, n×(group, topic, queueId int32, offset int64)    | *ConfigResult |
//	|  7   | ScheduleProgress        | n, n×(level int32, offset int64)                    | *ConfigResult |
//	|  8   | PinSegmentSize          | segment size int64                                  | *ConfigResult |
//	| 9-15 | reserved: transactions  |                                                    |               |
//	|  16  | ACLSet                  | version u64, len u32, document (plain_acl.yml)      | *ConfigResult |
//	|17-23 | reserved: ACL           |                                                    |               |
//	|  24  | DeliverScheduled        | n, n×(level, from, to), PutMessages payload         | *PutResult    |
//	|  25  | TransactionOps          | n, n×(kind u8, halfOffset i64, record i32), PutMessages payload | *TransactionResult |
//	|  26  | MemberUpsert            | JSON MemberInfo {id, clientAddr, group}             | *ConfigResult |
//	|  27  | OffsetReset             | at int64 (ms), then ConsumerOffsets' payload        | *ConfigResult |
//
// TransactionOps records transaction decisions over RMQ_SYS_TRANS_HALF_TOPIC queue 0,
// keyed by half queue offset: commit (re-puts its record, the message in its real
// topic), rollback, discard (check limit reached; its optional record goes to
// TRANS_CHECK_MAX_TIME_TOPIC), check (one more check-back sent) and expire (every
// offset below it is gone through retention). Apply skips an op whose half offset
// is already decided (ErrTransactionDecided), stores the records of the others in one
// batch and only then records the decisions, so a commit's re-put and its "done" are
// one atomic, idempotent step and a retried or racing decision stores nothing. The
// decided offsets (as ranges) and check counts are part of Metadata, hence of every
// checkpoint and snapshot (absent from the image while empty).
//
// PutMessages records are encoded once by the leader with store.AppendMessage. Apply
// checks each against replicated metadata (topic exists, queue id below
// writeQueueNums, well-formed v1 record as store.ViewRecord reads it, fits a segment),
// sets STOREHOST to the command's host (copying the record: the raft log entry's bytes
// are never modified), and appends the accepted ones in one store.AppendBatch, which
// assigns queue and physical offsets and patches STORETIMESTAMP from the command. The
// same entry therefore produces the same bytes at the same offsets on every replica.
//
// Business failures (topic missing, queue id out of range, illegal message, a
// conflicting segment-size pin, deleting what does not exist) are result values and
// identical on every replica, because they depend only on replicated state. Topics must
// be created through TopicUpsert before messages are put to them; that includes the
// broker's system topics (retry, DLQ, SCHEDULE_TOPIC_XXXX), which the leader proposes.
//
// Corruption stops the node: an undecodable or unknown command (or an unknown payload
// version) panics with the raft index and command type, and so does a CommitLog append
// that fails for a reason other than a rejected record or a full disk (an I/O error),
// or a pinned segment size that differs from this node's configuration. Every way of
// continuing would diverge: skipping the entry leaves this replica without a change
// the others applied, and retrying it cannot succeed. The node is restarted after the
// cause is fixed (or upgraded, when the leader is newer) and replays from its checkpoint.
//
// A full disk (ENOSPC) is not corruption: the store undoes the partial batch, so the
// FSM retries the same append with backoff until space returns (diskwait.go; chaos
// scenario D9), telling Config.OnDiskFull so the node hands leadership away. Stop
// ends such a wait at shutdown, leaving the entry unapplied for the next start.
//
// ACLSet replaces the group's whole ACL document (plain_acl.yml bytes; the FSM never
// parses it, broker/auth does) at a version that must be the replicated one + 1, a
// compare-and-set that refuses a lost update (ErrACLVersionConflict); a document over
// MaxACLDocument is refused (ErrACLTooLarge). Both are result values. The document
// and its version are part of Metadata (Metadata.ACLDocument), so every checkpoint and
// snapshot carries them (absent from the image while never set: older images load as
// "never set").
//
// MemberUpsert replaces one member's MemberInfo: its raft id, the client address
// (brokerIP1:listenPort) and its dLegerGroup. A node proposes its own when it
// becomes leader and the replicated entry differs, so followers learn where to
// relay writes without a dLegerPeerClientAddrs key. The table is part of
// Metadata, hence of every checkpoint and snapshot (absent from the image while
// empty, so older images load with no members and keep their bytes).
//
// # Recovery argument
//
// The raft log is the write-ahead log; the CommitLog is its materialised view,
// flushed in the background. The FSM keeps an apply checkpoint file
// {appliedIndex, appliedTerm, commitLogOffset, metadata}:
//
//  1. Checkpoint captures the state at one applied index (under the apply lock), calls
//     store.Flush and writes the file only when the durable offset is ≥ commitLogOffset,
//     atomically (temp file, fsync, rename, directory fsync). So whatever checkpoint is
//     on disk, the CommitLog bytes below its offset are durable, and its metadata is
//     the metadata after exactly appliedIndex.
//  2. On New, the store has already recovered (CRC scan, torn tail cut). Anything past
//     commitLogOffset came from entries after appliedIndex and is cut (store.Truncate);
//     a store that ends before commitLogOffset lost flushed data: ErrCheckpointAhead.
//     Metadata is loaded from the checkpoint.
//  3. raft must run with Config.NoSnapshotRestoreOnStart = true: it then does not feed
//     its local snapshot to Restore at start-up (which would throw the CommitLog away)
//     but sets its lastApplied to the snapshot index and replays committed entries after
//     it. Apply skips every index ≤ appliedIndex, so entries are applied exactly once:
//     no duplicate and no gap.
//  4. That needs appliedIndex ≥ the index of raft's newest snapshot. FSMSnapshot.Persist
//     writes a checkpoint (flushing first) before it streams the snapshot, so raft never
//     records a snapshot, nor compacts its log past one, that the checkpoint does not
//     cover. If a node still finds AppliedIndex() < its newest snapshot's index (a
//     crash in the middle of Restore, which removes the checkpoint before touching the
//     store), it must Restore that snapshot before starting raft.
//
// # Snapshots
//
// Snapshot captures {appliedIndex, term, CommitLog range [min, off), metadata}; Persist
// streams a self-describing image: magic "RRFSMSNP", version (2), header length, header
// JSON (SnapshotHeader), the length n and the raw CommitLog bytes of [off-n, off), then
// a CRC-32C of everything before it. ReadSnapshotHeader lets a SnapshotStore find the
// range without this package's internals.
//
// The CommitLog part goes by reference when the sink implements RangeSink (declared
// here, implemented by raftlog's SnapshotStore): Persist writes only the prefix up to
// the header JSON and calls WriteCommitLogRange(min, off); the SnapshotStore keeps that
// small record and, when raft opens the snapshot to send it, produces the length, the
// bytes from the live segments (store.ReadRange) and the CRC. A sink without it gets
// the bytes, read with store.ReadRange during Persist.
//
// Why the start may move (format version 2): the range is read when the snapshot is
// opened, possibly long after Snapshot, and retention may have deleted segments above
// the captured min by then. Pinning min for as long as a snapshot is retained would stop
// retention for good (each new snapshot captures the same min again), so the streamed
// bytes start at n = off - start for any segment boundary start ≥ min, and Restore
// resets the store from that start: the follower's CommitLog is then the sender's tail
// as it is now, exactly what the follower's own retention would have left. Version 1
// streams (start == min) are still read.
//
// Restore reads the header, calls store.ResetFrom(start, bytes), verifies length and
// CRC, installs the metadata and writes a checkpoint at the snapshot's index.
//
// # Concurrency
//
// raft calls Apply, ApplyBatch, Snapshot and Restore from one goroutine. Checkpoint,
// FSMSnapshot.Persist, AppliedIndex, CommitLogOffset and the Metadata accessors are
// safe from any goroutine; Checkpoint blocks Apply only while it captures the state,
// not while it flushes or writes. Apply reuses scratch buffers, so the hot path
// allocates the results (one OffsetMsgID string per message) and nothing per record.
//
// # Usage
//
//	st, _ := store.Open(storeCfg)
//	f, err := fsm.New(fsm.Config{Store: st, Dir: storeCfg.Dir, Logger: log, SegmentSize: storeCfg.CommitLogSegmentSize})
//	rc := raft.DefaultConfig(); rc.NoSnapshotRestoreOnStart = true
//	r, _ := raft.NewRaft(rc, f, logs, stable, snaps, trans)
//	// every second and at shutdown: f.Checkpoint()
//	data, _ := fsm.AppendPutMessages(buf[:0], nowMillis, storeHost, records)
//	res := r.Apply(data, timeout).Response().(*fsm.PutResult)
package fsm
