package chaos

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestWaitDeliveredGivesUpOnlyOnAStall: WaitDelivered keeps waiting while a
// group receives messages it was missing, gives up once it has received none
// of them for the stall time (redeliveries of what it had do not count), and
// never waits past its context.
func TestWaitDeliveredGivesUpOnlyOnAStall(t *testing.T) {
	const stall = 300 * time.Millisecond
	setup := func() (*History, *Consumers) {
		h, _ := cleanFixture() // acked: a..d on q0, e on q1
		h.AddGroup(ConsumerGroup{Name: "cc", Topic: "T", Kind: Concurrent})
		return h, &Consumers{h: h}
	}
	deliver := func(h *History, id string) {
		h.AddDelivery(Delivery{Group: "cc", Consumer: "c0", Queue: q0, ID: id, Start: time.Now(), End: time.Now()})
	}
	// feed delivers ids one per interval in the background.
	feed := func(h *History, interval time.Duration, ids ...string) {
		go func() {
			for _, id := range ids {
				time.Sleep(interval)
				deliver(h, id)
			}
		}()
	}

	t.Run("a steady drain longer than the stall time completes", func(t *testing.T) {
		h, cs := setup()
		feed(h, 120*time.Millisecond, "a", "b", "c", "d", "e") // 600 ms in all, 2× the stall
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		if err := cs.WaitDelivered(ctx, stall); err != nil {
			t.Fatalf("gave up on a group that kept receiving: %v", err)
		}
		if took := time.Since(start); took < 500*time.Millisecond {
			t.Fatalf("returned after %v, before the last message was delivered", took)
		}
	})

	t.Run("a stalled group is given up after the stall time", func(t *testing.T) {
		h, cs := setup()
		deliver(h, "a")
		deliver(h, "b")
		// Only redeliveries of what it had from now on, for 2 s: not progress,
		// so the wait must end long before they do.
		var again []string
		for range 20 {
			again = append(again, "a", "b")
		}
		feed(h, 50*time.Millisecond, again...)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		err := cs.WaitDelivered(ctx, stall)
		took := time.Since(start)
		if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "[cc] delivered none of them") {
			t.Fatalf("want a stall error naming cc, got %v", err)
		}
		if !strings.Contains(err.Error(), "map[cc:3]") {
			t.Errorf("want the 3 missing messages counted, got %v", err)
		}
		if took < stall || took > 1500*time.Millisecond {
			t.Errorf("gave up after %v, want about the stall time %v", took, stall)
		}
	})

	t.Run("the context bounds a drain that never stalls long enough", func(t *testing.T) {
		h, cs := setup()
		feed(h, 100*time.Millisecond, "a", "b", "c", "d") // e never comes, but progress lasts 400 ms
		ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
		defer cancel()
		if err := cs.WaitDelivered(ctx, 10*time.Second); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("want the context's deadline, got %v", err)
		}
	})
}
