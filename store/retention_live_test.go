package store

import (
	"testing"
	"time"
)

// TestSetRetentionAppliesToTheNextRun: an hour that is not deleteWhen deletes
// nothing until SetRetention makes it one, and then fileReservedTime decides
// which segments are expired; bad values are refused and change nothing.
func TestSetRetentionAppliesToTheNextRun(t *testing.T) {
	s := openTest(t, testConfig(t.TempDir()))
	defer s.Close()
	base := time.Date(2025, 3, 10, 4, 0, 0, 0, time.UTC)
	for i, ts := range []time.Time{base.Add(-100 * time.Hour), base.Add(-99 * time.Hour), base.Add(-time.Hour), base} {
		mustAppend(t, s, testBatch(t, "T", 1, 65, 1000, i*100), ts.UnixMilli())
	}
	if err := s.WaitDispatched(t.Context(), s.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	at := base.Add(3 * time.Hour) // 07:00, not the default 04
	if n, err := s.CleanExpired(at, 0.1); err != nil || n != 0 {
		t.Fatalf("before the change: deleted %d err %v", n, err)
	}
	for _, bad := range []struct {
		reserved time.Duration
		hours    []int
		ratio    float64
	}{{0, []int{7}, 0.75}, {time.Hour, nil, 0.75}, {time.Hour, []int{24}, 0.75}, {time.Hour, []int{7}, 1.5}} {
		if err := s.SetRetention(bad.reserved, bad.hours, bad.ratio); err == nil {
			t.Errorf("SetRetention(%v, %v, %v) accepted", bad.reserved, bad.hours, bad.ratio)
		}
	}
	if n, err := s.CleanExpired(at, 0.1); err != nil || n != 0 {
		t.Fatalf("a refused change took effect: deleted %d err %v", n, err)
	}
	if err := s.SetRetention(50*time.Hour, []int{7, 19}, 0.75); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CleanExpired(at, 0.1); err != nil || n != 2 {
		t.Fatalf("after the change: deleted %d err %v, want the two segments older than 50 h", n, err)
	}
	if s.MinPhysicalOffset() != 2*testSegSize {
		t.Fatalf("min %d, want %d", s.MinPhysicalOffset(), 2*testSegSize)
	}
}

func TestDiskTotalBytes(t *testing.T) {
	s := openTest(t, testConfig(t.TempDir()))
	defer s.Close()
	total, err := s.DiskTotalBytes()
	if err != nil {
		t.Fatal(err)
	}
	free, err := s.DiskFreeBytes()
	if err != nil || total == 0 || free > total {
		t.Fatalf("total %d free %d err %v", total, free, err)
	}
}
