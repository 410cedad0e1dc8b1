package raftlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/store"
)

// CommitLog is what the SnapshotStore needs of the message store: read-only
// streaming and the retention guard. *store.Store satisfies it.
type CommitLog interface {
	ReadRange(from, to store.PhysicalOffset, fn func(chunk []byte) error) error
	MinPhysicalOffset() store.PhysicalOffset
	MaxPhysicalOffset() store.PhysicalOffset
	SetRetentionGuard(guard func(segmentStart store.PhysicalOffset) bool)
}

var _ CommitLog = (*store.Store)(nil)

// Layout of a snapshot directory (see doc.go).
const (
	snapshotMetaFile = "meta.json"
	snapshotDataFile = "data"
	snapshotTmpExt   = ".tmp"
)

// snapshotKind tells how a snapshot's data file relates to the stream Open produces.
type snapshotKind string

const (
	// kindRange: data is the stream prefix; the rest is the live CommitLog range
	// [From, To), its length before it and a CRC-32C after it (fsm.RangeSink).
	kindRange snapshotKind = "range"
	// kindStream: data is the whole stream as received (InstallSnapshot).
	kindStream snapshotKind = "stream"
	// kindLegacy: a snapshot raft's FileSnapshotStore wrote before this store
	// replaced it (meta.json is its SnapshotMeta, the stream is state.bin). Read so
	// that an upgraded node keeps its newest snapshot; fsm's CRC checks the content.
	kindLegacy snapshotKind = "legacy"
)

// FileSnapshotStore's layout: <dir>/snapshots/<id>/{meta.json,state.bin}.
const (
	legacySubdir   = "snapshots"
	legacyDataFile = "state.bin"
)

// snapshotRecord is meta.json: raft's metadata plus how to produce the stream.
type snapshotRecord struct {
	Meta raft.SnapshotMeta `json:"meta"`
	Kind snapshotKind      `json:"kind"`
	// From and To are the referenced CommitLog range (kindRange only).
	From store.PhysicalOffset `json:"from,omitempty"`
	To   store.PhysicalOffset `json:"to,omitempty"`
	// DataSize and DataCRC describe the data file (CRC-32C).
	DataSize int64  `json:"dataSize"`
	DataCRC  uint32 `json:"dataCRC"`
}

// rangeTrailer is the length field before and the CRC after the CommitLog bytes.
const rangeTrailer = 8 + 4

// SnapshotConfig configures a SnapshotStore.
type SnapshotConfig struct {
	// Dir holds one directory per snapshot.
	Dir string
	// Retain is how many snapshots are kept (≥ 1).
	Retain int
	// CommitLog is the live store the snapshots reference. The SnapshotStore installs
	// its retention guard (and so must be the only one to).
	CommitLog CommitLog
	// SegmentSize is the CommitLog segment size; 0 means store.DefaultCommitLogSegmentSize.
	SegmentSize int64
	Logger      hclog.Logger
}

// SnapshotStore is a raft.SnapshotStore whose local snapshots reference the
// CommitLog instead of copying it; see doc.go § Snapshots.
//
// Concurrency: safe for concurrent use. mu guards the pins (retained range snapshots
// and open streams); keepFrom, derived from them, is read lock-free by the retention
// guard, which the store calls under its own lock.
type SnapshotStore struct {
	dir     string
	retain  int
	cl      CommitLog
	segSize int64
	log     hclog.Logger

	mu sync.Mutex
	// ranges are the range snapshots on disk (and those being written), by id.
	ranges map[string]rangePin
	// streams are the open range streams, by token; value is the streamed start.
	streams  map[*rangeStream]store.PhysicalOffset
	keepFrom atomic.Int64
	// createMu serialises id allocation and reaping.
	createMu sync.Mutex
}

type rangePin struct{ from, to store.PhysicalOffset }

var _ raft.SnapshotStore = (*SnapshotStore)(nil)

// NewSnapshotStore opens (creating) the snapshot directory, deletes the leftovers of
// snapshots a crash interrupted, and installs the CommitLog retention guard.
func NewSnapshotStore(cfg SnapshotConfig) (*SnapshotStore, error) {
	switch {
	case cfg.Dir == "":
		return nil, fmt.Errorf("%w: Dir is required", ErrSnapshotConfig)
	case cfg.Retain < 1:
		return nil, fmt.Errorf("%w: Retain %d, want at least 1", ErrSnapshotConfig, cfg.Retain)
	case cfg.CommitLog == nil:
		return nil, fmt.Errorf("%w: CommitLog is required", ErrSnapshotConfig)
	case cfg.SegmentSize < 0:
		return nil, fmt.Errorf("%w: SegmentSize %d", ErrSnapshotConfig, cfg.SegmentSize)
	}
	if cfg.SegmentSize == 0 {
		cfg.SegmentSize = store.DefaultCommitLogSegmentSize
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	s := &SnapshotStore{
		dir: cfg.Dir, retain: cfg.Retain, cl: cfg.CommitLog, segSize: cfg.SegmentSize,
		log:     cfg.Logger.Named("snapshots"),
		ranges:  map[string]rangePin{},
		streams: map[*rangeStream]store.PhysicalOffset{},
	}
	if err := os.MkdirAll(s.dir, 0o750); err != nil {
		return nil, fmt.Errorf("create snapshot dir %s: %w", s.dir, err)
	}
	if err := s.migrateLegacy(); err != nil {
		return nil, err
	}
	if err := s.removeLeftovers(); err != nil {
		return nil, err
	}
	recs, err := s.records()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	for _, r := range recs {
		if r.Kind == kindRange {
			s.ranges[r.Meta.ID] = rangePin{r.From, r.To}
		}
	}
	s.recomputeLocked()
	s.mu.Unlock()
	s.cl.SetRetentionGuard(s.referenced)
	return s, nil
}

// Close removes the retention guard. Streams still open keep working but are no
// longer protected from retention.
func (s *SnapshotStore) Close() error {
	s.cl.SetRetentionGuard(nil)
	return nil
}

// migrateLegacy moves the snapshots raft's FileSnapshotStore kept under
// <dir>/snapshots/ up into <dir>, where they are read as kindLegacy, and removes that
// directory. Each move is one atomic rename, so a crash midway leaves every snapshot
// in one place or the other, and the next open finishes the job.
func (s *SnapshotStore) migrateLegacy() error {
	old := filepath.Join(s.dir, legacySubdir)
	ents, err := os.ReadDir(old)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read legacy snapshot dir: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() || strings.HasSuffix(e.Name(), snapshotTmpExt) {
			continue
		}
		dst := filepath.Join(s.dir, e.Name())
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		if err := os.Rename(filepath.Join(old, e.Name()), dst); err != nil {
			return fmt.Errorf("move legacy snapshot %s: %w", e.Name(), err)
		}
		s.log.Info("adopted FileSnapshotStore snapshot", "id", e.Name())
	}
	if err := syncDir(s.dir); err != nil {
		return err
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("remove legacy snapshot dir: %w", err)
	}
	return nil
}

// removeLeftovers deletes the temporary directories of snapshots that were being
// written when the process stopped: raft never saw them complete.
func (s *SnapshotStore) removeLeftovers() error {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("read snapshot dir %s: %w", s.dir, err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), snapshotTmpExt) {
			continue
		}
		s.log.Warn("removing unfinished snapshot", "name", e.Name())
		if err := os.RemoveAll(filepath.Join(s.dir, e.Name())); err != nil {
			return fmt.Errorf("remove unfinished snapshot %s: %w", e.Name(), err)
		}
	}
	return nil
}

// referenced is the store's retention guard: the segment at start is kept (and so
// is every later one) when a retained range snapshot ends in it or later, or an open
// stream reads it.
func (s *SnapshotStore) referenced(start store.PhysicalOffset) bool {
	return int64(start) >= s.keepFrom.Load()
}

// recomputeLocked derives keepFrom from the pins. A retained snapshot pins only the
// segment holding its last byte (a segment starting at ≥ to-segSize); its head may go,
// Open then streams from the store's minimum (doc.go § Snapshots says why). An open
// stream pins everything from the start it streams.
func (s *SnapshotStore) recomputeLocked() {
	keep := int64(math.MaxInt64)
	for _, p := range s.ranges {
		if p.to > p.from {
			keep = min(keep, int64(p.to)-s.segSize)
		}
	}
	for _, start := range s.streams {
		keep = min(keep, int64(start))
	}
	s.keepFrom.Store(keep)
}

// Create implements raft.SnapshotStore: the sink writes into a temporary directory
// that Close renames into place.
func (s *SnapshotStore) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, _ raft.Transport) (raft.SnapshotSink, error) {
	if version < raft.SnapshotVersionMin || version > raft.SnapshotVersionMax {
		return nil, fmt.Errorf("%w: snapshot version %d unsupported", ErrSnapshotConfig, version)
	}
	s.createMu.Lock()
	defer s.createMu.Unlock()
	id := s.newID(term, index)
	tmp := filepath.Join(s.dir, id+snapshotTmpExt)
	if err := os.MkdirAll(tmp, 0o750); err != nil {
		return nil, fmt.Errorf("create snapshot %s: %w", id, err)
	}
	f, err := os.OpenFile(filepath.Join(tmp, snapshotDataFile), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("create snapshot %s: %w", id, err)
	}
	meta := raft.SnapshotMeta{
		Version: version, ID: id, Index: index, Term: term,
		Peers:         encodePeersCompat(configuration, version),
		Configuration: configuration, ConfigurationIndex: configurationIndex,
	}
	s.log.Info("creating snapshot", "id", id, "index", index, "term", term)
	return newSnapshotSink(s, meta, tmp, f), nil
}

// encodePeersCompat fills the deprecated Peers field the way raft's own stores do,
// for readers of version-0 metadata.
func encodePeersCompat(c raft.Configuration, v raft.SnapshotVersion) []byte {
	if v > 0 {
		return nil
	}
	var addrs []raft.ServerAddress
	for _, srv := range c.Servers {
		addrs = append(addrs, srv.Address)
	}
	b, _ := json.Marshal(addrs) // []string cannot fail
	return b
}

// newID names a snapshot term-index-millis like raft's FileSnapshotStore, with a
// suffix when that name is taken (two snapshots of one index in one millisecond).
func (s *SnapshotStore) newID(term, index uint64) string {
	base := fmt.Sprintf("%d-%d-%d", term, index, time.Now().UnixMilli())
	id := base
	for i := 1; ; i++ {
		_, err1 := os.Stat(filepath.Join(s.dir, id))
		_, err2 := os.Stat(filepath.Join(s.dir, id+snapshotTmpExt))
		if errors.Is(err1, os.ErrNotExist) && errors.Is(err2, os.ErrNotExist) {
			return id
		}
		id = fmt.Sprintf("%s.%d", base, i)
	}
}

// List implements raft.SnapshotStore: the completed snapshots, newest first (by term,
// index, id). Size is what Open would stream now.
func (s *SnapshotStore) List() ([]*raft.SnapshotMeta, error) {
	recs, err := s.records()
	if err != nil {
		return nil, err
	}
	out := make([]*raft.SnapshotMeta, 0, len(recs))
	for _, r := range recs {
		m := r.Meta
		m.Size = s.streamSize(r, s.startFor(r))
		out = append(out, &m)
	}
	return out, nil
}

// records reads every completed snapshot's metadata, newest first. A directory
// without readable metadata is skipped with a warning (like FileSnapshotStore).
func (s *SnapshotStore) records() ([]snapshotRecord, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("read snapshot dir %s: %w", s.dir, err)
	}
	var recs []snapshotRecord
	for _, e := range ents {
		if !e.IsDir() || strings.HasSuffix(e.Name(), snapshotTmpExt) {
			continue
		}
		r, err := s.readRecord(e.Name())
		if err != nil {
			s.log.Warn("skipping unreadable snapshot", "name", e.Name(), "error", err)
			continue
		}
		if r.Meta.Version < raft.SnapshotVersionMin || r.Meta.Version > raft.SnapshotVersionMax {
			s.log.Warn("skipping snapshot of unsupported version", "name", e.Name(), "version", r.Meta.Version)
			continue
		}
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool {
		a, b := recs[i].Meta, recs[j].Meta
		if a.Term != b.Term {
			return a.Term > b.Term
		}
		if a.Index != b.Index {
			return a.Index > b.Index
		}
		return a.ID > b.ID
	})
	return recs, nil
}

func (s *SnapshotStore) readRecord(id string) (snapshotRecord, error) {
	var r snapshotRecord
	b, err := os.ReadFile(filepath.Join(s.dir, id, snapshotMetaFile))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%w: %s: %w", ErrSnapshotCorrupt, snapshotMetaFile, err)
	}
	if r.Kind == "" {
		return readLegacyRecord(filepath.Join(s.dir, id), id, b)
	}
	if r.Meta.ID != id {
		return r, fmt.Errorf("%w: %s names snapshot %q", ErrSnapshotCorrupt, snapshotMetaFile, r.Meta.ID)
	}
	switch r.Kind {
	case kindStream:
	case kindRange:
		if r.From < 0 || r.To < r.From {
			return r, fmt.Errorf("%w: range [%d, %d)", ErrSnapshotCorrupt, r.From, r.To)
		}
	default:
		return r, fmt.Errorf("%w: kind %q", ErrSnapshotCorrupt, r.Kind)
	}
	return r, nil
}

// readLegacyRecord reads FileSnapshotStore's meta.json (raft.SnapshotMeta at the
// top level) and checks that its state.bin has the recorded size.
func readLegacyRecord(dir, id string, b []byte) (snapshotRecord, error) {
	r := snapshotRecord{Kind: kindLegacy}
	if err := json.Unmarshal(b, &r.Meta); err != nil || r.Meta.ID != id {
		return r, fmt.Errorf("%w: %s names snapshot %q (%v)", ErrSnapshotCorrupt, snapshotMetaFile, r.Meta.ID, err)
	}
	fi, err := os.Stat(filepath.Join(dir, legacyDataFile))
	if err != nil {
		return r, err
	}
	if fi.Size() != r.Meta.Size {
		return r, fmt.Errorf("%w: %s has %d bytes, recorded %d", ErrSnapshotCorrupt, legacyDataFile, fi.Size(), r.Meta.Size)
	}
	r.DataSize = fi.Size()
	return r, nil
}

// startFor is where a range snapshot's stream starts now: the captured min, or the
// store's minimum when retention has moved past it. An empty range starts at its end.
func (s *SnapshotStore) startFor(r snapshotRecord) store.PhysicalOffset {
	if r.To == r.From {
		return r.From
	}
	return min(max(r.From, s.cl.MinPhysicalOffset()), r.To)
}

// streamSize is the length of the stream Open produces from start.
func (s *SnapshotStore) streamSize(r snapshotRecord, start store.PhysicalOffset) int64 {
	if r.Kind != kindRange {
		return r.DataSize
	}
	return r.DataSize + rangeTrailer + int64(r.To-start)
}

// Open implements raft.SnapshotStore. A received snapshot streams its file; a range
// snapshot streams its prefix, then the CommitLog range from the live segments, with
// the range pinned against retention until the reader is closed.
func (s *SnapshotStore) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	if strings.ContainsAny(id, `/\`) || strings.HasSuffix(id, snapshotTmpExt) || id == "" || id == "." || id == ".." {
		return nil, nil, fmt.Errorf("open snapshot %q: %w", id, ErrSnapshotNotFound)
	}
	r, err := s.readRecord(id)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("open snapshot %s: %w", id, ErrSnapshotNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open snapshot %s: %w", id, err)
	}
	if r.Kind != kindRange {
		name := snapshotDataFile
		if r.Kind == kindLegacy {
			name = legacyDataFile
		}
		rc, err := openStreamFile(filepath.Join(s.dir, id, name), r)
		if err != nil {
			return nil, nil, fmt.Errorf("open snapshot %s: %w", id, err)
		}
		m := r.Meta
		m.Size = r.DataSize
		return &m, rc, nil
	}
	rc, start, err := s.openRange(r)
	if err != nil {
		return nil, nil, fmt.Errorf("open snapshot %s: %w", id, err)
	}
	m := r.Meta
	m.Size = s.streamSize(r, start)
	s.log.Debug("streaming snapshot from the CommitLog", "id", id, "from", start, "to", r.To, "size", m.Size)
	return &m, rc, nil
}

// reap deletes all but the newest retain snapshots.
func (s *SnapshotStore) reap() error {
	recs, err := s.records()
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range recs[min(s.retain, len(recs)):] {
		// The range pin goes first: a stream already open keeps its own pin, and a
		// received file stays readable through an open descriptor after the unlink.
		s.mu.Lock()
		delete(s.ranges, r.Meta.ID)
		s.recomputeLocked()
		s.mu.Unlock()
		s.log.Info("reaping snapshot", "id", r.Meta.ID)
		if err := os.RemoveAll(filepath.Join(s.dir, r.Meta.ID)); err != nil {
			errs = append(errs, fmt.Errorf("reap snapshot %s: %w", r.Meta.ID, err))
		}
	}
	return errors.Join(errs...)
}
