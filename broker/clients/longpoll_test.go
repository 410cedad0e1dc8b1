package clients

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

var tqA = store.TopicQueue{Topic: "T", QueueID: 1}

func never() bool { return false }

// fires counts a waiter's fire calls and signals the first.
type fires struct {
	n    atomic.Int32
	once sync.Once
	done chan struct{}
}

func newFires() *fires { return &fires{done: make(chan struct{})} }

func (f *fires) fire() {
	f.n.Add(1)
	f.once.Do(func() { close(f.done) })
}

func (f *fires) wait(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-f.done:
	case <-time.After(within):
		t.Fatalf("the waiter did not fire within %s", within)
	}
}

// A held pull fires when its queue's max offset passes its offset, on the
// notifier's goroutine, and only then.
func TestHoldFiresOnNotifyPastItsOffset(t *testing.T) {
	p := NewPullWaiters()
	f := newFires()
	p.Hold(context.Background(), tqA, 5, time.Minute, never, f.fire)
	p.Notify("T", 1, 5) // nothing at offset 5 yet
	p.Notify("T", 2, 9) // another queue
	p.Notify("U", 1, 9) // another topic
	if f.n.Load() != 0 || p.Count() != 1 {
		t.Fatalf("fired %d times, %d held, before a message at its offset", f.n.Load(), p.Count())
	}
	p.Notify("T", 1, 6)
	if f.n.Load() != 1 {
		t.Fatalf("fired %d times on the notify past its offset, want 1 (on the notifier's goroutine)", f.n.Load())
	}
	p.Notify("T", 1, 7)
	if f.n.Load() != 1 || p.Count() != 0 {
		t.Fatalf("fired %d times, %d held, after a second notify", f.n.Load(), p.Count())
	}
}

func TestHoldFiresOnTimeout(t *testing.T) {
	p := NewPullWaiters()
	f := newFires()
	start := time.Now()
	p.Hold(context.Background(), tqA, 0, 50*time.Millisecond, never, f.fire)
	f.wait(t, 5*time.Second)
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Fatalf("fired after %s, before its 50ms timeout", waited)
	}
	if p.Count() != 0 {
		t.Fatalf("%d held after the timeout", p.Count())
	}
	p.Notify("T", 1, 10)
	if f.n.Load() != 1 {
		t.Fatalf("fired %d times", f.n.Load())
	}
}

// The connection closing (its context) fires the waiter at once, so that a
// server's Close does not wait for a held pull's timeout.
func TestHoldFiresWhenItsContextEnds(t *testing.T) {
	p := NewPullWaiters()
	f := newFires()
	ctx, cancel := context.WithCancel(context.Background())
	p.Hold(ctx, tqA, 0, time.Hour, never, f.fire)
	cancel()
	f.wait(t, 5*time.Second)
	if p.Count() != 0 {
		t.Fatalf("%d held after the context ended", p.Count())
	}
}

// A message dispatched between the pull's read and its registration is not
// missed: Hold fires at once, before it returns.
func TestHoldFiresAtOnceWhenAMessageCameMeanwhile(t *testing.T) {
	p := NewPullWaiters()
	f := newFires()
	p.Hold(context.Background(), tqA, 0, time.Hour, func() bool { return true }, f.fire)
	if f.n.Load() != 1 || p.Count() != 0 {
		t.Fatalf("fired %d times, %d held", f.n.Load(), p.Count())
	}
}

// Notifies, timeouts and cancellations racing each other fire every waiter
// exactly once and leave none registered.
func TestHoldFiresExactlyOnceUnderRaces(t *testing.T) {
	p := NewPullWaiters()
	const n = 2000
	all := make([]*fires, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	var notifier sync.WaitGroup
	notifier.Add(1)
	go func() {
		defer notifier.Done()
		for off := store.QueueOffset(1); ; off++ {
			select {
			case <-stop:
				return
			default:
			}
			p.Notify("T", 1, off%50)
		}
	}()
	for i := range all {
		all[i] = newFires()
		timeout := time.Duration(i%7) * 100 * time.Microsecond
		p.Hold(ctx, tqA, store.QueueOffset(i%40), timeout, never, all[i].fire)
		if i == n/2 {
			cancel()
		}
	}
	for _, f := range all {
		f.wait(t, 10*time.Second)
	}
	close(stop)
	notifier.Wait()
	time.Sleep(10 * time.Millisecond) // timers and AfterFuncs of fired waiters may still run
	for i, f := range all {
		if got := f.n.Load(); got != 1 {
			t.Fatalf("waiter %d fired %d times", i, got)
		}
	}
	if c := p.Count(); c != 0 {
		t.Fatalf("%d waiters still registered", c)
	}
}

// Wait blocks until the waiter fires.
func TestWaitReturnsOnNotify(t *testing.T) {
	p := NewPullWaiters()
	done := make(chan struct{})
	go func() {
		p.Wait(context.Background(), tqA, 3, time.Hour, never)
		close(done)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for p.Count() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	select {
	case <-done:
		t.Fatal("Wait returned before a notify")
	default:
	}
	p.Notify("T", 1, 4)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return after the notify")
	}
}

// Notify fires the first notifyInline due waiters of a queue itself and the
// others on goroutines: a slow one among many groups' pulls of one queue does
// not hold up the store's dispatch goroutine.
func TestNotifyHandsManyWaitersToGoroutines(t *testing.T) {
	p := NewPullWaiters()
	release := make(chan struct{})
	var fired atomic.Int32
	for i := range notifyInline + 3 {
		fire := func() { fired.Add(1) }
		if i >= notifyInline {
			fire = func() { <-release; fired.Add(1) }
		}
		p.Hold(context.Background(), tqA, 0, time.Hour, never, fire)
	}
	returned := make(chan struct{})
	go func() {
		p.Notify("T", 1, 1)
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("Notify waited for waiters past the first notifyInline")
	}
	if got := fired.Load(); got != notifyInline {
		t.Fatalf("%d fired when Notify returned, want the first %d", got, notifyInline)
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for fired.Load() != notifyInline+3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := fired.Load(); got != notifyInline+3 {
		t.Fatalf("%d of %d fired", got, notifyInline+3)
	}
}
