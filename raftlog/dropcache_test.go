//go:build linux

package raftlog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	walfs "github.com/hashicorp/raft-wal/fs"
	"golang.org/x/sys/unix"
)

// resident reports, per page of path's first n bytes, whether it is in the
// page cache (mincore over a read-only mapping of the file).
func resident(t *testing.T, path string, n int) []bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, n, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (n+pageSize-1)/pageSize)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	out := make([]bool, len(vec))
	for i, v := range vec {
		out[i] = v&1 == 1
	}
	return out
}

func count(pages []bool) (in int) {
	for _, p := range pages {
		if p {
			in++
		}
	}
	return in
}

// TestDropCacheFileDropsSyncedPages: what a segment writer wrote is in the
// page cache until Sync, and after it only the partly written tail page is;
// the bytes read back are the bytes written, the next append and its sync
// drop the rest, and a segment opened again (OpenWriter) behaves the same.
func TestDropCacheFileDropsSyncedPages(t *testing.T) {
	dir := t.TempDir()
	vfs := dropCacheFS{walfs.New()}
	const size = 1 << 20
	w, err := vfs.Create(dir, "seg", size)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("raft-entry"), 30_000) // 300,000 bytes: 73 pages and a part
	if _, err := w.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "seg")
	pages := len(data)/pageSize + 1
	if in := count(resident(t, path, pages*pageSize)); in != pages {
		t.Fatalf("before Sync: %d of %d written pages cached, want all (the check would not see a drop)", in, pages)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	got := resident(t, path, pages*pageSize)
	if in := count(got); in != 1 || !got[pages-1] {
		t.Fatalf("after Sync: %d pages cached (tail page cached: %v), want only the partly written tail", in, got[pages-1])
	}
	more := bytes.Repeat([]byte("x"), 3*pageSize)
	if _, err := w.WriteAt(more, int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	end := len(data) + len(more)
	pages = end/pageSize + 1
	got = resident(t, path, pages*pageSize)
	if in := count(got); in != 1 || !got[pages-1] {
		t.Fatalf("after the second Sync: %d of %d pages cached, want only the tail", in, pages)
	}
	back := make([]byte, end)
	if _, err := w.ReadAt(back, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back[:len(data)], data) || !bytes.Equal(back[len(data):], more) {
		t.Fatal("bytes read back after the drops differ from those written")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	w, err = vfs.OpenWriter(dir, "seg")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteAt(more, int64(end)); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	end += len(more)
	pages = end/pageSize + 1
	if in := count(resident(t, path, pages*pageSize)); in > 1 {
		t.Fatalf("reopened segment after Sync: %d pages cached, want at most the tail", in)
	}
}
