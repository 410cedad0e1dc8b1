package store

import (
	"context"
	"testing"

	"golang.org/x/sys/unix"
)

// skipOnTmpfs skips where POSIX_FADV_DONTNEED cannot drop anything: a tmpfs
// page is the file's only copy.
func skipOnTmpfs(t *testing.T, dir string) {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type == unix.TMPFS_MAGIC {
		t.Skip("the test directory is on tmpfs, whose pages cannot be handed back")
	}
}

// residentSegments counts the resident pages of each CommitLog segment, oldest first.
func residentSegments(t *testing.T, s *Store) []int {
	t.Helper()
	var out []int
	for _, f := range s.commitLog.mfq.snapshot() {
		in, _ := resident(t, f.data[:f.size])
		out = append(out, in)
	}
	return out
}

func TestCachedTailHandsBackOldPagesAndKeepsTheirBytes(t *testing.T) {
	dir := t.TempDir()
	skipOnTmpfs(t, dir)
	s, _ := openWarm(t, dir, 1<<20, -1)
	defer s.Close()
	res := appendKiB(t, s, 5000) // about five 1 MiB segments
	if err := s.WaitDispatched(context.Background(), s.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	// Read every message through the mapping, so its pages are mapped into this
	// process too: handing back must unmap them before the kernel lets them go.
	checkBodies(t, s, res)
	if _, err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	before := residentSegments(t, s)
	if len(before) < 5 || before[0] == 0 {
		t.Fatalf("resident pages per segment before any hand-back: %v, want five or more segments, the first cached", before)
	}

	// With no bound (the default), a flush keeps every page.
	if _, err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := residentSegments(t, s); got[0] == 0 {
		t.Fatalf("the first segment was handed back with no cached tail set: %v", got)
	}

	// A tail of 1.5 MiB: every complete segment that ends more than 1.5 MiB below
	// the durable, dispatched end goes; the newest segments stay.
	s.SetCachedTail(3 << 19)
	if _, err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	after := residentSegments(t, s)
	end := int64(s.MaxPhysicalOffset())
	for i, f := range s.commitLog.mfq.snapshot() {
		switch {
		case f.end() <= end-3<<19 && after[i] != 0:
			t.Errorf("segment %d [%d, %d) ends below the tail's line %d but keeps %d pages", i, f.start, f.end(), end-3<<19, after[i])
		case f.start >= end-3<<19 && after[i] == 0:
			t.Errorf("segment %d [%d, %d) is inside the cached tail but was handed back", i, f.start, f.end())
		}
	}

	// Handing back changes no byte: every message reads back from the file.
	checkBodies(t, s, res)

	// With the bound off, later flushes keep everything: the segments that were
	// inside the tail stay cached once the line has passed them.
	kept := 0
	for i, f := range s.commitLog.mfq.snapshot() {
		if f.start >= end-3<<19 {
			kept = i
			break
		}
	}
	s.SetCachedTail(0)
	appendKiB(t, s, 3000)
	if err := s.WaitDispatched(context.Background(), s.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := residentSegments(t, s); got[kept] == 0 {
		t.Fatalf("segment %d was handed back after the bound was turned off: %v", kept, got)
	}
}

// TestCachedTailAfterTruncate: a cut below the hand-back line lowers it, so the
// bytes written over the cut are handed back in turn once they fall behind the tail.
func TestCachedTailAfterTruncate(t *testing.T) {
	dir := t.TempDir()
	skipOnTmpfs(t, dir)
	s, _ := openWarm(t, dir, 1<<20, -1)
	defer s.Close()
	res := appendKiB(t, s, 3000)
	waitDispatched(t, s, s.MaxPhysicalOffset())
	s.SetCachedTail(1 << 19)
	if _, err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := residentSegments(t, s); got[0] != 0 {
		t.Fatalf("the first segment was not handed back: %v", got)
	}
	// Cut in the middle of the first segment, then write past it again.
	if err := s.Truncate(res[300].PhysicalOffset); err != nil {
		t.Fatal(err)
	}
	appendKiB(t, s, 3000)
	waitDispatched(t, s, s.MaxPhysicalOffset())
	if _, err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	first := s.commitLog.mfq.snapshot()[0]
	cut := int64(res[300].PhysicalOffset) - first.start
	if in, _ := resident(t, first.data[cut/pageSize*pageSize:first.size]); in != 0 {
		t.Fatalf("%d pages written over the cut stay cached behind the tail", in)
	}
}
