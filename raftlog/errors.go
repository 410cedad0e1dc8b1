package raftlog

import "errors"

var (
	// ErrUnknownLogStoreKind is returned for a LogStoreKind other than LogStoreWAL or
	// LogStoreBoltDB.
	ErrUnknownLogStoreKind = errors.New("raftlog: unknown log store kind")

	// ErrKeyNotFound is what the StableStore's Get returns for a key that was never
	// set.
	//
	// Its text must stay exactly "not found" and it must be returned unwrapped:
	// hashicorp/raft v1.7.3 tells "missing" from "broken" by comparing
	// err.Error() == "not found" (NewRaft and HasExistingState in api.go,
	// requestVote in raft.go). Any other text makes NewRaft fail on a fresh store
	// and, worse, makes a node silently refuse every vote request.
	ErrKeyNotFound = errors.New("not found")

	// ErrCorruptStableValue is returned by GetUint64 when the stored value is not
	// 8 bytes (raft-boltdb itself would panic in binary.BigEndian.Uint64).
	ErrCorruptStableValue = errors.New("raftlog: stable value is not a uint64")

	// ErrDirLocked is returned by OpenStores when another process (or another
	// OpenStores in this process) holds the directory. Two raft nodes sharing one
	// log would each believe they own it; failing fast beats bbolt's silent wait
	// on its file lock.
	ErrDirLocked = errors.New("raftlog: directory is in use")

	// ErrLogStoreMismatch is returned by OpenStores when the directory holds raft
	// state written with another LogStoreKind: nothing converts a log from one kind
	// to another, and opening an empty log of the new kind next to the node's
	// applied state would make it forget entries it acknowledged.
	ErrLogStoreMismatch = errors.New("raftlog: raft state was written with another log store kind")

	// ErrInjectedFault is the default error a FaultyLogStore returns from
	// StoreLogs while failing.
	ErrInjectedFault = errors.New("raftlog: injected log store fault")
)
