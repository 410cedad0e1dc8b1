package loop

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestEveryAtOnceRunsBeforeTheFirstTick(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan time.Time, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Hour, AtOnce, func(now time.Time) {
			select {
			case ran <- now:
			default:
			}
		})
	}()
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("AtOnce body did not run before the first (hour-long) tick")
	}
	cancel()
	<-done
}

func TestAfterFirstTickWaitsAndStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var runs atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Hour, AfterFirstTick, func(time.Time) { runs.Add(1) })
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("loop did not stop on cancel")
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("body ran %d times before its first tick", n)
	}
}

func TestDrainRepeatsWhileMoreAndUsesTheClock(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runs atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		Drain(ctx, time.Hour, AtOnce, func() bool {
			n := runs.Add(1)
			if n == 3 {
				cancel()
			}
			return n < 5
		})
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Drain did not stop")
	}
	if n := runs.Load(); n != 3 {
		t.Fatalf("body ran %d times, want 3 (two repeats without a tick, then cancel)", n)
	}

	fixed := time.Unix(1700000000, 0)
	got := make(chan time.Time, 1)
	ctx2, cancel2 := context.WithCancel(context.Background())
	go EveryWithClock(ctx2, time.Hour, AtOnce, func() time.Time { return fixed }, func(now time.Time) { got <- now; cancel2() })
	if now := <-got; !now.Equal(fixed) {
		t.Fatalf("body got now=%v, want the injected clock's %v", now, fixed)
	}
}
