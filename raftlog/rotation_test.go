package raftlog

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// fullDiskVFS is a disk that is full while full is set: preallocating a new
// segment fails with ENOSPC and so does every write. Like the real file system
// (raft-wal's fs.Create) a refused preallocation leaves the new file behind,
// empty, unless noFile is set (a file system that rolls the creation back).
type fullDiskVFS struct {
	types.VFS
	full, noFile atomic.Bool
	refused      atomic.Int64
}

func (v *fullDiskVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	if !v.full.Load() {
		return v.VFS.Create(dir, name, size)
	}
	v.refused.Add(1)
	if !v.noFile.Load() {
		f, err := v.VFS.Create(dir, name, 0)
		if err != nil {
			return nil, err
		}
		_ = f.Close()
	}
	return nil, &os.PathError{Op: "fallocate", Path: name, Err: syscall.ENOSPC}
}

// OpenWriter: a segment preallocated before the disk filled takes writes into
// its blocks; one created while it was full (empty) refuses them.
func (v *fullDiskVFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := v.VFS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return fullDiskFile{f, v, fi.Size()}, nil
}

type fullDiskFile struct {
	types.WritableFile
	v         *fullDiskVFS
	allocated int64
}

func (f fullDiskFile) WriteAt(p []byte, off int64) (int, error) {
	if f.v.full.Load() && off+int64(len(p)) > f.allocated {
		return 0, &os.PathError{Op: "write", Path: "segment", Err: syscall.ENOSPC}
	}
	return f.WritableFile.WriteAt(p, off)
}

// openSmallWAL opens a WAL of 64 KiB segments on vfs: sixteen 4 KiB entries
// fill one, so a test reaches a rotation in a few appends.
func openSmallWAL(dir string, vfs types.VFS) func(types.MetaStore) (*wal.WAL, error) {
	return func(meta types.MetaStore) (*wal.WAL, error) {
		if meta == nil {
			return wal.Open(dir, wal.WithSegmentFiler(segment.NewFiler(dir, vfs)), wal.WithSegmentSize(64<<10))
		}
		return wal.Open(dir, wal.WithMetaStore(meta), wal.WithSegmentFiler(segment.NewFiler(dir, vfs)), wal.WithSegmentSize(64<<10))
	}
}

// appendUntilRefused appends 4 KiB entries one at a time from index 1 until
// StoreLogs fails, and returns the failed entry's index and the error.
func appendUntilRefused(t *testing.T, s raft.LogStore) (uint64, error) {
	t.Helper()
	for i := uint64(1); i < 1000; i++ {
		if err := s.StoreLogs(makeLogs(i, i, 1, 4096)); err != nil {
			return i, err
		}
	}
	t.Fatal("1000 appends of 4 KiB into 64 KiB segments and no rotation failed")
	return 0, nil
}

// TestRawWALWedgesAfterFailedRotation pins the raft-wal v0.4.2 behaviour that
// walStore repairs: once a rotation could not create the next segment, every
// append fails with ErrSealed, even after the disk has room again. If this
// fails after an upgrade, raft-wal recovers by itself and walStore's reopen
// can go.
func TestRawWALWedgesAfterFailedRotation(t *testing.T) {
	dir := t.TempDir()
	vfs := &fullDiskVFS{VFS: fs.New()}
	w, err := openSmallWAL(dir, vfs)(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	vfs.full.Store(true)
	next, err := appendUntilRefused(t, w)
	if !errors.Is(err, types.ErrSealed) {
		t.Fatalf("append %d on a full disk: %v, want ErrSealed (the rotation's error is only logged)", next, err)
	}
	vfs.full.Store(false)
	if err := w.StoreLogs(makeLogs(next, next, 1, 4096)); !errors.Is(err, types.ErrSealed) {
		t.Fatalf("append %d with room again: %v, want raft-wal still wedged with ErrSealed", next, err)
	}
}

// TestWALStoreRecoversFromFailedRotation: chaos D5 found the wedge above on a
// full disk. walStore reopens the WAL. While the disk is full its appends fail
// with an error naming ENOSPC (raft sees failed writes; nothing is lost or
// invented) and it never hangs; once there is room the next appends succeed,
// every entry written before reads back, and the directory reopens from disk
// with all of them. Two file systems: the real one leaves the segment whose
// preallocation failed behind, empty, so the reopen itself succeeds; one that
// rolls the creation back makes the reopen fail until there is room.
func TestWALStoreRecoversFromFailedRotation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noFile bool
	}{{"file left behind", false}, {"creation rolled back", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			vfs := &fullDiskVFS{VFS: fs.New()}
			vfs.noFile.Store(tc.noFile)
			s, err := newWALStore(openSmallWAL(dir, vfs), nil, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			vfs.full.Store(true)
			next, err := appendUntilRefused(t, s)
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("append %d on a full disk: %v, want an error naming ENOSPC", next, err)
			}
			if next < 10 {
				t.Fatalf("the first append refused was %d: the first segment should have held about 15", next)
			}
			// Still full: still refused, with the reason, and no hang.
			err = s.StoreLogs(makeLogs(next, next, 1, 4096))
			if errors.Is(err, types.ErrSealed) && !tc.noFile {
				t.Fatalf("append %d, disk still full: %v: still wedged after the reopen", next, err)
			}
			if err == nil {
				t.Fatalf("append %d, disk still full: stored", next)
			}
			if tc.noFile {
				if !errors.Is(err, ErrWALUnavailable) {
					t.Fatalf("append %d, disk full, reopen failed: %v, want ErrWALUnavailable", next, err)
				}
				if _, err := s.LastIndex(); !errors.Is(err, ErrWALUnavailable) {
					t.Fatalf("LastIndex while down: %v, want ErrWALUnavailable", err)
				}
			} else if l, err := s.LastIndex(); err != nil || l != next-1 {
				t.Fatalf("LastIndex while full = %d, %v; want %d", l, err, next-1)
			}

			vfs.full.Store(false)
			if tc.noFile {
				time.Sleep(reopenBackoff + 100*time.Millisecond)
			}
			last := next + 20 // past the next rotation too
			for i := next; i <= last; i++ {
				storeLogs(t, s, makeLogs(i, i, 1, 4096))
			}
			if got := s.reopens.Load(); got != 1 {
				t.Errorf("reopens = %d, want 1", got)
			}
			requireEntries := func(st raft.LogStore, label string) {
				t.Helper()
				if l, err := st.LastIndex(); err != nil || l != last {
					t.Fatalf("%s: LastIndex = %d, %v; want %d", label, l, err, last)
				}
				for i := uint64(1); i <= last; i++ {
					var got raft.Log
					if err := st.GetLog(i, &got); err != nil {
						t.Fatalf("%s: GetLog(%d): %v", label, i, err)
					}
					if want := makeLog(i, 1, 4096); got.Index != i || !bytes.Equal(got.Data, want.Data) {
						t.Fatalf("%s: entry %d read back as index %d with different data", label, i, got.Index)
					}
				}
			}
			requireEntries(s, "after recovery")
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			again, err := newWALStore(openSmallWAL(dir, fs.New()), nil, testLogger(t))
			if err != nil {
				t.Fatalf("reopen from disk: %v", err)
			}
			defer again.Close()
			requireEntries(again, "reopened from disk")
		})
	}
}
