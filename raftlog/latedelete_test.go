package raftlog

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	walfs "github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/types"
)

// heldDeleteVFS blocks every Delete until release is closed.
type heldDeleteVFS struct {
	types.VFS
	release chan struct{}
}

func (v *heldDeleteVFS) Delete(dir, name string) error {
	<-v.release
	return v.VFS.Delete(dir, name)
}

// appendEach appends 4 KiB entries first..last one StoreLogs each, so that
// raft-wal rotates its 64 KiB segments between them.
func appendEach(t *testing.T, w raft.LogStore, first, last uint64) {
	t.Helper()
	for i := first; i <= last; i++ {
		if err := w.StoreLogs(makeLogs(i, i, 1, 4096)); err != nil {
			t.Fatal(err)
		}
	}
}

// openHeldWAL opens a WAL of 64 KiB segments on a lateDeleteFS whose deletions
// wait for held.release, with entries 1..100 in it.
func openHeldWAL(t *testing.T) (string, *wal.WAL, *heldDeleteVFS, *lateDeleteFS) {
	t.Helper()
	dir := t.TempDir()
	held := &heldDeleteVFS{VFS: walfs.New(), release: make(chan struct{})}
	late := newLateDeleteFS(held, testLogger(t))
	w, err := openSmallWAL(dir, late)(nil)
	if err != nil {
		t.Fatal(err)
	}
	appendEach(t, w, 1, 100)
	return dir, w, held, late
}

func walFiles(t *testing.T, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// A head truncation returns, and appends go on, while the dropped segments'
// deletion is still blocked; Close waits for it, and the files are gone.
// Against raft-wal's own file system the DeleteRange below blocks until the
// files are deleted (the stall this removes).
func TestCompactionDoesNotWaitForSegmentDeletion(t *testing.T) {
	dir, w, held, late := openHeldWAL(t)
	before := walFiles(t, dir)
	if before < 4 {
		t.Fatalf("%d segment files after 400 KiB into 64 KiB segments, want several", before)
	}
	done := make(chan error, 1)
	go func() { done <- w.DeleteRange(1, 90) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		close(held.release)
		t.Fatal("DeleteRange waited for the segment files to be deleted")
	}
	if first, err := w.FirstIndex(); err != nil || first != 91 {
		t.Fatalf("first index after DeleteRange(1, 90) = %d, %v; want 91", first, err)
	}
	if err := w.StoreLogs(makeLogs(101, 101, 1, 4096)); err != nil {
		t.Fatalf("append while deletions are pending: %v", err)
	}
	if got := walFiles(t, dir); got < before {
		t.Fatalf("%d segment files before the deletions were released, had %d", got, before)
	}
	close(held.release)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := late.Close(); err != nil {
		t.Fatal(err)
	}
	if got := walFiles(t, dir); got >= before {
		t.Fatalf("%d segment files after Close, had %d before the truncation", got, before)
	}
}

// Files queued for deletion when the process died are orphans the next open
// removes: reopening with nothing deleted yet loses no entry that was kept.
func TestLateDeletionsLeftByACrashAreRemovedOnOpen(t *testing.T) {
	dir, w, _, _ := openHeldWAL(t)
	before := walFiles(t, dir)
	if err := w.DeleteRange(1, 90); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The "crash": the queued deletions never run (held stays closed to them;
	// its worker is left blocked).
	w2, err := openSmallWAL(dir, walfs.New())(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if got := walFiles(t, dir); got >= before {
		t.Fatalf("%d segment files after reopening, had %d: the orphans stayed", got, before)
	}
	first, err := w2.FirstIndex()
	if err != nil || first != 91 {
		t.Fatalf("first index after reopen = %d, %v; want 91", first, err)
	}
	last, err := w2.LastIndex()
	if err != nil || last != 100 {
		t.Fatalf("last index after reopen = %d, %v; want 100", last, err)
	}
}

// A dropped segment is shrunk in paced steps before it is unlinked, so a
// compaction's gigabyte is not freed in one journal transaction; Close stops
// pacing and still deletes everything queued.
func TestLateDeletionShrinksFilesInStepsAndCloseHurries(t *testing.T) {
	dir := t.TempDir()
	late := newLateDeleteFS(walfs.New(), testLogger(t))
	late.step, late.pause = 1<<20, 30*time.Millisecond
	write := func(name string, size int) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.wal", 6<<20)
	if err := late.Delete(dir, "a.wal"); err != nil {
		t.Fatal(err)
	}
	// Partly shrunk: smaller than written, not gone yet.
	var partial bool
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		st, err := os.Stat(filepath.Join(dir, "a.wal"))
		if err != nil {
			break // gone
		}
		if st.Size() > 0 && st.Size() < 6<<20 && st.Size()%(1<<20) == 0 {
			partial = true
		}
	}
	if !partial {
		t.Fatal("never saw the file part way through its paced truncation")
	}
	if _, err := os.Stat(filepath.Join(dir, "a.wal")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a.wal after its deletion: %v", err)
	}
	// 64 MiB at 1 MiB per 100 ms would take 6.4 s; Close must not wait that
	// out (unpaced, it takes milliseconds; the bound is wide for a busy box).
	if err := late.Close(); err != nil {
		t.Fatal(err)
	}
	late = newLateDeleteFS(walfs.New(), testLogger(t))
	late.step, late.pause = 1<<20, 100*time.Millisecond
	write("b.wal", 64<<20)
	if err := late.Delete(dir, "b.wal"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := late.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Close took %s: it kept pacing", took)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.wal")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("b.wal after Close: %v", err)
	}
}
