package raftlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/store"
)

// castagnoli is the CRC-32C table: the snapshot stream's own checksum (fsm) and the
// data file checksums use it.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// snapshotSink writes one snapshot into <id>.tmp/ and renames it to <id>/ on Close.
// Bytes written before WriteCommitLogRange are the stream prefix of a range
// snapshot; without that call the bytes are the whole stream (a received snapshot).
//
// Not safe for concurrent use: raft hands a sink to one goroutine.
type snapshotSink struct {
	s    *SnapshotStore
	meta raft.SnapshotMeta
	tmp  string
	f    *os.File
	bw   *bufio.Writer
	crc  hash.Hash32
	n    int64

	ranged   bool
	from, to store.PhysicalOffset
	done     bool
}

func newSnapshotSink(s *SnapshotStore, meta raft.SnapshotMeta, tmp string, f *os.File) *snapshotSink {
	return &snapshotSink{s: s, meta: meta, tmp: tmp, f: f, bw: bufio.NewWriterSize(f, 1<<20), crc: crc32.New(castagnoli)}
}

// ID implements raft.SnapshotSink.
func (k *snapshotSink) ID() string { return k.meta.ID }

// Write implements io.Writer.
func (k *snapshotSink) Write(p []byte) (int, error) {
	if k.done || k.ranged {
		return 0, fmt.Errorf("snapshot %s: write after %s: %w", k.meta.ID, k.state(), ErrSnapshotSinkMisuse)
	}
	n, err := k.bw.Write(p)
	k.crc.Write(p[:n])
	k.n += int64(n)
	if err != nil {
		return n, fmt.Errorf("snapshot %s: write: %w", k.meta.ID, err)
	}
	return n, nil
}

func (k *snapshotSink) state() string {
	if k.done {
		return "close"
	}
	return "WriteCommitLogRange"
}

// WriteCommitLogRange implements fsm.RangeSink: the snapshot's stream continues with
// the CommitLog range [from, to), produced from the live segments when opened. The
// range is pinned against retention from now on.
func (k *snapshotSink) WriteCommitLogRange(from, to store.PhysicalOffset) error {
	if k.done || k.ranged {
		return fmt.Errorf("snapshot %s: range after %s: %w", k.meta.ID, k.state(), ErrSnapshotSinkMisuse)
	}
	if from < 0 || to < from {
		return fmt.Errorf("snapshot %s: range [%d, %d): %w", k.meta.ID, from, to, ErrSnapshotSinkMisuse)
	}
	k.ranged, k.from, k.to = true, from, to
	k.s.mu.Lock()
	k.s.ranges[k.meta.ID] = rangePin{from, to}
	k.s.recomputeLocked()
	k.s.mu.Unlock()
	return nil
}

// Close implements io.Closer: it makes the snapshot durable and visible (data and
// meta.json fsynced, the directory renamed into place and its parent fsynced), then
// reaps snapshots beyond the retain count.
func (k *snapshotSink) Close() error {
	if k.done {
		return nil
	}
	k.done = true
	if err := k.finish(); err != nil {
		k.discard()
		return fmt.Errorf("snapshot %s: %w", k.meta.ID, err)
	}
	kind := "received"
	if k.ranged {
		kind = "CommitLog range"
	}
	k.s.log.Info("snapshot complete", "id", k.meta.ID, "kind", kind, "bytes_on_disk", k.n, "from", k.from, "to", k.to)
	if err := k.s.reap(); err != nil {
		return fmt.Errorf("snapshot %s: %w", k.meta.ID, err)
	}
	return nil
}

func (k *snapshotSink) finish() error {
	if err := k.bw.Flush(); err != nil {
		return fmt.Errorf("flush data: %w", err)
	}
	if err := k.f.Sync(); err != nil {
		return fmt.Errorf("sync data: %w", err)
	}
	if err := k.f.Close(); err != nil {
		return fmt.Errorf("close data: %w", err)
	}
	rec := snapshotRecord{Meta: k.meta, Kind: kindStream, DataSize: k.n, DataCRC: k.crc.Sum32()}
	if k.ranged {
		rec.Kind, rec.From, rec.To = kindRange, k.from, k.to
	}
	rec.Meta.Size = k.s.streamSize(rec, rec.From)
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode %s: %w", snapshotMetaFile, err)
	}
	if err := writeFileSync(filepath.Join(k.tmp, snapshotMetaFile), b); err != nil {
		return err
	}
	if err := syncDir(k.tmp); err != nil {
		return err
	}
	final := filepath.Join(k.s.dir, k.meta.ID)
	if err := os.Rename(k.tmp, final); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	return syncDir(k.s.dir)
}

// Cancel implements raft.SnapshotSink: the temporary directory is deleted.
func (k *snapshotSink) Cancel() error {
	if k.done {
		return nil
	}
	k.done = true
	k.s.log.Info("snapshot cancelled", "id", k.meta.ID)
	return k.discard()
}

func (k *snapshotSink) discard() error {
	_ = k.f.Close() // may already be closed
	if k.ranged {
		k.s.mu.Lock()
		delete(k.s.ranges, k.meta.ID)
		k.s.recomputeLocked()
		k.s.mu.Unlock()
	}
	if err := os.RemoveAll(k.tmp); err != nil {
		return fmt.Errorf("snapshot %s: remove %s: %w", k.meta.ID, filepath.Base(k.tmp), err)
	}
	return nil
}

func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return fmt.Errorf("create %s: %w", filepath.Base(path), err)
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("sync %s: %w", filepath.Base(path), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", filepath.Base(path), err)
	}
	return nil
}
