package store

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

func TestFlushSyncIsDurableOnReturn(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.FlushMode = FlushSync
	s := openTest(t, cfg)
	defer s.Close()
	for i := range 5 {
		mustAppend(t, s, testBatch(t, "T", 2, 20, 900, i*20), int64(i))
		if s.FlushedPhysicalOffset() != s.MaxPhysicalOffset() {
			t.Fatalf("sync flush: flushed %d, max %d", s.FlushedPhysicalOffset(), s.MaxPhysicalOffset())
		}
	}
}

func TestFlushAsync(t *testing.T) {
	// With no tick during the test, appends stay unflushed until Flush.
	s := openTest(t, testConfig(t.TempDir()))
	mustAppend(t, s, testBatch(t, "T", 2, 20, 900, 0), 1)
	if s.FlushedPhysicalOffset() >= s.MaxPhysicalOffset() {
		t.Fatalf("async: flushed %d already at max %d", s.FlushedPhysicalOffset(), s.MaxPhysicalOffset())
	}
	got, err := s.Flush()
	if err != nil || got != s.MaxPhysicalOffset() || s.FlushedPhysicalOffset() != got {
		t.Fatalf("Flush = %d, %v; max %d", got, err, s.MaxPhysicalOffset())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Flush(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Flush after Close: %v", err)
	}

	// With a short interval the background flusher catches up and checkpoints.
	cfg := testConfig(t.TempDir())
	cfg.FlushInterval = 5 * time.Millisecond
	s = openTest(t, cfg)
	defer s.Close()
	mustAppend(t, s, testBatch(t, "T", 2, 100, 900, 0), 1) // crosses segments
	deadline := time.Now().Add(10 * time.Second)
	for {
		ck, ok, err := readCheckpoint(cfg.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if ok && ck.commitLogFlushed == s.MaxPhysicalOffset() && s.FlushedPhysicalOffset() == s.MaxPhysicalOffset() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("background flush did not reach max %d (flushed %d, checkpoint %+v)", s.MaxPhysicalOffset(), s.FlushedPhysicalOffset(), ck)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestReadRangeResetFromRoundTrip(t *testing.T) {
	dirA := t.TempDir()
	a := openTest(t, testConfig(dirA))
	fed := time.UnixMilli(1700000000000) // feed's store timestamps
	mustAppend(t, a, testBatch(t, "T", 1, 65, 1000, 0), fed.Add(-100*time.Hour).UnixMilli())
	feed(t, a, 20)
	// Retention keeps segments the reput has not dispatched yet; let it finish.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.WaitDispatched(ctx, a.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	// Disk pressure at any hour: only the first segment has expired.
	if n, err := a.CleanExpired(fed.Add(time.Hour), 0.99); err != nil || n != 1 {
		t.Fatalf("retention on A: %d %v", n, err)
	}
	from, to := a.MinPhysicalOffset(), a.MaxPhysicalOffset()
	if from != testSegSize {
		t.Fatalf("A min %d", from)
	}
	var image bytes.Buffer
	chunks := 0
	if err := a.ReadRange(from, to, func(c []byte) error { chunks++; image.Write(c); return nil }); err != nil {
		t.Fatal(err)
	}
	if image.Len() != int(to-from) || chunks < 2 {
		t.Fatalf("image %d bytes in %d chunks, want %d", image.Len(), chunks, to-from)
	}
	if err := a.ReadRange(from-1, to, func([]byte) error { return nil }); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("range below min: %v", err)
	}

	// B has unrelated data; the reset replaces it.
	dirB := t.TempDir()
	b := openTest(t, testConfig(dirB))
	mustAppend(t, b, testBatch(t, "other", 3, 50, 500, 7), 1)
	if err := b.ResetFrom(from+1, bytes.NewReader(image.Bytes())); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("unaligned reset: %v", err)
	}
	if err := b.ResetFrom(from, bytes.NewReader(image.Bytes())); err != nil {
		t.Fatal(err)
	}
	if b.MinPhysicalOffset() != from || b.MaxPhysicalOffset() != to {
		t.Fatalf("B [%d,%d), want [%d,%d)", b.MinPhysicalOffset(), b.MaxPhysicalOffset(), from, to)
	}
	if got := b.MaxQueueOffset("other", 0); got != 0 {
		t.Fatalf("old queue survived the reset: max %d", got)
	}
	// Dispatch runs in the background: compare the queues only once both stores
	// have indexed everything they hold.
	for _, st := range []*Store{a, b} {
		if err := st.WaitDispatched(ctx, st.MaxPhysicalOffset()); err != nil {
			t.Fatal(err)
		}
	}
	for q := int32(0); q < 4; q++ {
		for _, topic := range []string{"topic-0", "topic-1", "topic-2"} {
			if a.MaxQueueOffset(topic, q) != b.MaxQueueOffset(topic, q) || a.MinQueueOffset(topic, q) != b.MinQueueOffset(topic, q) {
				t.Fatalf("%s/%d: A [%d,%d) B [%d,%d)", topic, q, a.MinQueueOffset(topic, q), a.MaxQueueOffset(topic, q), b.MinQueueOffset(topic, q), b.MaxQueueOffset(topic, q))
			}
		}
	}
	// Both continue identically.
	ra, rb := feed(t, a, 3), feed(t, b, 3)
	for i := range ra {
		if ra[i] != rb[i] {
			t.Fatalf("append %d after reset: A %+v B %+v", i, ra[i], rb[i])
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	sameSegments(t, segmentFiles(t, dirA), segmentFiles(t, dirB))

	// A damaged image is refused.
	c := openTest(t, testConfig(t.TempDir()))
	defer c.Close()
	bad := bytes.Clone(image.Bytes())
	bad[len(bad)-30] ^= 0xFF
	if err := c.ResetFrom(from, bytes.NewReader(bad)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged image: %v", err)
	}
}

func TestFlushObserverSeesEveryFlush(t *testing.T) {
	s := openTest(t, testConfig(t.TempDir()))
	defer s.Close()
	var calls []time.Duration
	s.SetFlushObserver(func(d time.Duration) { calls = append(calls, d) })
	mustAppend(t, s, testBatch(t, "T", 1, 3, 100, 0), 1)
	if _, err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0] <= 0 {
		t.Fatalf("observer calls %v, want one positive duration", calls)
	}
}
