package fsm

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/store"
)

// Snapshot stream layout (big-endian), self-describing so that a SnapshotStore can
// read the header and find the CommitLog range without this package:
//
//	+------------+---------+-----------+-------------+-----------+-------------+--------+
//	| "RRFSMSNP" | version | headerLen | header JSON | bytesLen  | CommitLog   | crc32c |
//	|    8 B     |  2 B    |   4 B     | SnapshotHdr |   8 B     | [start,off) |  4 B   |
//	+------------+---------+-----------+-------------+-----------+-------------+--------+
//
// start = header.CommitLogOffset - bytesLen. Version 1 required start ==
// header.CommitLogMin; version 2 allows any start ≥ CommitLogMin: a SnapshotStore that
// streams the range from the live CommitLog later (RangeSink) starts at the sender's
// minimum at that time, which retention may have moved past the captured one. The part
// before bytesLen (the prefix) is written by this package; a RangeSink produces the rest.
// The crc (Castagnoli) covers every byte before it.
var snapshotMagic = [8]byte{'R', 'R', 'F', 'S', 'M', 'S', 'N', 'P'}

const (
	snapshotVersion = 2
	// snapshotVersionExactMin is the first format: the same layout with start == min.
	// It is still read (a snapshot received before an upgrade restores fine).
	snapshotVersionExactMin = 1
	// maxSnapshotHeader bounds the header allocation when reading a corrupt stream; a
	// header is the metadata image (topics, groups, offsets), far below this.
	maxSnapshotHeader = 1 << 30
)

// RangeSink is implemented by a raft.SnapshotSink that takes the CommitLog part of a
// snapshot by reference instead of as bytes (raftlog's SnapshotStore): no copy of the
// CommitLog is made per snapshot. It is declared here, by its user, so that the store
// implementing it needs no import of this package.
//
// Persist writes the stream prefix (magic, version, header length, header JSON) with
// Write and then calls WriteCommitLogRange(min, off) once; nothing is written after
// it. Whoever opens the snapshot must then read, after the prefix, the 8-byte length n,
// the live CommitLog bytes [off-n, off) for a segment boundary off-n ≥ min (store.ReadRange),
// and the CRC-32C of every byte before it: exactly the stream Persist would have written
// itself, except that the start may have moved up with the sender's retention.
type RangeSink interface {
	WriteCommitLogRange(from, to store.PhysicalOffset) error
}

// SnapshotHeader describes a snapshot: the state at AppliedIndex is the CommitLog bytes
// [CommitLogMin, CommitLogOffset) plus Metadata.
type SnapshotHeader struct {
	AppliedIndex    uint64               `json:"appliedIndex"`
	AppliedTerm     uint64               `json:"appliedTerm"`
	CommitLogMin    store.PhysicalOffset `json:"commitLogMin"`
	CommitLogOffset store.PhysicalOffset `json:"commitLogOffset"`
	Metadata        json.RawMessage      `json:"metadata"`
	// Entries is set when the sender's CommitLog is its raft log (Config.EntryLog):
	// the records carry no queue offsets, so the queues' next offsets and the dead
	// records travel here. Both sides of a group use the same layout.
	Entries *store.EntrySnapshot `json:"entries,omitempty"`
}

// ReadSnapshotHeader reads the prefix of a snapshot stream up to and including
// bytesLen; r is then positioned at the first CommitLog byte. The returned
// CommitLogMin is where the streamed bytes start (CommitLogOffset - bytesLen), which in
// version 2 may be past the minimum captured by Snapshot.
func ReadSnapshotHeader(r io.Reader) (SnapshotHeader, error) {
	var hdr SnapshotHeader
	var pre [14]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return hdr, fmt.Errorf("%w: prefix: %w", ErrSnapshotFormat, err)
	}
	if [8]byte(pre[:8]) != snapshotMagic {
		return hdr, fmt.Errorf("%w: bad magic %q", ErrSnapshotFormat, pre[:8])
	}
	v := binary.BigEndian.Uint16(pre[8:])
	if v != snapshotVersion && v != snapshotVersionExactMin {
		return hdr, fmt.Errorf("%w: version %d, this node knows %d and %d", ErrSnapshotFormat, v, snapshotVersionExactMin, snapshotVersion)
	}
	hl := binary.BigEndian.Uint32(pre[10:])
	if hl > maxSnapshotHeader {
		return hdr, fmt.Errorf("%w: header of %d bytes", ErrSnapshotFormat, hl)
	}
	hb := make([]byte, hl)
	if _, err := io.ReadFull(r, hb); err != nil {
		return hdr, fmt.Errorf("%w: header: %w", ErrSnapshotFormat, err)
	}
	if err := json.Unmarshal(hb, &hdr); err != nil {
		return hdr, fmt.Errorf("%w: header: %w", ErrSnapshotFormat, err)
	}
	var bl [8]byte
	if _, err := io.ReadFull(r, bl[:]); err != nil {
		return hdr, fmt.Errorf("%w: bytes length: %w", ErrSnapshotFormat, err)
	}
	n := binary.BigEndian.Uint64(bl[:])
	if hdr.CommitLogMin < 0 || hdr.CommitLogOffset < hdr.CommitLogMin {
		return hdr, fmt.Errorf("%w: range [%d, %d)", ErrSnapshotFormat, hdr.CommitLogMin, hdr.CommitLogOffset)
	}
	span := uint64(hdr.CommitLogOffset - hdr.CommitLogMin)
	if n > span || (v == snapshotVersionExactMin && n != span) {
		return hdr, fmt.Errorf("%w: version %d range [%d, %d) with %d bytes", ErrSnapshotFormat, v, hdr.CommitLogMin, hdr.CommitLogOffset, n)
	}
	hdr.CommitLogMin = hdr.CommitLogOffset - store.PhysicalOffset(n)
	return hdr, nil
}

// fsmSnapshot is the state captured by Snapshot; Persist streams it.
type fsmSnapshot struct {
	f   *FSM
	hdr SnapshotHeader
}

// Snapshot implements raft.FSM. It only captures the state (index, CommitLog range,
// metadata image); the bytes are streamed by Persist.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.broken != nil {
		return nil, fmt.Errorf("snapshot: %w", f.broken)
	}
	meta, err := f.meta.marshal()
	if err != nil {
		return nil, fmt.Errorf("snapshot index=%d: %w", f.applied, err)
	}
	hdr := SnapshotHeader{
		AppliedIndex: f.applied, AppliedTerm: f.appliedTerm,
		CommitLogMin: f.st.MinPhysicalOffset(), CommitLogOffset: f.clOffset,
		Metadata: meta,
	}
	if f.es != nil {
		es, err := f.es.EntrySnapshotState()
		if err != nil {
			return nil, fmt.Errorf("snapshot index=%d: %w", f.applied, err)
		}
		hdr.Entries = &es
	}
	return &fsmSnapshot{f: f, hdr: hdr}, nil
}

// Persist implements raft.FSMSnapshot. It first writes an apply checkpoint at or past
// the snapshot's index (flushing the CommitLog first): once Persist returns, raft may
// compact its log up to that index and, with NoSnapshotRestoreOnStart, will never
// replay below it again, so the checkpoint must already cover it. Then it streams the
// header and the CommitLog range: by reference when the sink is a RangeSink (the
// bytes are then read when the snapshot is opened), otherwise as bytes read with
// store.ReadRange, whose segments must survive retention meanwhile; if they do not,
// ReadRange fails and the snapshot is cancelled.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.persist(sink); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *fsmSnapshot) persist(sink io.Writer) error {
	if err := s.f.Checkpoint(); err != nil {
		return fmt.Errorf("persist snapshot index=%d: %w", s.hdr.AppliedIndex, err)
	}
	if rs, ok := sink.(RangeSink); ok {
		return writeSnapshotRef(sink, rs, s.hdr)
	}
	return writeSnapshot(sink, s.hdr, s.f.st)
}

// snapshotPrefix encodes magic, version, header length and header JSON.
func snapshotPrefix(hdr SnapshotHeader) ([]byte, error) {
	hb, err := json.Marshal(hdr)
	if err != nil {
		return nil, fmt.Errorf("snapshot index=%d: header: %w", hdr.AppliedIndex, err)
	}
	if len(hb) > maxSnapshotHeader {
		return nil, fmt.Errorf("snapshot index=%d: header of %d bytes exceeds %d", hdr.AppliedIndex, len(hb), maxSnapshotHeader)
	}
	b := make([]byte, 14, 14+len(hb))
	copy(b, snapshotMagic[:])
	binary.BigEndian.PutUint16(b[8:], snapshotVersion)
	binary.BigEndian.PutUint32(b[10:], uint32(len(hb)))
	return append(b, hb...), nil
}

// writeSnapshotRef writes the prefix and hands the CommitLog range to the sink.
func writeSnapshotRef(w io.Writer, rs RangeSink, hdr SnapshotHeader) error {
	pre, err := snapshotPrefix(hdr)
	if err != nil {
		return err
	}
	if _, err := w.Write(pre); err != nil {
		return fmt.Errorf("snapshot index=%d: write header: %w", hdr.AppliedIndex, err)
	}
	if err := rs.WriteCommitLogRange(hdr.CommitLogMin, hdr.CommitLogOffset); err != nil {
		return fmt.Errorf("snapshot index=%d: reference CommitLog [%d, %d): %w", hdr.AppliedIndex, hdr.CommitLogMin, hdr.CommitLogOffset, err)
	}
	return nil
}

// writeSnapshot writes the whole snapshot stream for hdr, CommitLog bytes included.
func writeSnapshot(w io.Writer, hdr SnapshotHeader, st MessageStore) error {
	pre, err := snapshotPrefix(hdr)
	if err != nil {
		return err
	}
	cw := &crcWriter{w: bufio.NewWriterSize(w, 1<<20), h: crc32.New(castagnoli)}
	want := int64(hdr.CommitLogOffset - hdr.CommitLogMin)
	var bl [8]byte
	binary.BigEndian.PutUint64(bl[:], uint64(want))
	for _, b := range [][]byte{pre, bl[:]} {
		if _, err := cw.Write(b); err != nil {
			return fmt.Errorf("snapshot index=%d: write header: %w", hdr.AppliedIndex, err)
		}
	}
	var streamed int64
	if want > 0 {
		err = st.ReadRange(hdr.CommitLogMin, hdr.CommitLogOffset, func(chunk []byte) error {
			streamed += int64(len(chunk))
			_, err := cw.Write(chunk)
			return err
		})
		if err != nil {
			return fmt.Errorf("snapshot index=%d: stream CommitLog [%d, %d): %w", hdr.AppliedIndex, hdr.CommitLogMin, hdr.CommitLogOffset, err)
		}
	}
	if streamed != want {
		return fmt.Errorf("snapshot index=%d: streamed %d CommitLog bytes, range holds %d", hdr.AppliedIndex, streamed, want)
	}
	var crc [4]byte
	binary.BigEndian.PutUint32(crc[:], cw.h.Sum32())
	if _, err := cw.w.Write(crc[:]); err != nil {
		return fmt.Errorf("snapshot index=%d: write crc: %w", hdr.AppliedIndex, err)
	}
	if err := cw.w.Flush(); err != nil {
		return fmt.Errorf("snapshot index=%d: flush: %w", hdr.AppliedIndex, err)
	}
	return nil
}

// Release implements raft.FSMSnapshot; the capture holds no resources.
func (s *fsmSnapshot) Release() {}

type crcWriter struct {
	w *bufio.Writer
	h hash.Hash32
}

func (c *crcWriter) Write(p []byte) (int, error) {
	c.h.Write(p)
	return c.w.Write(p)
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Restore implements raft.FSM: it replaces the CommitLog with the snapshot's range
// (store.ResetFrom), installs its metadata and writes a checkpoint at its index.
//
// The old checkpoint is removed before the store is touched: a crash mid-restore then
// leaves no checkpoint (applied index 0), which the node sees as behind raft's newest
// snapshot and restores again, instead of a checkpoint describing bytes that are gone.
// A failure after the store was reset leaves the FSM broken: every later Apply stops
// the node, since no index describes the store any more.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	f.ckMu.Lock()
	defer f.ckMu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()

	br := bufio.NewReaderSize(rc, 1<<20)
	h := crc32.New(castagnoli)
	tee := io.TeeReader(br, h)
	hdr, err := ReadSnapshotHeader(tee)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	img, err := unmarshalImage(hdr.Metadata)
	if err != nil {
		return fmt.Errorf("restore index=%d: %w: %w", hdr.AppliedIndex, ErrSnapshotFormat, err)
	}
	if img.SegmentSize != 0 && f.cfg.SegmentSize != 0 && img.SegmentSize != f.cfg.SegmentSize {
		return fmt.Errorf("restore index=%d: %w: group pinned segment size %d, this node has %d", hdr.AppliedIndex, ErrConfig, img.SegmentSize, f.cfg.SegmentSize)
	}
	if (hdr.Entries != nil) != (f.es != nil) {
		return fmt.Errorf("restore index=%d: %w: sender's CommitLog is its raft log: %v, this node's: %v (a group must use one raftLogStore)",
			hdr.AppliedIndex, ErrSnapshotFormat, hdr.Entries != nil, f.es != nil)
	}
	if err := removeCheckpoint(f.cfg.Dir); err != nil {
		return fmt.Errorf("restore index=%d: %w", hdr.AppliedIndex, err)
	}
	f.ckIndex = 0
	want := int64(hdr.CommitLogOffset - hdr.CommitLogMin)
	body := &countingReader{r: io.LimitReader(tee, want)}
	fail := func(err error) error {
		f.broken = fmt.Errorf("restore index=%d: %w", hdr.AppliedIndex, err)
		f.log.Error("snapshot restore failed after the store was reset", "index", hdr.AppliedIndex, "error", err)
		return f.broken
	}
	if f.es != nil {
		err = f.es.ResetFromEntries(hdr.CommitLogMin, body, *hdr.Entries, hdr.AppliedIndex+1)
	} else {
		err = f.st.ResetFrom(hdr.CommitLogMin, body)
	}
	if err != nil {
		return fail(fmt.Errorf("reset store from %d: %w", hdr.CommitLogMin, err))
	}
	if _, err := io.Copy(io.Discard, body); err != nil { // ResetFrom may stop at EOF of its own accord
		return fail(fmt.Errorf("%w: read CommitLog bytes: %w", ErrSnapshotFormat, err))
	}
	if body.n != want {
		return fail(fmt.Errorf("%w: %d CommitLog bytes, header says %d", ErrSnapshotFormat, body.n, want))
	}
	sum := h.Sum32()
	var crc [4]byte
	if _, err := io.ReadFull(br, crc[:]); err != nil {
		return fail(fmt.Errorf("%w: crc: %w", ErrSnapshotFormat, err))
	}
	if got := binary.BigEndian.Uint32(crc[:]); got != sum {
		return fail(fmt.Errorf("%w: crc %08x, computed %08x", ErrSnapshotFormat, got, sum))
	}
	if got := f.st.MaxPhysicalOffset(); got != hdr.CommitLogOffset {
		return fail(fmt.Errorf("store ends at %d after reset, snapshot at %d", got, hdr.CommitLogOffset))
	}
	f.meta.install(img)
	f.applied, f.appliedTerm, f.clOffset = hdr.AppliedIndex, hdr.AppliedTerm, hdr.CommitLogOffset
	f.appliedIdx.Store(hdr.AppliedIndex)
	f.broken = nil
	err = f.writeCheckpointLocked(checkpointState{
		AppliedIndex: hdr.AppliedIndex, AppliedTerm: hdr.AppliedTerm,
		CommitLogOffset: hdr.CommitLogOffset, Metadata: hdr.Metadata,
	})
	if err != nil {
		return fmt.Errorf("restore index=%d: %w", hdr.AppliedIndex, err)
	}
	f.log.Info("restored snapshot", "index", hdr.AppliedIndex, "term", hdr.AppliedTerm,
		"commitLogMin", hdr.CommitLogMin, "commitLogOffset", hdr.CommitLogOffset)
	return nil
}
