// Package raftlog provides raft's storage: the LogStore (raft-wal or raft-boltdb/v2,
// fsynced per batch), the StableStore (raft-boltdb/v2) and the CommitLog-aware
// SnapshotStore that streams a CommitLog range instead of copying it.
//
// It may import store (read-only streaming, and store.EntryLog for the commitlog kind
// below) only; it never imports broker or fsm.
//
// # Usage
//
//	stores, err := raftlog.OpenStores(filepath.Join(root, "raft"), raftlog.LogStoreWAL, logger)
//	if err != nil { ... }
//	defer stores.Close()                   // after raft.Shutdown().Error()
//	snaps, err := raftlog.NewSnapshotStore(raftlog.SnapshotConfig{
//		Dir: filepath.Join(root, "snapshots"), Retain: 2, CommitLog: st,
//		SegmentSize: storeCfg.CommitLogSegmentSize, Logger: logger})
//	r, err := raft.NewRaft(conf, fsm, stores.Log, stores.Stable, snaps, trans)
//
// # Layout
//
// One directory per raft node:
//
//	<dir>/LOCK          flock held while open; a second OpenStores fails with ErrDirLocked
//	<dir>/stable.db     StableStore: raft's CurrentTerm, LastVoteTerm, LastVoteCand (bbolt)
//	<dir>/wal/          LogStore, kind "wal" (default): raft-wal segment files
//	                    (64 MiB each) and wal-meta.db (bbolt, the segment list)
//	<dir>/raft-log.db   LogStore, kind "boltdb": one bbolt file, key = big-endian index
//
// Only one of wal/ and raft-log.db exists; OpenStores refuses to open a directory
// with raft state (stable.db) under another kind than the one that wrote it.
//
// A third kind, commitlog (entrystore.go, decision 0016), keeps the log as
// store.EntryLog segments: CommitLog-format files, one entry record per raft entry,
// written with one pwrite per segment and fdatasync'd per StoreLogs (on the leader,
// by the deferred syncer, as for raft-wal). With an EntrySplitter (the broker
// installs fsm's), a message batch's records are stored as CommitLog records after
// the entry record, and GetLog joins them back. A broker opens it on its Store's
// CommitLog (OpenStoresOnEntryLog), so every message is written once; OpenStores
// opens it in <dir>/entrylog/ (tests, benchmarks). A directory whose raft state was
// written with another kind is refused (ErrLogStoreMismatch).
//
// # Durability: fsync before a replica counts
//
// A SEND_OK means "committed on a majority, each of which fsynced it" (design.md
// §2). hashicorp/raft counts a replica toward the quorum once its LogStore's
// StoreLogs returns, on the leader and in a follower's AppendEntries reply alike,
// so StoreLogs must not return before the batch is on stable storage. DLedger acks
// from page cache and flushes on a timer; lazy-fsync systems lose acknowledged
// writes on a coordinated power cut (lessons-from-dledger.md row 3). Here:
//
//   - raft-wal: every StoreLogs appends the batch and a commit frame, then calls
//     fsync on the segment file before returning (segment Writer.Append →
//     appendCommit → sync). There is no option to turn this off.
//   - Except on the leader, once the node installs Stores.DeferLeaderFsync
//     (leadersync.go, decision 0015): there StoreLogs writes and returns, and a
//     syncer fsyncs while the followers receive the batch. raft then counts
//     the leader's copy early, so the guarantee moves up: the FSM applies an
//     entry only once WaitDurable says it is durable here, and the leader tells
//     followers a commit index no higher than DurableIndex. An applied entry
//     is still one a quorum fsynced. Followers fsync before they answer, as
//     above.
//   - raft-boltdb/v2: every StoreLogs is one bbolt read-write transaction;
//     Commit fsyncs (fdatasync on Linux) because we open it with NoSync=false.
//   - The StableStore is bbolt with NoSync=false too: a term or vote is durable
//     before raft acts on it, so a restarted node cannot vote twice in a term.
//   - OpenStores fsyncs <dir> after creating the files, so their directory
//     entries survive a power cut as well.
//   - Segments that log compaction drops are deleted in the background
//     (latedelete.go), not under raft-wal's write lock: a crash before that
//     leaves orphans, which raft-wal's open removes.
//
// One fsync per batch, not per entry: raft hands StoreLogs everything queued since
// the last call, and the broker's group commit packs many messages per entry.
//
// # Why raft-wal is the default
//
// Measured with BenchmarkStoreLogs (16 KiB entries, fsync on, through the
// cache as OpenStores builds it): `go test -run '^$' -bench BenchmarkStoreLogs
// -benchmem -benchtime 2s -count 3 ./raftlog` on a 2-core AMD EPYC VM, ext4 on
// virtio, disk shared with other builds (load average ~8, so single runs varied
// up to 50×); best of 4 runs per cell, and bytes allocated per StoreLogs:
//
//	batch   wal entries/s   boltdb entries/s   wal B/op   boltdb B/op
//	    1           2,426             1,506       19 KB       178 KB
//	   16          14,067             4,758      305 KB       1.5 MB
//	   64          25,121             8,542      1.3 MB       5.8 MB
//
// raft-wal appends sequentially and writes each byte once; bbolt copies values into
// B+tree pages, rewrites the tree's spine and its freelist on every commit, and
// large values spill into overflow pages that grow and fragment the file, so its
// cost per batch rises with batch size and file size. raft-wal also reads recent
// entries without a transaction and truncates by dropping whole segments. boltdb
// stays selectable for operators who already run it (Consul/Nomad-style layouts).
//
// # Contracts hashicorp/raft relies on (pinned by tests)
//
//   - GetLog of an index not in the log returns raft.ErrLogNotFound itself: raft's
//     replication compares with == to decide to send a snapshot. Both backends
//     return it unwrapped, except that raft-wal v0.4.2 keeps serving entries
//     deleted from the front while they sit in the open tail segment; walStore
//     bounds-checks GetLog against FirstIndex to close that gap.
//   - A failed raft-wal segment rotation (ENOSPC creating the next segment)
//     leaves raft-wal refusing every append with ErrSealed until it is opened
//     again; walStore reopens it on that error and retries the append
//     (TestWALStoreRecoversFromFailedRotation).
//   - StableStore: GetUint64 of a missing key returns (0, nil); Get of a missing key
//     returns (nil, ErrKeyNotFound), whose text is exactly "not found" because raft
//     v1.7.3 compares err.Error() == "not found" (NewRaft, HasExistingState,
//     requestVote). A wrapped error there would fail NewRaft on a fresh directory
//     and make the node refuse every vote.
//   - raft-wal refuses gaps, so it reports IsMonotonic; every wrapper (the
//     logCache, FaultyLogStore) forwards that, or raft would append past a
//     gap after installing a snapshot and the follower would never catch up.
//
// # Snapshots
//
// SnapshotStore (snapshot*.go) is a raft.SnapshotStore that knows the CommitLog.
// The fsm stream is prefix (magic, version, header JSON), length n, the CommitLog
// bytes [off-n, off) and a CRC-32C; see fsm's doc § Snapshots.
//
//   - Local snapshot. fsm's Persist finds that the sink implements fsm.RangeSink,
//     writes only the prefix and calls WriteCommitLogRange(min, off). The snapshot on
//     disk is that prefix plus meta.json: a few hundred bytes, whatever the CommitLog
//     size (measured: 501 bytes for a 2.6 MB CommitLog, where FileSnapshotStore kept
//     2.6 MB per snapshot; TestRangeSnapshotAgainstFullCopy logs the figures).
//   - Open of a local snapshot synthesizes the stream: prefix, n, the bytes read
//     from the live segments with store.ReadRange straight into the reader's buffer
//     (pull-based: no goroutine, no copy), and the CRC computed while streaming.
//     Opened at the captured min, it is byte-identical to the stream FileSnapshotStore
//     held (pinned by a test). meta.Size is the exact length raft sends.
//   - Received snapshot (InstallSnapshot copies the leader's bytes into a Create
//     sink without calling WriteCommitLogRange): the bytes are staged as a file in
//     the snapshot's directory; Open returns it (checking size and CRC-32C at EOF),
//     fsm.Restore reads it and store.ResetFrom swaps it in as the CommitLog. It stays
//     a full file until reaped by newer local snapshots (Retain).
//
// # Snapshots and retention
//
// The SnapshotStore installs the store's retention guard (it must be the only one).
// A segment is kept, with everything after it, when
//
//   - an open stream reads it: from Open to Close of the reader, every segment from
//     the stream's start is kept, so a stream never loses bytes midway; and
//   - a retained snapshot ends in it or later: each snapshot pins only the segment
//     holding its last byte, so it can always be served, at worst as a one-segment image.
//
// A snapshot does not pin its head [min, …). Pinning it would stop retention for
// good: each new snapshot captures the store's minimum, which cannot move while the
// previous snapshot pins it. Instead Open starts at max(min, store's minimum now), a
// segment boundary, and the follower resets its CommitLog from there: it gets the
// sender's tail as the sender holds it now, which is what its own retention would
// have left (fsm format version 2 allows a start past min).
//
// One narrow race remains: a retention run that evaluated the guard just before Open
// pinned its start may still delete that start's segment; the stream then fails with
// store.ErrOffsetOutOfRange, raft cancels the transfer and retries with a new Open.
//
// Layout: <dir>/<id>/{meta.json,data}; a snapshot is written in <dir>/<id>.tmp/,
// fsynced, renamed into place and the directory fsynced, so a crash leaves either a
// complete snapshot or a .tmp directory, which List ignores and NewSnapshotStore
// deletes. List is newest first (term, index, id); Close reaps beyond Retain.
// Snapshots raft's FileSnapshotStore left in <dir>/snapshots/ (before this store
// replaced it) are moved up into <dir> on open and streamed as they are.
//
// # Caching
//
// Stores.Log is a cache of the newest entries over the backend (logcache.go), so
// replication to followers that are slightly behind reads memory: at most 512
// entries and 8 MiB of their data. raft.LogCache, which it replaced, bounded
// entries only, which pinned 512 × the largest entry group commit produces (up
// to 2 GiB of 4 MiB entries; ~35 MiB under the async benchmark).
//
// # Concurrency
//
// Stores.Log and Stores.Stable are safe for concurrent use; raft calls them from
// its main, replication and snapshot goroutines. SnapshotStore is safe for
// concurrent use (several replication goroutines may stream snapshots while one is
// created); its sinks and readers each belong to one goroutine. Stores.Close is
// idempotent and must run after raft has shut down. FaultyLogStore is safe for
// concurrent use.
//
// # Fault injection
//
// FaultyLogStore (faulty.go) is test machinery kept in the production package
// because chaos scenario D1 (reliability-plan.md: write/fsync error on the
// leader's raft log) wraps a real broker's Stores.Log with it. It does nothing
// until FailStores is called and nothing in production constructs it.
package raftlog
