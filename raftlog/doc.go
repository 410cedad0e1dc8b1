// Package raftlog provides raft's storage: the LogStore (raft-wal or raft-boltdb/v2,
// fsynced per batch), the StableStore (raft-boltdb/v2) and the CommitLog-aware
// SnapshotStore that streams a CommitLog range instead of copying it.
//
// It may import store (read-only streaming) only.
package raftlog
