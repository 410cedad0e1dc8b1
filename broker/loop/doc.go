// Package loop runs the broker's periodic work: the one ticker helper every
// background loop of broker and its leader-only services uses, so each loop is
// just its body and its interval.
//
//	go loop.Every(ctx, time.Second, loop.AtOnce, func(now time.Time) { b.checkDisk(now) })
//
// The body runs on the calling goroutine; now comes from the clock passed in
// Options (the broker's injected clock), not from the ticker.
package loop
