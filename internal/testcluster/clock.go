package testcluster

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker/node"
)

// Clocks gives every node of a group its own wall clock, each the real time
// plus an offset the test can jump (chaos C1–C5, docs/reliability.md "Clock
// jumps"). Plug Configure into Options.Configure: it sets node.Config.Now,
// the node's one injected wall clock (store timestamps, delay due times,
// transaction ages, retention, everything the broker reads from replica.Now).
//
// A reading carries no monotonic clock (time.Round(0)): a real step of the
// wall clock (settimeofday, an NTP step) leaves CLOCK_MONOTONIC alone, and Go
// cannot build a time whose wall reading moved while its monotonic one did
// not, so the readings are wall-only and every comparison between two of them
// sees the jump. That is the strict model: code that measures an interval with
// Now fails here even where, in production, time.Now's hidden monotonic
// reading would have saved it. Intervals on one node belong on the monotonic
// clock (broker.Config.Monotonic, raft's own timers), which Clocks does not
// touch.
//
// Safe for concurrent use: nodes read their clock on every goroutine while the
// test goroutine jumps it.
type Clocks struct {
	next func(*node.Config)

	mu      sync.Mutex
	offsets map[raft.ServerID]time.Duration
}

// NewClocks returns clocks at offset 0 for every node; next, when set, is the
// Configure to chain after setting the clock (for example Faults.Configure).
func NewClocks(next func(*node.Config)) *Clocks {
	return &Clocks{next: next, offsets: map[raft.ServerID]time.Duration{}}
}

// Configure is an Options.Configure: it gives cfg's node its jumpable clock.
func (c *Clocks) Configure(cfg *node.Config) {
	id := cfg.ID
	cfg.Now = func() time.Time { return c.Now(id) }
	if c.next != nil {
		c.next(cfg)
	}
}

// Now is id's wall clock: the real time plus id's offset, wall reading only.
func (c *Clocks) Now(id raft.ServerID) time.Time {
	return time.Now().Round(0).Add(c.Offset(id))
}

// Offset is how far id's clock is from the real time.
func (c *Clocks) Offset(id raft.ServerID) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offsets[id]
}

// Jump moves id's clock by d (negative: backward) at once, as a step of the
// system clock does, and returns its new offset.
func (c *Clocks) Jump(id raft.ServerID, d time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offsets[id] += d
	return c.offsets[id]
}

// Reset puts every clock back on the real time.
func (c *Clocks) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.offsets)
}
