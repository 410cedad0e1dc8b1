package raftlog

import (
	"sync"
	"testing"

	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// syncTrackingVFS wraps raft-wal's real file system and records, per file,
// whether bytes were written since the last Sync.
type syncTrackingVFS struct {
	types.VFS
	mu       sync.Mutex
	unsynced map[string]bool
	syncs    int
}

func (v *syncTrackingVFS) track(name string, f types.WritableFile) types.WritableFile {
	return &trackedFile{WritableFile: f, name: name, vfs: v}
}

func (v *syncTrackingVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := v.VFS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return v.track(name, f), nil
}

func (v *syncTrackingVFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := v.VFS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return v.track(name, f), nil
}

// state reports the files holding unsynced bytes and the Sync count.
func (v *syncTrackingVFS) state() ([]string, int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var dirty []string
	for name, d := range v.unsynced {
		if d {
			dirty = append(dirty, name)
		}
	}
	return dirty, v.syncs
}

type trackedFile struct {
	types.WritableFile
	name string
	vfs  *syncTrackingVFS
}

func (f *trackedFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.WritableFile.WriteAt(p, off)
	f.vfs.mu.Lock()
	f.vfs.unsynced[f.name] = true
	f.vfs.mu.Unlock()
	return n, err
}

func (f *trackedFile) Sync() error {
	err := f.WritableFile.Sync()
	if err == nil {
		f.vfs.mu.Lock()
		f.vfs.unsynced[f.name] = false
		f.vfs.syncs++
		f.vfs.mu.Unlock()
	}
	return err
}

// TestWALSyncsEveryBatch pins the property doc.go promises for the default
// backend: when StoreLogs returns, no segment file holds unsynced bytes, and
// every batch cost at least one fsync. (boltdb's equivalent is bbolt's Commit
// with NoSync=false, which OpenStores sets explicitly.)
func TestWALSyncsEveryBatch(t *testing.T) {
	dir := t.TempDir()
	vfs := &syncTrackingVFS{VFS: fs.New(), unsynced: map[string]bool{}}
	// 64 KiB segments so the batches also cross several segment rotations.
	w, err := wal.Open(dir, wal.WithSegmentFiler(segment.NewFiler(dir, vfs)), wal.WithSegmentSize(64<<10), wal.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	next := uint64(1)
	for batch := 1; batch <= 40; batch++ {
		_, before := vfs.state()
		logs := makeLogs(next, next+uint64(batch%5), 1, 4096)
		next += uint64(len(logs))
		storeLogs(t, &walStore{w: w, ls: newLeaderSync()}, logs)
		dirty, after := vfs.state()
		if len(dirty) > 0 {
			t.Fatalf("batch %d: StoreLogs returned with unsynced bytes in %v", batch, dirty)
		}
		if after <= before {
			t.Fatalf("batch %d: StoreLogs returned without an fsync (syncs %d → %d)", batch, before, after)
		}
	}
	if segs, err := vfs.ListDir(dir); err != nil || len(segs) < 4 {
		t.Fatalf("expected several segment files after rotation, got %v, %v", segs, err)
	}
}
