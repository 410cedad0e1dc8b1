package fsm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

// checkpointDispatchWait bounds how long a checkpoint waits for the reput (EntryLog).
const checkpointDispatchWait = time.Minute

// CheckpointFile is the name of the apply checkpoint inside Config.Dir.
const CheckpointFile = "fsm.checkpoint"

// Checkpoint file layout (big-endian):
//
//	+--------+---------+--------+--------+------------------+
//	| "RRCK" | version | crc32c | length | JSON (length B)  |
//	|   4 B  |   4 B   |  4 B   |  4 B   | checkpointState  |
//	+--------+---------+--------+--------+------------------+
//
// The crc covers the JSON. The file is replaced atomically (temp + fsync + rename +
// directory fsync), so a reader sees the old or the new checkpoint, never a mix; the
// crc guards against a file system that lies.
var checkpointMagic = [4]byte{'R', 'R', 'C', 'K'}

const checkpointVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkpointState is what a checkpoint records: everything at or below AppliedIndex is
// in the CommitLog below CommitLogOffset (durable) and in Metadata.
type checkpointState struct {
	AppliedIndex    uint64               `json:"appliedIndex"`
	AppliedTerm     uint64               `json:"appliedTerm"`
	CommitLogOffset store.PhysicalOffset `json:"commitLogOffset"`
	Metadata        json.RawMessage      `json:"metadata"`
}

// ErrCheckpointCorrupt reports a checkpoint file that fails its structure or crc check.
var ErrCheckpointCorrupt = errors.New("fsm: corrupt apply checkpoint")

// Checkpoint makes the current apply state durable: it captures (appliedIndex,
// CommitLog offset, metadata) at one index, flushes the store up to at least that
// offset, and only then replaces the checkpoint file. The node calls it about once a
// second and at shutdown; Persist and Restore call it too. Safe to call concurrently
// with Apply; Apply is blocked only while the state is captured.
func (f *FSM) Checkpoint() error {
	f.ckMu.Lock()
	defer f.ckMu.Unlock()
	f.mu.Lock()
	if f.broken != nil {
		f.mu.Unlock()
		return fmt.Errorf("checkpoint: store inconsistent after failed restore: %w", f.broken)
	}
	ck := checkpointState{AppliedIndex: f.applied, AppliedTerm: f.appliedTerm, CommitLogOffset: f.clOffset}
	meta, err := f.meta.marshal()
	f.mu.Unlock()
	if err != nil {
		return fmt.Errorf("checkpoint index=%d: %w", ck.AppliedIndex, err)
	}
	if ck.AppliedIndex == f.ckIndex && f.ckIndex != 0 {
		return nil // nothing applied since the last one
	}
	ck.Metadata = meta
	return f.writeCheckpointLocked(ck)
}

// writeCheckpointLocked flushes and writes ck. Caller holds ckMu.
func (f *FSM) writeCheckpointLocked(ck checkpointState) error {
	if f.es != nil {
		// The ConsumeQueues are the only record of queue offsets below the
		// checkpoint (raft does not replay there): they must be dispatched up to it
		// before the flush makes them durable.
		ctx, cancel := context.WithTimeout(context.Background(), checkpointDispatchWait)
		err := f.es.WaitDispatched(ctx, ck.CommitLogOffset)
		cancel()
		if err != nil {
			return fmt.Errorf("checkpoint index=%d: wait for dispatch to %d: %w", ck.AppliedIndex, ck.CommitLogOffset, err)
		}
	}
	flushed, err := f.st.Flush()
	if err != nil {
		return fmt.Errorf("checkpoint index=%d: flush CommitLog: %w", ck.AppliedIndex, err)
	}
	if flushed < ck.CommitLogOffset {
		return fmt.Errorf("checkpoint index=%d: CommitLog durable to %d, checkpoint needs %d", ck.AppliedIndex, flushed, ck.CommitLogOffset)
	}
	if err := writeCheckpointFile(f.cfg.Dir, ck); err != nil {
		return err
	}
	f.ckIndex = ck.AppliedIndex
	if f.es != nil {
		f.es.MarkApplyCheckpoint(ck.CommitLogOffset)
	}
	return nil
}

func writeCheckpointFile(dir string, ck checkpointState) error {
	body, err := json.Marshal(ck)
	if err != nil {
		return fmt.Errorf("checkpoint index=%d: %w", ck.AppliedIndex, err)
	}
	buf := make([]byte, 16, 16+len(body))
	copy(buf, checkpointMagic[:])
	binary.BigEndian.PutUint32(buf[4:], checkpointVersion)
	binary.BigEndian.PutUint32(buf[8:], crc32.Checksum(body, castagnoli))
	binary.BigEndian.PutUint32(buf[12:], uint32(len(body)))
	buf = append(buf, body...)
	return store.WriteFileAtomic(dir, CheckpointFile, buf)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir for fsync: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync dir: %w", err)
	}
	return nil
}

// removeCheckpoint deletes the checkpoint durably (before a restore rewrites the store:
// a crash in the middle must not leave a checkpoint describing a store that is gone).
func removeCheckpoint(dir string) error {
	err := os.Remove(filepath.Join(dir, CheckpointFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove checkpoint: %w", err)
	}
	return syncDir(dir)
}

// readCheckpoint loads dir's checkpoint; found is false when there is none.
func readCheckpoint(dir string) (ck checkpointState, found bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, CheckpointFile))
	if errors.Is(err, fs.ErrNotExist) {
		return ck, false, nil
	}
	if err != nil {
		return ck, false, fmt.Errorf("read checkpoint: %w", err)
	}
	if len(b) < 16 || [4]byte(b[:4]) != checkpointMagic {
		return ck, false, fmt.Errorf("%w: %s: bad magic or %d bytes", ErrCheckpointCorrupt, CheckpointFile, len(b))
	}
	if v := binary.BigEndian.Uint32(b[4:]); v != checkpointVersion {
		return ck, false, fmt.Errorf("%w: %s: version %d", ErrCheckpointCorrupt, CheckpointFile, v)
	}
	body := b[16:]
	if l := binary.BigEndian.Uint32(b[12:]); uint64(l) != uint64(len(body)) {
		return ck, false, fmt.Errorf("%w: %s: length %d, %d bytes follow", ErrCheckpointCorrupt, CheckpointFile, l, len(body))
	}
	if crc := binary.BigEndian.Uint32(b[8:]); crc != crc32.Checksum(body, castagnoli) {
		return ck, false, fmt.Errorf("%w: %s: crc mismatch", ErrCheckpointCorrupt, CheckpointFile)
	}
	if err := json.Unmarshal(body, &ck); err != nil {
		return ck, false, fmt.Errorf("%w: %s: %v", ErrCheckpointCorrupt, CheckpointFile, err)
	}
	return ck, true, nil
}
