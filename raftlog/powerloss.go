package raftlog

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/types"
)

// ErrPowerCut is what every write, sync, create and delete of a PowerLossVFS
// returns once its power is cut.
var ErrPowerCut = errors.New("raftlog: simulated power cut")

// PowerLossVFS is raft-wal's file system with a simulated power supply, for
// chaos scenario D2 (reliability-plan.md): it remembers, for every file, the
// bytes written since the file's last successful Sync, and after a power cut
// it can put the old bytes back, which is what a machine losing its page cache
// leaves on disk. kill -9 keeps the page cache, so this cannot be done with
// processes.
//
// It lives in the production package, not a _test file, because the chaos
// suite runs it under in-process brokers (node.Config.OpenRaftStores with
// OpenStoresVFS); nothing in production constructs it.
//
// Life cycle: NewPowerLossVFS, OpenStoresVFS, traffic, Cut (or CutAtNextSync),
// close the stores, DropUnsynced. Between Cut and DropUnsynced every mutating
// call fails with ErrPowerCut, so nothing written after the cut can become
// durable and raft sees a dead disk. Reads keep working.
//
// Safe for concurrent use. Undo records cost one copy of every byte written
// between two syncs; raft-wal syncs every batch, so they stay small.
type PowerLossVFS struct {
	inner types.VFS

	mu sync.Mutex
	// cut is true from Cut until DropUnsynced.
	cut bool
	// cutAtSync makes the next Sync cut the power instead of syncing.
	cutAtSync bool
	// pending maps a file path to the writes since its last Sync, oldest first.
	pending map[string][]undo
	syncs   uint64
}

// undo is one write's previous content.
type undo struct {
	off int64
	old []byte
}

// PowerLossStats reports what DropUnsynced put back.
type PowerLossStats struct {
	// Files and Bytes count the files touched and the bytes restored.
	Files, Bytes int
	// Syncs is how many Syncs succeeded before the cut.
	Syncs uint64
}

var _ types.VFS = (*PowerLossVFS)(nil)

// NewPowerLossVFS wraps inner (nil means raft-wal's real file system, fs.New()).
// It starts powered.
func NewPowerLossVFS(inner types.VFS) *PowerLossVFS {
	if inner == nil {
		inner = fs.New()
	}
	return &PowerLossVFS{inner: inner, pending: map[string][]undo{}}
}

// Cut cuts the power now: every later write, sync, create and delete fails with
// ErrPowerCut. Bytes written but not synced stay in place (the page cache of a
// machine still running) until DropUnsynced.
func (v *PowerLossVFS) Cut() {
	v.mu.Lock()
	v.cut = true
	v.mu.Unlock()
}

// CutAtNextSync cuts the power when the next Sync is called, before it syncs:
// the writes of the batch being made durable are left unsynced, the window a
// real power cut hits most often.
func (v *PowerLossVFS) CutAtNextSync() {
	v.mu.Lock()
	v.cutAtSync = true
	v.mu.Unlock()
}

// IsCut reports whether the power is cut.
func (v *PowerLossVFS) IsCut() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.cut
}

// UnsyncedBytes is the number of bytes written since their file's last Sync.
func (v *PowerLossVFS) UnsyncedBytes() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for _, us := range v.pending {
		for _, u := range us {
			n += len(u.old)
		}
	}
	return n
}

// DropUnsynced restores every byte written since its file's last successful
// Sync to what it was before (zeros in raft-wal's preallocated segments), syncs
// the files, and powers the VFS back on. It cuts the power first if that was
// not done. Call it only after the WAL using this VFS is closed: it writes the
// files behind the WAL's back.
func (v *PowerLossVFS) DropUnsynced() (PowerLossStats, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.cut = true
	st := PowerLossStats{Syncs: v.syncs}
	var errs []error
	for _, path := range slices.Sorted(maps.Keys(v.pending)) {
		us := v.pending[path]
		if len(us) == 0 {
			continue
		}
		n, err := restoreFile(path, us)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		st.Files++
		st.Bytes += n
	}
	if err := errors.Join(errs...); err != nil {
		return st, fmt.Errorf("drop unsynced writes: %w", err)
	}
	v.pending = map[string][]undo{}
	v.cut, v.cutAtSync = false, false
	return st, nil
}

// restoreFile undoes us on path, newest first, so overlapping writes end with
// the content before the oldest of them.
func restoreFile(path string, us []undo) (int, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil // deleted before the cut: nothing of it survives anyway
	}
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	n := 0
	for i := len(us) - 1; i >= 0; i-- {
		if _, err := f.WriteAt(us[i].old, us[i].off); err != nil {
			_ = f.Close()
			return n, fmt.Errorf("restore %s at %d: %w", path, us[i].off, err)
		}
		n += len(us[i].old)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return n, fmt.Errorf("sync %s: %w", path, err)
	}
	return n, f.Close()
}

// ListDir implements types.VFS.
func (v *PowerLossVFS) ListDir(dir string) ([]string, error) { return v.inner.ListDir(dir) }

// OpenReader implements types.VFS.
func (v *PowerLossVFS) OpenReader(dir, name string) (types.ReadableFile, error) {
	return v.inner.OpenReader(dir, name)
}

// Create implements types.VFS.
func (v *PowerLossVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	if v.IsCut() {
		return nil, fmt.Errorf("create %s: %w", name, ErrPowerCut)
	}
	f, err := v.inner.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return &powerFile{WritableFile: f, path: filepath.Join(dir, name), vfs: v}, nil
}

// OpenWriter implements types.VFS.
func (v *PowerLossVFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := v.inner.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return &powerFile{WritableFile: f, path: filepath.Join(dir, name), vfs: v}, nil
}

// Delete implements types.VFS.
func (v *PowerLossVFS) Delete(dir, name string) error {
	if v.IsCut() {
		return fmt.Errorf("delete %s: %w", name, ErrPowerCut)
	}
	return v.inner.Delete(dir, name)
}

// powerFile records the old bytes under every write.
type powerFile struct {
	types.WritableFile
	path string
	vfs  *PowerLossVFS
}

func (f *powerFile) WriteAt(p []byte, off int64) (int, error) {
	v := f.vfs
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cut {
		return 0, fmt.Errorf("write %s at %d: %w", f.path, off, ErrPowerCut)
	}
	old := make([]byte, len(p))
	// Past the end of the file reads short; the zeros left in old are what a
	// lost extension looks like in a preallocated file.
	if _, err := f.WritableFile.ReadAt(old, off); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("read old bytes of %s at %d: %w", f.path, off, err)
	}
	n, err := f.WritableFile.WriteAt(p, off)
	v.pending[f.path] = append(v.pending[f.path], undo{off: off, old: old})
	return n, err
}

func (f *powerFile) Sync() error {
	v := f.vfs
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cutAtSync {
		v.cut, v.cutAtSync = true, false
	}
	if v.cut {
		return fmt.Errorf("sync %s: %w", f.path, ErrPowerCut)
	}
	if err := f.WritableFile.Sync(); err != nil {
		return err
	}
	delete(v.pending, f.path)
	v.syncs++
	return nil
}

// OpenStoresVFS is OpenStores for the raft-wal backend with its segment files
// on vfs (raft-wal's metadata file, the StableStore and the lock stay on the
// real file system; all three fsync every commit). Test and chaos use only:
// production opens with OpenStores. The layout is OpenStores' own, so a
// directory written here reopens with OpenStores (TestPowerLossWALTail).
func OpenStoresVFS(dir string, vfs types.VFS, logger hclog.Logger) (*Stores, error) {
	return openStoresOn(dir, LogStoreWAL, vfs, logger)
}
