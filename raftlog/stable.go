package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// stableStore is raft's StableStore on raft-boltdb/v2 with the "not found"
// contract made explicit:
//
//   - Get of a missing key returns (nil, ErrKeyNotFound), whose text is exactly
//     "not found" (see ErrKeyNotFound for why the text matters);
//   - GetUint64 of a missing key returns (0, nil), as raft.StableStore documents
//     and raft.InmemStore does. raft-boltdb returns (0, "not found"), which raft
//     v1.7.3 happens to tolerate by string comparison; callers of ours need not.
//
// Every Set commits a bbolt transaction, which fsyncs (NoSync is false): the
// current term and the vote must be durable before raft answers a vote request,
// or a restarted node could vote twice in one term.
type stableStore struct {
	db *raftboltdb.BoltStore
}

var _ raft.StableStore = (*stableStore)(nil)

func (s *stableStore) Set(key, val []byte) error {
	if err := s.db.Set(key, val); err != nil {
		return fmt.Errorf("stable set key=%q: %w", key, err)
	}
	return nil
}

func (s *stableStore) Get(key []byte) ([]byte, error) {
	val, err := s.db.Get(key)
	if errors.Is(err, raftboltdb.ErrKeyNotFound) {
		// Unwrapped on purpose: raft compares the text.
		return nil, ErrKeyNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("stable get key=%q: %w", key, err)
	}
	return val, nil
}

func (s *stableStore) SetUint64(key []byte, val uint64) error {
	var buf [8]byte
	// Big endian, as raft-boltdb encodes it, so a store written by either reads
	// back through the other.
	binary.BigEndian.PutUint64(buf[:], val)
	return s.Set(key, buf[:])
}

func (s *stableStore) GetUint64(key []byte) (uint64, error) {
	val, err := s.Get(key)
	if errors.Is(err, ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(val) != 8 {
		return 0, fmt.Errorf("stable get key=%q len=%d: %w", key, len(val), ErrCorruptStableValue)
	}
	return binary.BigEndian.Uint64(val), nil
}
