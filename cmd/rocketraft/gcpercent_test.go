package main

import (
	"runtime/debug"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// The broker raises its GC target to brokerGCPercent unless GOGC names one.
func TestBrokerGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })

	t.Setenv("GOGC", "")
	setBrokerGCPercent(hclog.NewNullLogger())
	if got := debug.SetGCPercent(100); got != brokerGCPercent {
		t.Fatalf("GOGC unset: GC percent %d, want %d", got, brokerGCPercent)
	}

	t.Setenv("GOGC", "50")
	setBrokerGCPercent(hclog.NewNullLogger())
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC=50 set: the broker changed the GC percent to %d", got)
	}
}
