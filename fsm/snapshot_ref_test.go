package fsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"testing"

	"github.com/rocketraft/rocketraft/store"
)

// refSink is a memSink that takes the CommitLog by reference, as raftlog's
// SnapshotStore does.
type refSink struct {
	memSink
	from, to store.PhysicalOffset
	ranged   int
}

func (s *refSink) WriteCommitLogRange(from, to store.PhysicalOffset) error {
	s.from, s.to = from, to
	s.ranged++
	return nil
}

// synthesize builds what a RangeSink's reader must produce: prefix, length, the
// CommitLog bytes [start, to) and the CRC.
func synthesize(t *testing.T, prefix []byte, st MessageStore, start, to store.PhysicalOffset) []byte {
	t.Helper()
	out := bytes.Clone(prefix)
	out = binary.BigEndian.AppendUint64(out, uint64(to-start))
	if err := st.ReadRange(start, to, func(c []byte) error { out = append(out, c...); return nil }); err != nil {
		t.Fatal(err)
	}
	return binary.BigEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

func TestPersistIntoRangeSinkWritesOnlyThePrefix(t *testing.T) {
	src := newFakeStore()
	f := newFSM(t, src, t.TempDir())
	applyAll(f, workload(t, 30), 4)
	full := snapshotBytes(t, f)

	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink refSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	if !sink.closed || sink.cancelled || sink.ranged != 1 {
		t.Fatalf("sink closed=%v cancelled=%v ranges=%d", sink.closed, sink.cancelled, sink.ranged)
	}
	if sink.from != src.MinPhysicalOffset() || sink.to != src.MaxPhysicalOffset() {
		t.Fatalf("range [%d, %d), store [%d, %d)", sink.from, sink.to, src.MinPhysicalOffset(), src.MaxPhysicalOffset())
	}
	if sink.Len() >= len(full)-int(sink.to-sink.from) || sink.Len() == 0 {
		t.Fatalf("prefix of %d bytes for a %d-byte snapshot of %d CommitLog bytes", sink.Len(), len(full), sink.to-sink.from)
	}
	// Opened at the captured minimum, the reference is the full stream, byte for byte.
	if got := synthesize(t, sink.Bytes(), src, sink.from, sink.to); !bytes.Equal(got, full) {
		t.Fatalf("synthesized %d bytes differ from the full stream of %d (first diff at %d)", len(got), len(full), firstDiff(got, full))
	}
}

func TestRestoreFromLaterStart(t *testing.T) {
	src := newFakeStore()
	f := newFSM(t, src, t.TempDir())
	applyAll(f, workload(t, 30), 4)
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink refSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	// Start at the second record, as if the sender's retention removed the first.
	start := sink.from + store.PhysicalOffset(binary.BigEndian.Uint32(src.data[:4]))
	stream := synthesize(t, sink.Bytes(), src, start, sink.to)

	hdr, err := ReadSnapshotHeader(bytes.NewReader(stream))
	if err != nil || hdr.CommitLogMin != start || hdr.CommitLogOffset != sink.to {
		t.Fatalf("header %+v %v, want start %d", hdr, err, start)
	}
	dst := newFakeStore()
	g := newFSM(t, dst, t.TempDir())
	if err := g.Restore(io.NopCloser(bytes.NewReader(stream))); err != nil {
		t.Fatal(err)
	}
	if dst.base != start || !bytes.Equal(dst.data, src.data[start:]) || g.AppliedIndex() != f.AppliedIndex() {
		t.Fatalf("restored base %d, %d bytes, index %d", dst.base, len(dst.data), g.AppliedIndex())
	}

	t.Run("version 1 must start at min", func(t *testing.T) {
		b := bytes.Clone(stream)
		binary.BigEndian.PutUint16(b[8:], snapshotVersionExactMin)
		if _, err := ReadSnapshotHeader(bytes.NewReader(b)); !errors.Is(err, ErrSnapshotFormat) {
			t.Fatalf("v1 stream starting past min: %v", err)
		}
	})
	t.Run("start below min", func(t *testing.T) {
		b := bytes.Clone(stream)
		p := len(sink.Bytes())
		binary.BigEndian.PutUint64(b[p:], uint64(sink.to-sink.from)+1)
		if _, err := ReadSnapshotHeader(bytes.NewReader(b)); !errors.Is(err, ErrSnapshotFormat) {
			t.Fatalf("stream starting below min: %v", err)
		}
	})
}
