package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/store"
)

// LogStoreCommitLog is the LogStore kind of decision 0016 (the single write), step 2:
// raft's log kept by store.EntryLog in CommitLog form. Code may pass it to OpenStores
// (tests, experiments), but ParseLogStoreKind does not accept it, so no configuration
// can select it before step 3 (the FSM applying from it without a copy) and the
// chaos suite's proof.
const LogStoreCommitLog LogStoreKind = "commitlog"

const (
	// EntryLogDirName holds the commitlog kind's segments.
	EntryLogDirName = "entrylog"
	// entryLogSegmentSize is the segment size of the commitlog kind. Step 3 uses the
	// broker's CommitLog segment size instead.
	entryLogSegmentSize = 64 << 20
)

// entryLogStore is raft's LogStore over store.EntryLog. Every raft entry is stored as
// one entry record whose data carries the whole raft.Log (entryData); splitting a
// message batch into CommitLog records is step 3's. StoreLogs returns once the batch
// is synced, like the other kinds.
type entryLogStore struct {
	log *store.EntryLog
}

var (
	_ raft.LogStore              = (*entryLogStore)(nil)
	_ raft.MonotonicLogStore     = (*entryLogStore)(nil)
	_ interface{ Close() error } = (*entryLogStore)(nil)
)

func openEntryLogStore(dir string, logger hclog.Logger) (*entryLogStore, error) {
	l, err := store.OpenEntryLog(filepath.Join(dir, EntryLogDirName), entryLogSegmentSize, logger.Named("entrylog"))
	if err != nil {
		return nil, fmt.Errorf("open entry log in %s: %w", dir, err)
	}
	return &entryLogStore{log: l}, nil
}

// IsMonotonic: the EntryLog refuses gaps, so raft must empty it before appending
// past one (after installing a snapshot), as it does for raft-wal.
func (s *entryLogStore) IsMonotonic() bool { return true }

func (s *entryLogStore) FirstIndex() (uint64, error) { return s.log.FirstIndex(), nil }

func (s *entryLogStore) LastIndex() (uint64, error) { return s.log.LastIndex(), nil }

// GetLog returns raft.ErrLogNotFound itself for an index the log does not hold:
// raft's replication compares with ==.
func (s *entryLogStore) GetLog(index uint64, out *raft.Log) error {
	e, err := s.log.Get(index)
	if errors.Is(err, store.ErrEntryNotFound) {
		return raft.ErrLogNotFound
	}
	if err != nil {
		return err
	}
	return decodeEntryData(e, out)
}

func (s *entryLogStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs appends the batch and syncs it before returning: raft counts this
// replica toward the quorum once it returns.
func (s *entryLogStore) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	es := make([]store.LogEntry, len(logs))
	for i, l := range logs {
		es[i] = store.LogEntry{Index: l.Index, Term: l.Term, Type: uint8(l.Type), Data: appendEntryData(nil, l)}
		if !l.AppendedAt.IsZero() {
			es[i].StoreTimestamp = l.AppendedAt.UnixMilli()
		}
	}
	if err := s.log.Append(es); err != nil {
		return err
	}
	return s.log.Sync()
}

// DeleteRange removes a prefix (raft's compaction after a snapshot, or everything
// before appending past a gap) or a suffix (a follower's conflicting tail). raft
// never removes a range from the middle; that is refused.
func (s *entryLogStore) DeleteRange(lo, hi uint64) error {
	first, last := s.log.FirstIndex(), s.log.LastIndex()
	switch {
	case last == 0 || hi < lo || hi < first || lo > last:
		return nil
	case lo <= first:
		return s.log.ForgetBefore(hi + 1)
	case hi >= last:
		return s.log.TruncateFrom(lo)
	default:
		return fmt.Errorf("raftlog: DeleteRange(%d, %d) inside [%d, %d]: only a prefix or a suffix can be removed", lo, hi, first, last)
	}
}

func (s *entryLogStore) Close() error {
	s.log.Close()
	return nil
}

// Entry data layout (version 1): version u8 | extensions length u32 | extensions |
// AppendedAt in Unix nanoseconds i64 (MinInt64 = the zero time) | raft data.
const entryDataVersion = 1

func appendEntryData(dst []byte, l *raft.Log) []byte {
	dst = append(dst, entryDataVersion)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(l.Extensions)))
	dst = append(dst, l.Extensions...)
	at := int64(math.MinInt64)
	if !l.AppendedAt.IsZero() {
		at = l.AppendedAt.UnixNano()
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(at))
	return append(dst, l.Data...)
}

func decodeEntryData(e store.LogEntry, out *raft.Log) error {
	b := e.Data
	if len(b) < 1+4+8 || b[0] != entryDataVersion {
		return fmt.Errorf("raftlog: entry %d: data of %d bytes is not a version %d raft entry", e.Index, len(b), entryDataVersion)
	}
	n := binary.BigEndian.Uint32(b[1:])
	if uint64(n) > uint64(len(b)-13) {
		return fmt.Errorf("raftlog: entry %d: extensions of %d bytes in %d bytes of data", e.Index, n, len(b))
	}
	ext, rest := b[5:5+n], b[5+n:]
	*out = raft.Log{Index: e.Index, Term: e.Term, Type: raft.LogType(e.Type)}
	if n > 0 {
		out.Extensions = ext
	}
	if at := int64(binary.BigEndian.Uint64(rest)); at != math.MinInt64 {
		out.AppendedAt = time.Unix(0, at).UTC()
	}
	if len(rest) > 8 {
		out.Data = rest[8:]
	}
	return nil
}
