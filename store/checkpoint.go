package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
)

// File names under the store root.
const (
	checkpointFile = "checkpoint"
	abortFile      = "abort"
)

// checkpoint is the content of the `checkpoint` file (layout in doc.go). It records
// how far the CommitLog was durable when it was written; recovery treats a bad record
// below commitLogFlushed as corruption, not as a torn tail.
type checkpoint struct {
	// commitLogFlushed: every CommitLog byte below it was msync'd before the file
	// was written. Invariant: a record boundary (or a segment end).
	commitLogFlushed PhysicalOffset
	// commitLogMin is the first stored byte when written (informational).
	commitLogMin PhysicalOffset
	// logicsFlushed is the CommitLog offset up to which ConsumeQueues and IndexFiles
	// were dispatched and flushed when written (informational: the dispatcher recovers
	// from the files themselves).
	logicsFlushed PhysicalOffset
	// physicMsgTimestamp is the STORETIMESTAMP of the last appended message when the
	// checkpoint was taken; indexMsgTimestamp the same for the index (informational).
	physicMsgTimestamp int64
	indexMsgTimestamp  int64
}

const (
	checkpointMagic   = 0x52524350 // "RRCP"
	checkpointVersion = 1
	checkpointSize    = 4 + 4 + 5*8 + 4
)

func (c checkpoint) encode() []byte {
	b := make([]byte, checkpointSize)
	be := binary.BigEndian
	be.PutUint32(b[0:], checkpointMagic)
	be.PutUint32(b[4:], checkpointVersion)
	be.PutUint64(b[8:], uint64(c.commitLogFlushed))
	be.PutUint64(b[16:], uint64(c.commitLogMin))
	be.PutUint64(b[24:], uint64(c.logicsFlushed))
	be.PutUint64(b[32:], uint64(c.physicMsgTimestamp))
	be.PutUint64(b[40:], uint64(c.indexMsgTimestamp))
	be.PutUint32(b[48:], crc32.ChecksumIEEE(b[:48]))
	return b
}

func decodeCheckpoint(b []byte) (checkpoint, error) {
	var c checkpoint
	be := binary.BigEndian
	switch {
	case len(b) != checkpointSize:
		return c, corruptf("checkpoint has %d bytes, want %d", len(b), checkpointSize)
	case be.Uint32(b[0:]) != checkpointMagic:
		return c, corruptf("checkpoint magic %#x", be.Uint32(b[0:]))
	case be.Uint32(b[4:]) != checkpointVersion:
		return c, corruptf("checkpoint version %d", be.Uint32(b[4:]))
	case be.Uint32(b[48:]) != crc32.ChecksumIEEE(b[:48]):
		return c, corruptf("checkpoint CRC mismatch")
	}
	c.commitLogFlushed = PhysicalOffset(be.Uint64(b[8:]))
	c.commitLogMin = PhysicalOffset(be.Uint64(b[16:]))
	c.logicsFlushed = PhysicalOffset(be.Uint64(b[24:]))
	c.physicMsgTimestamp = int64(be.Uint64(b[32:]))
	c.indexMsgTimestamp = int64(be.Uint64(b[40:]))
	return c, nil
}

// readCheckpoint loads <dir>/checkpoint; found is false when there is none.
func readCheckpoint(dir string) (c checkpoint, found bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, checkpointFile))
	if errors.Is(err, os.ErrNotExist) {
		return c, false, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("read checkpoint: %w", err)
	}
	c, err = decodeCheckpoint(b)
	if err != nil {
		return c, false, err
	}
	return c, true, nil
}

// writeCheckpoint replaces <dir>/checkpoint atomically: write a temp file, fsync it,
// rename it over the old one, fsync the directory. A crash leaves the old or the new
// file, never a mix.
func writeCheckpoint(dir string, c checkpoint) error {
	return writeFileAtomic(dir, checkpointFile, c.encode())
}

// WriteFileAtomic replaces dir/name with data durably: a temporary file written and
// fsynced, renamed over the old one, and the directory fsynced. A crash leaves the
// old file or the new one, never a mix.
func WriteFileAtomic(dir, name string, data []byte) error { return writeFileAtomic(dir, name, data) }

func writeFileAtomic(dir, name string, data []byte) error {
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", name+".tmp", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name+".tmp", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", name+".tmp", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", name+".tmp", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", name, err)
	}
	return syncDir(dir)
}

// createAbortMarker creates the `abort` file (empty) and reports whether it already
// existed, which means the previous run did not close cleanly.
func createAbortMarker(dir string) (existed bool, err error) {
	path := filepath.Join(dir, abortFile)
	if _, err := os.Stat(path); err == nil {
		existed = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("stat abort marker: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return existed, fmt.Errorf("create abort marker: %w", err)
	}
	if err := f.Close(); err != nil {
		return existed, fmt.Errorf("close abort marker: %w", err)
	}
	return existed, syncDir(dir)
}

// removeAbortMarker marks a clean shutdown; it is the last thing Close does.
func removeAbortMarker(dir string) error {
	if err := os.Remove(filepath.Join(dir, abortFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove abort marker: %w", err)
	}
	return syncDir(dir)
}
