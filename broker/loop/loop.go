package loop

import (
	"context"
	"time"
)

// Start says whether the body runs once before the first tick.
type Start bool

const (
	// AfterFirstTick waits one interval before the first run.
	AfterFirstTick Start = false
	// AtOnce runs the body immediately, then every interval.
	AtOnce Start = true
)

// Every runs body every interval until ctx ends (and at once first with AtOnce).
// now is time.Now; use EveryWithClock for an injected clock.
func Every(ctx context.Context, interval time.Duration, start Start, body func(now time.Time)) {
	EveryWithClock(ctx, interval, start, time.Now, body)
}

// EveryWithClock is Every with now read from clock at each run.
func EveryWithClock(ctx context.Context, interval time.Duration, start Start, clock func() time.Time, body func(now time.Time)) {
	Drain(ctx, interval, start, func() bool { body(clock()); return false })
}

// Drain is Every for work that comes in batches: while body reports more work
// ready (true), it runs again at once instead of waiting for the next tick.
func Drain(ctx context.Context, interval time.Duration, start Start, body func() (more bool)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	if !start {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	for {
		for body() {
			if ctx.Err() != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
