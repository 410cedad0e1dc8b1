package raftlog

import "errors"

var (
	// ErrSnapshotNotFound is returned by SnapshotStore.Open for an id it does not hold.
	ErrSnapshotNotFound = errors.New("raftlog: snapshot not found")

	// ErrSnapshotCorrupt is returned when a stored snapshot's files do not match its
	// metadata (size or CRC-32C), on Open or at the end of a stream.
	ErrSnapshotCorrupt = errors.New("raftlog: snapshot corrupt")

	// ErrSnapshotRangeGone is returned by SnapshotStore.Open when the live CommitLog no
	// longer holds the end of the range a snapshot references (the store was reset or
	// cut below it); raft then takes a new snapshot.
	ErrSnapshotRangeGone = errors.New("raftlog: snapshot's CommitLog range is gone")

	// ErrSnapshotSinkMisuse is returned by a sink written after WriteCommitLogRange, or
	// used after Close or Cancel.
	ErrSnapshotSinkMisuse = errors.New("raftlog: snapshot sink misuse")

	// ErrSnapshotConfig is returned by NewSnapshotStore for an unusable configuration.
	ErrSnapshotConfig = errors.New("raftlog: snapshot store configuration")
)
