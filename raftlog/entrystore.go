package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/store"
)

// LogStoreCommitLog is the LogStore kind of decision 0016 (the single write): raft's
// log kept by store.EntryLog in CommitLog form. A broker opens it on its Store's
// CommitLog (OpenStoresOnEntryLog), so every message is written once; OpenStores
// opens it in a directory of its own (tests, benchmarks).
const LogStoreCommitLog LogStoreKind = "commitlog"

const (
	// EntryLogDirName holds the segments of a commitlog kind OpenStores opened.
	EntryLogDirName = "entrylog"
	// entryLogSegmentSize is the segment size of a commitlog kind OpenStores opened;
	// on a Store's CommitLog it is the CommitLog's.
	entryLogSegmentSize = 64 << 20
)

// entryLogStore is raft's LogStore over store.EntryLog. A raft entry is one entry
// record whose data carries the raft.Log's metadata and its data; when an
// EntrySplitter is set and splits the data, the message records it carries are stored
// as CommitLog records after the entry record, and the entry record keeps the rest.
// StoreLogs returns once the batch is synced, like the other kinds.
type entryLogStore struct {
	log      *store.EntryLog
	maxRec   int // the largest record a segment takes
	splitter atomic.Pointer[EntrySplitter]
	// ls defers the leader's fsync (decision 0015), as for raft-wal.
	ls   *leaderSync
	sync *entrySyncer
	// dir holds BootstrapEntryFileName.
	dir string
}

// BootstrapEntryFileName holds the data of raft entry 1 (in the raft directory).
//
// Every node appends entry 1, the bootstrap configuration, itself, and a node's
// configuration names the others as it dials them: the data of entry 1 may differ
// from node to node, in content and in length. Written into the CommitLog, it would
// shift every later record to a different physical offset on each node, and an
// offsetMsgId would name different messages on different replicas. So entry 1's
// entry record carries no data (form entryDataBootstrap), the same bytes everywhere,
// and the data lives here. Every later entry comes from a leader, the same on all.
const BootstrapEntryFileName = "bootstrap-entry"

// entrySyncer is the entry log as a deferred fsync round sees it.
type entrySyncer struct{ log *store.EntryLog }

func (e *entrySyncer) syncNow() error { return e.log.Sync() }

// EntrySplitter tells the commitlog kind which raft commands carry message records
// (decision 0016, step 3): raftlog cannot import fsm, so the broker passes fsm's
// SplitRecords and JoinRecords. Join(dst, Split(data)) must append data itself.
type EntrySplitter struct {
	// Split returns the command without its records, the records (stored CommitLog
	// records) and the store timestamp, or ok false to store data whole.
	Split func(data []byte) (head []byte, records [][]byte, storeTimestamp int64, ok bool)
	// Join appends the command Split split to dst.
	Join func(dst, head []byte, records [][]byte) []byte
}

// SetEntrySplitter installs sp on the commitlog kind (nothing on other kinds). Call it
// before raft stores an entry; entries stored before keep their whole form, and are
// read back either way.
func (s *Stores) SetEntrySplitter(sp EntrySplitter) {
	if s.entries != nil {
		s.entries.splitter.Store(&sp)
	}
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
	return newEntryLogStore(l, dir), nil
}

// newEntryLogStore wraps l, whose open synced it: the whole log counts as durable.
// dir is the raft directory (BootstrapEntryFileName).
func newEntryLogStore(l *store.EntryLog, dir string) *entryLogStore {
	s := &entryLogStore{log: l, maxRec: int(l.SegmentSize() - store.MinBlankRecord), ls: newLeaderSync(), sync: &entrySyncer{l}, dir: dir}
	s.ls.reset(l.LastIndex())
	// A snapshot install empties the log (store.ResetFromEntries): durable must
	// not stay above what the log now holds.
	l.OnReset(func(next uint64) { s.ls.truncated(next) })
	return s
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
	sp := s.splitter.Load()
	var join func(dst, head []byte, records [][]byte) []byte
	if sp != nil {
		join = sp.Join
	}
	if len(e.Data) == 1 && e.Data[0] == entryDataBootstrap {
		b, err := os.ReadFile(filepath.Join(s.dir, BootstrapEntryFileName))
		if err != nil {
			return fmt.Errorf("raftlog: entry %d: %w", index, err)
		}
		e.Data = b
	}
	return decodeEntryData(e, out, join)
}

func (s *entryLogStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs appends the batch and syncs it before returning: raft counts this
// replica toward the quorum once it returns.
func (s *entryLogStore) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	sp := s.splitter.Load()
	es := make([]store.LogEntry, len(logs))
	for i, l := range logs {
		e := &es[i]
		// AppendedAt is not kept (nor used as the store timestamp): every node
		// appends the bootstrap configuration itself, at its own time, and a
		// replica's bytes must be a function of the committed log alone. raft
		// reads it only for its log-age metric.
		*e = store.LogEntry{Index: l.Index, Term: l.Term, Type: uint8(l.Type)}
		if l.Index == 1 {
			if err := store.WriteFileAtomic(s.dir, BootstrapEntryFileName, appendEntryData(nil, l, entryDataWhole, l.Data)); err != nil {
				return fmt.Errorf("raftlog: store entry 1: %w", err)
			}
			e.Data = []byte{entryDataBootstrap}
			continue
		}
		if l.Type == raft.LogCommand && sp != nil {
			if head, recs, ts, ok := sp.Split(l.Data); ok && s.fits(recs) {
				e.Data, e.Records, e.StoreTimestamp = appendEntryData(nil, l, entryDataSplit, head), recs, ts
				continue
			}
		}
		e.Data = appendEntryData(nil, l, entryDataWhole, l.Data)
	}
	if err := s.ls.failed(); err != nil {
		return err
	}
	if err := s.log.Append(es); err != nil {
		return err
	}
	last := logs[len(logs)-1].Index
	if s.ls.mayDefer() {
		// The leader: the syncer fsyncs while the followers receive the batch
		// (leadersync.go); Apply waits for it.
		s.ls.markDirty(s.sync)
		s.ls.written(last)
		return nil
	}
	if err := s.log.Sync(); err != nil {
		return err
	}
	s.ls.synced(last)
	return nil
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
		// A suffix: whatever a deferred round still owes is synced first, and
		// durable goes below the cut.
		if err := s.ls.syncRound(false); err != nil {
			return err
		}
		s.ls.truncated(lo)
		return s.log.TruncateFrom(lo)
	default:
		return fmt.Errorf("raftlog: DeleteRange(%d, %d) inside [%d, %d]: only a prefix or a suffix can be removed", lo, hi, first, last)
	}
}

// fits reports whether every record fits in a segment (a larger one is refused by
// the FSM as illegal; its entry is stored whole).
func (s *entryLogStore) fits(recs [][]byte) bool {
	for _, r := range recs {
		if len(r) > s.maxRec {
			return false
		}
	}
	return true
}

func (s *entryLogStore) Close() error {
	err := s.ls.syncRound(false)
	s.ls.close()
	s.log.Close()
	return err
}

// Entry data layout: form u8 | extensions length u32 | extensions | AppendedAt in
// Unix nanoseconds i64 (MinInt64 = the zero time, which is all StoreLogs writes) | payload. Form 1 (whole): the
// payload is the raft data. Form 2 (split): the payload is the head EntrySplitter.Split
// returned, and the entry's records are the rest of the data.
const (
	entryDataWhole = 1
	entryDataSplit = 2
	// entryDataBootstrap is entry 1's whole data: one byte, the form; the data
	// itself is in BootstrapEntryFileName.
	entryDataBootstrap = 3
)

func appendEntryData(dst []byte, l *raft.Log, form byte, payload []byte) []byte {
	dst = append(dst, form)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(l.Extensions)))
	dst = append(dst, l.Extensions...)
	// Always the zero time: see StoreLogs. The field stays so the format can carry
	// it again (decodeEntryData reads it).
	zero := int64(math.MinInt64)
	dst = binary.BigEndian.AppendUint64(dst, uint64(zero))
	return append(dst, payload...)
}

// keepsAppendedAt: GetLog returns the zero time (see StoreLogs).
func (s *entryLogStore) keepsAppendedAt() bool { return false }

// decodeEntryData rebuilds the raft.Log of e; join puts a split entry back together.
func decodeEntryData(e store.LogEntry, out *raft.Log, join func(dst, head []byte, records [][]byte) []byte) error {
	b := e.Data
	if len(b) < 1+4+8 || (b[0] != entryDataWhole && b[0] != entryDataSplit) {
		return fmt.Errorf("raftlog: entry %d: data of %d bytes is not a raft entry", e.Index, len(b))
	}
	if b[0] == entryDataSplit && join == nil {
		return fmt.Errorf("raftlog: entry %d holds message records, and no EntrySplitter is set to join them", e.Index)
	}
	if b[0] == entryDataWhole && len(e.Records) > 0 {
		return fmt.Errorf("raftlog: entry %d is stored whole but has %d records", e.Index, len(e.Records))
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
	switch {
	case b[0] == entryDataSplit:
		out.Data = join(nil, rest[8:], e.Records)
	case len(rest) > 8:
		out.Data = rest[8:]
	}
	return nil
}
