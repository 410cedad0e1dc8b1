package route

import (
	"testing"
	"time"
)

// TestRequestTimingIsReadOnce: the stages that time a request share one
// start and one answer reading, so the outer stage's time is the inner's.
func TestRequestTimingIsReadOnce(t *testing.T) {
	var r Request
	start := r.Started()
	time.Sleep(2 * time.Millisecond)
	if again := r.Started(); !again.Equal(start) {
		t.Fatalf("Started moved from %v to %v", start, again)
	}
	first := r.Elapsed()
	if first < 2*time.Millisecond {
		t.Fatalf("Elapsed = %v, want at least the 2ms slept", first)
	}
	time.Sleep(2 * time.Millisecond)
	if second := r.Elapsed(); second != first {
		t.Fatalf("Elapsed read the clock again: %v then %v", first, second)
	}
}
