package bench

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"
)

// clientShutdownLimit bounds how long a bench run waits for the Go client's
// Shutdown once its result is written. The push consumer's Shutdown persists
// offsets and unregisters from every broker; after a failover one of those
// calls has been seen to never return, which left `bench consume` (and the
// harness waiting on it) idle for minutes after its summary was out.
const clientShutdownLimit = 20 * time.Second

// shutdownWithin runs shutdown and waits at most limit for it. If it does not
// return in time it writes what it was waiting for, and every goroutine's
// stack, to w (so the hang can be diagnosed), and returns an error; the caller's
// result is already out by then.
func shutdownWithin(what string, limit time.Duration, w io.Writer, shutdown func() error) error {
	done := make(chan error, 1)
	go func() { done <- shutdown() }()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	}
	fmt.Fprintf(w, "bench: %s shutdown did not return within %s; giving up on it. Goroutines:\n", what, limit)
	_ = pprof.Lookup("goroutine").WriteTo(w, 2)
	return fmt.Errorf("%s shutdown did not return within %s", what, limit)
}

// shutdownClient is shutdownWithin with the bench's limit, reporting to stderr.
func shutdownClient(what string, shutdown func() error) error {
	return shutdownWithin(what, clientShutdownLimit, os.Stderr, shutdown)
}
