package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestShutdownWithinGivesUpOnAHungShutdownAndDumpsGoroutines(t *testing.T) {
	var w bytes.Buffer
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	err := shutdownWithin("consumer", 50*time.Millisecond, &w, func() error { <-release; return nil })
	if err == nil || !strings.Contains(err.Error(), "consumer shutdown did not return within 50ms") {
		t.Fatalf("err = %v, want the hung shutdown named", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("waited %s for a 50ms limit", waited)
	}
	// The dump names the goroutine stuck in the shutdown func.
	if out := w.String(); !strings.Contains(out, "goroutine ") || !strings.Contains(out, "TestShutdownWithinGivesUpOnAHungShutdown") {
		t.Fatalf("no goroutine dump of the hung shutdown:\n%.2000s", out)
	}
}

func TestShutdownWithinReturnsTheShutdownsOwnResult(t *testing.T) {
	var w bytes.Buffer
	want := errors.New("unregister failed")
	if err := shutdownWithin("producer", time.Minute, &w, func() error { return want }); !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	if err := shutdownWithin("producer", time.Minute, &w, func() error { return nil }); err != nil {
		t.Fatalf("err = %v", err)
	}
	if w.Len() != 0 {
		t.Fatalf("wrote %q for a shutdown that returned", w.String())
	}
}
