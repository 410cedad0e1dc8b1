package raftlog

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
)

// TestPowerLossVFSFile pins the file-level contract: synced bytes survive,
// bytes written after the last Sync come back as they were, the power is off
// between Cut and DropUnsynced.
func TestPowerLossVFSFile(t *testing.T) {
	dir := t.TempDir()
	v := NewPowerLossVFS(nil)
	f, err := v.Create(dir, "seg", 64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("durable!"), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	// Two overlapping unsynced writes, one over synced bytes, one over zeros.
	if _, err := f.WriteAt([]byte("LOST"), 4); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("gone too"), 6); err != nil {
		t.Fatal(err)
	}
	if got := v.UnsyncedBytes(); got != 12 {
		t.Fatalf("UnsyncedBytes = %d, want 12", got)
	}
	v.Cut()
	if _, err := f.WriteAt([]byte("x"), 20); !errors.Is(err, ErrPowerCut) {
		t.Fatalf("write after cut: %v, want ErrPowerCut", err)
	}
	if err := f.Sync(); !errors.Is(err, ErrPowerCut) {
		t.Fatalf("sync after cut: %v, want ErrPowerCut", err)
	}
	if _, err := v.Create(dir, "seg2", 64); !errors.Is(err, ErrPowerCut) {
		t.Fatalf("create after cut: %v, want ErrPowerCut", err)
	}
	// Before the drop the page cache still shows the lost bytes.
	before, _ := os.ReadFile(filepath.Join(dir, "seg"))
	if !bytes.HasPrefix(before, []byte("duraLOgone too")) {
		t.Fatalf("before drop: %q", before[:16])
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := v.DropUnsynced()
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 1 || st.Bytes != 12 || st.Syncs != 1 {
		t.Fatalf("stats %+v, want 1 file, 12 bytes, 1 sync", st)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "seg"))
	want := append([]byte("durable!"), make([]byte, 56)...)
	if !bytes.Equal(after, want) {
		t.Fatalf("after drop: %q, want %q", after, want)
	}
	if v.IsCut() {
		t.Fatal("DropUnsynced must power the VFS back on")
	}
}

// TestPowerLossWALTail cuts the power inside the fsync of a batch: StoreLogs
// fails, and after the drop and a reopen with the production OpenStores the
// log ends at the last batch that was synced. Without the drop the unsynced
// batch would still be read back (the negative control below), which is the
// difference between kill -9 and a power cut.
func TestPowerLossWALTail(t *testing.T) {
	for _, drop := range []bool{true, false} {
		name := map[bool]string{true: "drop", false: "page-cache-kept"}[drop]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			v := NewPowerLossVFS(nil)
			s, err := OpenStoresVFS(dir, v, testLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			storeLogs(t, s.Log, makeLogs(1, 10, 1, 512))
			storeLogs(t, s.Log, makeLogs(11, 20, 1, 512))
			v.CutAtNextSync()
			if err := s.Log.StoreLogs(makeLogs(21, 30, 1, 512)); err == nil {
				t.Fatal("StoreLogs succeeded although its fsync lost power")
			}
			if err := s.Close(); err != nil {
				t.Logf("close after the cut: %v", err)
			}
			if drop {
				st, err := v.DropUnsynced()
				if err != nil {
					t.Fatal(err)
				}
				if st.Bytes < 10*512 {
					t.Fatalf("dropped %d bytes, want at least the 10 unsynced entries", st.Bytes)
				}
			}
			s2, last := reopenWAL(t, dir)
			want := uint64(20)
			if !drop {
				want = 30
			}
			if last != want {
				t.Fatalf("last index after power loss = %d, want %d", last, want)
			}
			var l raft.Log
			for i := uint64(1); i <= last; i++ {
				if err := s2.Log.GetLog(i, &l); err != nil || l.Index != i {
					t.Fatalf("GetLog(%d) = %d, %v", i, l.Index, err)
				}
			}
			// The log keeps working after the loss.
			storeLogs(t, s2.Log, makeLogs(last+1, last+5, 2, 512))
		})
	}
}

// reopenWAL opens dir's stores on the real file system, as a restart after the
// power came back does, and returns them (closed at cleanup) and the log's
// last index.
func reopenWAL(t *testing.T, dir string) (*Stores, uint64) {
	t.Helper()
	s, err := OpenStores(dir, LogStoreWAL, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	last, err := s.Log.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	return s, last
}
