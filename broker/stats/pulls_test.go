package stats

import (
	"testing"
	"time"
)

// TestPullOffsetsAndGroupTps: the last next offset per (group, topic, queue)
// wins; the table stops admitting new queues when full but keeps updating
// the ones it has; the group's get TPS is its minute view of GROUP_GET_NUMS.
func TestPullOffsetsAndGroupTps(t *testing.T) {
	s := New("c", t0)
	if _, ok := s.PullOffset("g", "T", 0); ok {
		t.Fatal("an offset before any pull")
	}
	s.ObservePullOffset("g", "T", 0, 4)
	s.ObservePullOffset("g", "T", 0, 9)
	if off, ok := s.PullOffset("g", "T", 0); !ok || off != 9 {
		t.Errorf("after 4 then 9: %d %v", off, ok)
	}
	if _, ok := s.PullOffset("g", "T", 1); ok {
		t.Error("queue 1 was never pulled")
	}
	for q := range int32(maxPullOffsets) {
		s.ObservePullOffset("full", "T", q, 1)
	}
	if _, ok := s.PullOffset("late", "T", 0); ok {
		t.Error("admitted past maxPullOffsets")
	}
	s.ObservePullOffset("g", "T", 0, 11)
	if off, _ := s.PullOffset("g", "T", 0); off != 11 {
		t.Errorf("a known queue stopped updating when the table filled: %d", off)
	}

	now := t0
	for range 30 {
		now = now.Add(time.Second)
		s.ObserveGet(now, "g", "T", 2, 20)
		s.Tick(now)
	}
	// 60 messages since the minute view's first sample, 10 s before the item
	// was created at the first get (t0+1 s): 39 s.
	if got := s.GroupGetTPS("g", "T", now); got != 60.0/39 {
		t.Errorf("GroupGetTPS %v, want %v", got, 60.0/39)
	}
	if got := s.GroupGetTPS("g", "Other", now); got != 0 {
		t.Errorf("a topic the group never pulled: %v", got)
	}
}
