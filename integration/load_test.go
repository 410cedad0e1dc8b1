package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// sendFailure is one SendSync that returned an error or a non-OK status.
type sendFailure struct {
	at   time.Time
	body string
	err  string
}

// load is a producer loop: SendSync one message at a time until stopped, recording
// which bodies were attempted, which were acknowledged (and when), and every failure.
type load struct {
	stop chan struct{}
	done chan struct{}

	mu        sync.Mutex
	attempted map[string]bool
	acked     map[string]time.Time
	okTimes   []time.Time
	failures  []sendFailure
}

func startLoad(p rocketmq.Producer, topic string, pause time.Duration) *load {
	l := &load{
		stop: make(chan struct{}), done: make(chan struct{}),
		attempted: map[string]bool{}, acked: map[string]time.Time{},
	}
	go func() {
		defer close(l.done)
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				return
			default:
			}
			body := fmt.Sprintf("load-%06d", i)
			l.mu.Lock()
			l.attempted[body] = true
			l.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte(body)))
			cancel()
			now := time.Now()
			failed := false
			l.mu.Lock()
			switch {
			case err != nil:
				l.failures = append(l.failures, sendFailure{at: now, body: body, err: err.Error()})
				failed = true
			case res.Status != primitive.SendOK:
				l.failures = append(l.failures, sendFailure{at: now, body: body, err: fmt.Sprintf("status %v", res.Status)})
				failed = true
			default:
				l.acked[body] = now
				l.okTimes = append(l.okTimes, now)
			}
			l.mu.Unlock()
			if failed {
				// Back off a little: a dead leader refuses connections instantly.
				time.Sleep(10 * pause)
			}
			time.Sleep(pause)
		}
	}()
	return l
}

func (l *load) halt() {
	close(l.stop)
	<-l.done
}

// ackedAfter counts acknowledgements completed after ts.
func (l *load) ackedAfter(ts time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, at := range l.okTimes {
		if at.After(ts) {
			n++
		}
	}
	return n
}

// waitAckedAfter waits until n acknowledgements completed after ts.
func (l *load) waitAckedAfter(ts time.Time, n int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for l.ackedAfter(ts) < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// stats reports the first acknowledgement after ts, the longest silence between
// consecutive acknowledgements, and the failures.
func (l *load) stats(ts time.Time) (firstOK time.Time, longestGap time.Duration, failures []sendFailure) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, at := range l.okTimes {
		if firstOK.IsZero() && at.After(ts) {
			firstOK = at
		}
		if i > 0 {
			longestGap = max(longestGap, at.Sub(l.okTimes[i-1]))
		}
	}
	return firstOK, longestGap, append([]sendFailure(nil), l.failures...)
}

func (l *load) ackedBodies() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.acked))
	for b := range l.acked {
		out = append(out, b)
	}
	return out
}

// verifyDelivered fails unless every acknowledged body was consumed and nothing
// consumed was never sent. Unacknowledged sends may or may not arrive (their outcome
// is unknown) and redeliveries after a failover are allowed (at least once); both
// are logged.
func verifyDelivered(t *testing.T, l *load, col *collector, timeout time.Duration) {
	t.Helper()
	acked := l.ackedBodies()
	deadline := time.Now().Add(timeout)
	var missingNow []string
	for {
		_, got := col.snapshot()
		missingNow = missingNow[:0]
		for _, b := range acked {
			if got[b] == 0 {
				missingNow = append(missingNow, b)
			}
		}
		if len(missingNow) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(missingNow) > 0 {
		t.Errorf("%d of %d acknowledged messages never consumed: %s", len(missingNow), len(acked), summarize(missingNow))
	}
	_, got := col.snapshot()
	l.mu.Lock()
	defer l.mu.Unlock()
	var unknown, dups int
	var stray []string
	for b, n := range got {
		if !l.attempted[b] {
			stray = append(stray, b)
		}
		if _, ok := l.acked[b]; !ok {
			unknown++
		}
		if n > 1 {
			dups++
		}
	}
	if len(stray) > 0 {
		t.Errorf("consumed messages that were never sent: %s", summarize(stray))
	}
	t.Logf("delivery: %d acked, %d consumed distinct, %d consumed but unacked (unknown outcome), %d redelivered",
		len(acked), len(got), unknown, dups)
}
