package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// syncBuffer is a log output the test reads while the store writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// scrubStore writes an entry-log store over many segments whose raft log was
// compacted to its last entries (the floor is near the tail), closes it cleanly and
// returns where a message record of the first segment is.
func scrubStore(t *testing.T, dir string) (early PhysicalOffset) {
	t.Helper()
	s := openTest(t, entryStoreConfig(dir))
	el := s.EntryLog()
	var end PhysicalOffset
	keep := make([]bool, 8)
	for i := range keep {
		keep[i] = true
	}
	for i := uint64(1); i <= 400; i++ {
		if err := el.Append([]LogEntry{msgEntry(t, i, "T", 8, int(i))}); err != nil {
			t.Fatal(err)
		}
		var err error
		if _, end, err = s.ApplyEntry(i, keep, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := el.Sync(); err != nil {
		t.Fatal(err)
	}
	waitDispatched(t, s, end)
	if end < 10*testSegSize {
		t.Fatalf("the test wants at least 10 segments, the log ends at %d", end)
	}
	if err := el.ForgetBefore(390); err != nil {
		t.Fatal(err)
	}
	pos, err := el.Positions(390, nil)
	if err != nil || len(pos) == 0 || pos[0] < end-3*testSegSize {
		t.Fatalf("entry 390 at %v (%v); the test wants it in the last three segments (end %d)", pos, err, end)
	}
	s.MarkApplyCheckpoint(end)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := OpenEntryLog(filepath.Join(dir, commitLogDir), testSegSize, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// A message record of entry 2, in the first segment: below both open scans.
	_, next, release, err := l.cl.recordAt(0) // entry 1's entry record
	if err != nil {
		t.Fatal(err)
	}
	release()
	for off := next; ; {
		rec, nxt, release, err := l.cl.recordAt(off)
		if err != nil {
			t.Fatal(err)
		}
		_, isEntry, _ := entryHeaderOf(rec)
		release()
		if !isEntry {
			return off
		}
		off = nxt
	}
}

// flipAt flips a body byte of the record at off in the store's CommitLog.
func flipAt(t *testing.T, dir string, off PhysicalOffset) {
	t.Helper()
	name := filepath.Join(dir, commitLogDir, fileName(int64(off)/testSegSize*testSegSize))
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	at := int(int64(off) % testSegSize)
	size, _, _ := RecordSize(b[at:])
	b[at+int(size)/2] ^= 0x10
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestScrubFindsCorruptionOpenDidNotCheck(t *testing.T) {
	dir := t.TempDir()
	early := scrubStore(t, dir)
	flipAt(t, dir, early)

	cfg := entryStoreConfig(dir)
	cfg.ScrubRate = 1 << 30
	s := openTest(t, cfg) // open checks neither the first segment nor entry 2
	defer s.Close()
	select {
	case err := <-s.Corrupt():
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), fileName(0)) {
			t.Fatalf("scrub reported %v, want ErrCorrupt naming segment %s", err, fileName(0))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the scrub did not report the flipped bit in the first segment")
	}
}

func TestScrubOfAHealthyStoreFinishesQuietly(t *testing.T) {
	dir := t.TempDir()
	scrubStore(t, dir)
	var out syncBuffer
	cfg := entryStoreConfig(dir)
	cfg.ScrubRate = 1 << 30
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Info})
	s := openTest(t, cfg)
	defer s.Close()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "scrub checked the CommitLog") {
		if time.Now().After(deadline) {
			t.Fatalf("no end of the scrub logged; log:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-s.Corrupt():
		t.Fatalf("scrub of a healthy store reported %v", err)
	default:
	}
	if n := s.ScrubRemaining(); n != 0 {
		t.Fatalf("ScrubRemaining after the scrub finished = %d, want 0", n)
	}
}

// A slow scrub does not hold up Close, and a store opened with ScrubRate < 0 does not
// scrub at all (the flipped bit stays unreported).
func TestScrubStopsAtCloseAndCanBeOff(t *testing.T) {
	dir := t.TempDir()
	early := scrubStore(t, dir)
	var out syncBuffer
	cfg := entryStoreConfig(dir)
	cfg.ScrubRate = 64 << 10 // a segment a second: the whole log takes many seconds
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Info})
	s := openTest(t, cfg)
	time.Sleep(100 * time.Millisecond)
	if n := s.ScrubRemaining(); n < 5*testSegSize {
		t.Fatalf("ScrubRemaining 0.1 s into a scrub at 64 KiB/s = %d, want most of the first segments", n)
	}
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for the scrub")
	}
	if strings.Contains(out.String(), "scrub checked the CommitLog") {
		t.Fatalf("the scrub finished before Close at 64 KiB/s; log:\n%s", out.String())
	}

	flipAt(t, dir, early)
	cfg.ScrubRate = -1
	s = openTest(t, cfg)
	defer s.Close()
	select {
	case err := <-s.Corrupt():
		t.Fatalf("ScrubRate -1 scrubbed: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
}
