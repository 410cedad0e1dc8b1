package store

import (
	"bytes"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the pages of b (page-aligned) that are in the page cache.
func resident(t *testing.T, b []byte) (in, total int) {
	t.Helper()
	vec := make([]byte, (len(b)+pageSize-1)/pageSize)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	for _, v := range vec {
		if v&1 != 0 {
			in++
		}
	}
	return in, len(vec)
}

// openWarm opens a store with segments of segSize bytes and a warm-ahead window
// (negative: off).
func openWarm(t *testing.T, dir string, segSize, window int64) (*Store, Config) {
	t.Helper()
	cfg := testConfig(dir)
	cfg.CommitLogSegmentSize = segSize
	cfg.WarmAhead = window
	return openTest(t, cfg), cfg
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// appendKiB appends n one-KiB messages in batches of 32 and returns where each went.
func appendKiB(t *testing.T, s *Store, n int) []AppendResult {
	t.Helper()
	var out []AppendResult
	for i := 0; i < n; i += 32 {
		recs := make([][]byte, 0, 32)
		for j := i; j < min(i+32, n); j++ {
			recs = append(recs, testRecord(t, "WarmTopic", int32(j%4), 1024, j))
		}
		res, err := s.AppendBatch(recs, 1700000000000+int64(i))
		if err != nil {
			t.Fatalf("AppendBatch: %v", err)
		}
		out = append(out, res...)
	}
	return out
}

// checkBodies decodes every appended message (with its body CRC) and compares its
// body with the one appendKiB wrote: populating pages while the writer copies into
// them must never change a byte.
func checkBodies(t *testing.T, s *Store, res []AppendResult) {
	t.Helper()
	for i, r := range res {
		b, release, err := s.commitLog.bytesAt(r.PhysicalOffset, r.Size)
		if err != nil {
			t.Fatalf("message %d at %d: %v", i, r.PhysicalOffset, err)
		}
		m, err := DecodeMessage(b, true)
		release()
		if err != nil {
			t.Fatalf("message %d at %d: %v", i, r.PhysicalOffset, err)
		}
		want, _ := DecodeMessage(testRecord(t, "WarmTopic", int32(i%4), 1024, i), true)
		if !bytes.Equal(m.Body, want.Body) {
			t.Fatalf("message %d at %d: body differs from what was appended", i, r.PhysicalOffset)
		}
	}
}

func TestWarmerPopulatesAheadOfTheWriter(t *testing.T) {
	s, cfg := openWarm(t, t.TempDir(), 8<<20, 2<<20)
	defer s.Close()

	res := appendKiB(t, s, 1000)
	checkBodies(t, s, res)
	f := s.commitLog.mfq.last()
	wrote := f.wrotePosition.Load()
	// The warmer is woken once fewer than refill (3/4 of the window) populated
	// bytes are left ahead of the writer; it then fills the whole window.
	want := wrote + s.commitLog.warm.refill
	waitUntil(t, "the warmed mark is 3/4 of the window ahead of the writer", func() bool { return f.warmed.Load() >= want })

	from := wrote / pageSize * pageSize
	if in, total := resident(t, f.data[from:want]); in != total {
		t.Errorf("[%d,%d): %d of %d pages in the page cache, want all", from, want, in, total)
	}
	// It does not run past the window.
	if got, limit := f.warmed.Load(), wrote+cfg.WarmAhead; got > limit {
		t.Errorf("warmed mark %d, want at most write position + window = %d", got, limit)
	}
	// Populating reads: the bytes after the write position are still zero.
	for i, b := range f.data[wrote:want] {
		if b != 0 {
			t.Fatalf("byte %d after the write position is %#x, want 0", int64(i)+wrote, b)
		}
	}
}

func TestWarmerFollowsTheWriterAcrossSegments(t *testing.T) {
	s, cfg := openWarm(t, t.TempDir(), 1<<20, 256<<10)
	defer s.Close()

	res := appendKiB(t, s, 3500) // three roll-overs and part of the fourth segment
	checkBodies(t, s, res)
	if n := len(s.commitLog.mfq.snapshot()); n != 4 {
		t.Fatalf("%d segments, want 4", n)
	}
	f := s.commitLog.mfq.last()
	want := min(f.wrotePosition.Load()+s.commitLog.warm.refill, f.size)
	waitUntil(t, "the last segment is warm 3/4 of a window ahead", func() bool { return f.warmed.Load() >= want })

	// The pre-allocated next segment gets its first window before anyone writes it.
	s.commitLog.alloc.mu.Lock()
	al := s.commitLog.alloc.pending
	s.commitLog.alloc.mu.Unlock()
	if al == nil {
		t.Fatal("no pre-allocation pending after the roll-over")
	}
	<-al.done
	if al.mf == nil {
		t.Fatalf("pre-allocation failed: %v", al.err)
	}
	waitUntil(t, "the pre-allocated segment's first window is warm", func() bool { return al.mf.warmed.Load() >= cfg.WarmAhead })
	if in, total := resident(t, al.mf.data[:cfg.WarmAhead]); in != total {
		t.Errorf("pre-allocated segment: %d of %d pages of its first window in the page cache, want all", in, total)
	}
}

func TestWarmAheadOff(t *testing.T) {
	s, _ := openWarm(t, t.TempDir(), 1<<20, -1)
	defer s.Close()
	appendKiB(t, s, 1500)
	if s.commitLog.warm != nil || s.commitLog.alloc.warmAhead != 0 {
		t.Fatalf("WarmAhead -1: warmer %v, allocator window %d; want neither", s.commitLog.warm, s.commitLog.alloc.warmAhead)
	}
	for _, f := range s.commitLog.mfq.snapshot() {
		if w := f.warmed.Load(); w != 0 {
			t.Errorf("segment %s warmed to %d with the warmer off", fileName(f.start), w)
		}
	}
}

// Close stops a warmer in the middle of a large window, and a reopened store
// recovers every message (populating wrote nothing the recovery scan could see).
func TestCloseStopsWarmingAndRecovers(t *testing.T) {
	s, cfg := openWarm(t, t.TempDir(), 64<<20, 64<<20)
	res := appendKiB(t, s, 640)
	end := s.MaxPhysicalOffset()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s = openTest(t, cfg)
	defer s.Close()
	if got := s.MaxPhysicalOffset(); got != end {
		t.Fatalf("reopened CommitLog ends at %d, want %d", got, end)
	}
	if got := s.MaxQueueOffset("WarmTopic", 0); got != 160 {
		t.Errorf("queue 0 holds %d messages after reopening, want 160", got)
	}
	checkBodies(t, s, res)
}
