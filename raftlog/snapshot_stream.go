package raftlog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/rocketraft/rocketraft/store"
)

// fileStream reads a received snapshot's data file and checks its size and CRC-32C
// at the end: a file damaged on disk fails the stream instead of feeding Restore
// (whose own CRC would catch it too, but only after resetting the store).
type fileStream struct {
	f    *os.File
	br   *bufio.Reader
	crc  hash.Hash32
	n    int64
	want snapshotRecord
}

func openStreamFile(path string, r snapshotRecord) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &fileStream{f: f, br: bufio.NewReaderSize(f, 1<<20), crc: crc32.New(castagnoli), want: r}, nil
}

func (s *fileStream) Read(p []byte) (int, error) {
	n, err := s.br.Read(p)
	s.crc.Write(p[:n])
	s.n += int64(n)
	// A legacy file has no CRC-32C recorded (FileSnapshotStore kept a CRC-64).
	if errors.Is(err, io.EOF) && (s.n != s.want.DataSize || (s.want.Kind != kindLegacy && s.crc.Sum32() != s.want.DataCRC)) {
		return n, fmt.Errorf("%w: %s: %d bytes crc %08x, recorded %d bytes crc %08x",
			ErrSnapshotCorrupt, snapshotDataFile, s.n, s.crc.Sum32(), s.want.DataSize, s.want.DataCRC)
	}
	return n, err
}

func (s *fileStream) Close() error { return s.f.Close() }

// rangeStream produces a range snapshot's stream: the stored prefix, the 8-byte
// length, the CommitLog bytes [start, to) read from the live segments one Read at a
// time (store.ReadRange straight into the caller's buffer: no goroutine, no copy of
// the range), then the CRC-32C of everything before it.
//
// The SnapshotStore pins [start, …) against retention from Open until Close.
type rangeStream struct {
	s       *SnapshotStore
	pre     []byte // prefix and length not yet returned
	off, to store.PhysicalOffset
	crc     hash.Hash32
	trailer []byte // the CRC, once the range is done
	ended   bool   // the range is done and trailer computed
	closed  sync.Once
}

// openRange pins the range, decides the start and returns the stream.
func (s *SnapshotStore) openRange(r snapshotRecord) (*rangeStream, store.PhysicalOffset, error) {
	head, err := os.ReadFile(filepath.Join(s.dir, r.Meta.ID, snapshotDataFile))
	if err != nil {
		return nil, 0, err
	}
	if int64(len(head)) != r.DataSize || crc32.Checksum(head, castagnoli) != r.DataCRC {
		return nil, 0, fmt.Errorf("%w: prefix of %d bytes crc %08x, recorded %d bytes crc %08x",
			ErrSnapshotCorrupt, len(head), crc32.Checksum(head, castagnoli), r.DataSize, r.DataCRC)
	}
	rs := &rangeStream{s: s, to: r.To, crc: crc32.New(castagnoli)}
	// Pin from the captured min before reading the store's minimum, so that no
	// retention run starting after this point deletes what the start will name.
	s.mu.Lock()
	s.streams[rs] = r.From
	s.recomputeLocked()
	s.mu.Unlock()
	start := s.startFor(r)
	if r.To > r.From && (start >= r.To || s.cl.MaxPhysicalOffset() < r.To) {
		rs.unpin()
		return nil, 0, fmt.Errorf("%w: range [%d, %d), CommitLog now [%d, %d)",
			ErrSnapshotRangeGone, r.From, r.To, s.cl.MinPhysicalOffset(), s.cl.MaxPhysicalOffset())
	}
	s.mu.Lock()
	s.streams[rs] = start
	s.recomputeLocked()
	s.mu.Unlock()
	rs.off = start
	rs.pre = binary.BigEndian.AppendUint64(head, uint64(r.To-start))
	return rs, start, nil
}

func (rs *rangeStream) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(rs.pre) > 0 {
		n := copy(p, rs.pre)
		rs.pre = rs.pre[n:]
		rs.crc.Write(p[:n])
		return n, nil
	}
	if rs.off < rs.to {
		end := min(rs.to, rs.off+store.PhysicalOffset(len(p)))
		got := 0
		err := rs.s.cl.ReadRange(rs.off, end, func(chunk []byte) error {
			got += copy(p[got:], chunk)
			return nil
		})
		if err == nil && got != int(end-rs.off) {
			err = fmt.Errorf("%w: read %d bytes of [%d, %d)", ErrSnapshotRangeGone, got, rs.off, end)
		}
		if err != nil {
			return 0, fmt.Errorf("stream CommitLog at %d: %w", rs.off, err)
		}
		rs.crc.Write(p[:got])
		rs.off = end
		return got, nil
	}
	if !rs.ended {
		rs.ended = true
		rs.trailer = binary.BigEndian.AppendUint32(nil, rs.crc.Sum32())
	}
	if len(rs.trailer) == 0 {
		return 0, io.EOF
	}
	n := copy(p, rs.trailer)
	rs.trailer = rs.trailer[n:]
	return n, nil
}

// Close releases the stream's retention pin. It is idempotent.
func (rs *rangeStream) Close() error {
	rs.unpin()
	return nil
}

func (rs *rangeStream) unpin() {
	rs.closed.Do(func() {
		rs.s.mu.Lock()
		delete(rs.s.streams, rs)
		rs.s.recomputeLocked()
		rs.s.mu.Unlock()
	})
}
