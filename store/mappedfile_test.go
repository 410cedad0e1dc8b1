package store

import (
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTruncateDoesNotAllocateHoles: cutting a mostly unwritten (sparse) file must
// not write zeros through it; that allocated every page (the whole IndexFile on
// recovery) and, on a full disk, killed the process with SIGBUS (chaos D5).
func TestTruncateDoesNotAllocateHoles(t *testing.T) {
	dir := t.TempDir()
	const size = 8 << 20
	// A sparse file, as a filesystem without fallocate (or a file from an older
	// version) leaves it.
	path := dir + "/" + fileName(0)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	mf, err := openMappedFile(path, 0, size)
	if err != nil {
		t.Fatal(err)
	}
	defer mf.close()
	mf.appendBytes([]byte("some records at the start"))
	mf.wrotePosition.Store(size) // as after load, before recovery finds the end
	mf.truncateTo(10)
	if _, err := mf.flush(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(mf.path)
	if err != nil {
		t.Fatal(err)
	}
	allocated := st.Sys().(*syscall.Stat_t).Blocks * 512
	if allocated > 1<<20 {
		t.Fatalf("truncate allocated %d bytes of an 8 MiB sparse file", allocated)
	}
	if string(mf.data[:10]) != "some recor" || mf.data[10] != 0 || mf.data[20] != 0 {
		t.Fatalf("content after truncate: %q", mf.data[:30])
	}
	b := make([]byte, 3*4096+100)
	b[5000], b[len(b)-1] = 1, 7
	clearNonZero(b)
	for i, c := range b {
		if c != 0 {
			t.Fatalf("byte %d = %d after clearNonZero", i, c)
		}
	}
}

// TestNewFilesHaveTheirBlocksReserved: new mapped files are fallocated, so a write
// through the mapping cannot meet a full disk (SIGBUS); ENOSPC comes from the
// create instead.
func TestNewFilesHaveTheirBlocksReserved(t *testing.T) {
	dir := t.TempDir()
	probe, err := os.Create(dir + "/probe")
	if err != nil {
		t.Fatal(err)
	}
	perr := unix.Fallocate(int(probe.Fd()), 0, 0, 4096)
	probe.Close()
	if perr != nil {
		t.Skipf("filesystem without fallocate: %v", perr)
	}
	mf, err := createMappedFile(dir, 0, 4<<20, fillAllocate)
	if err != nil {
		t.Fatal(err)
	}
	defer mf.close()
	st, err := os.Stat(mf.path)
	if err != nil {
		t.Fatal(err)
	}
	if allocated := st.Sys().(*syscall.Stat_t).Blocks * 512; allocated < 4<<20 {
		t.Fatalf("a new 4 MiB mapped file has only %d bytes allocated", allocated)
	}
}
