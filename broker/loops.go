package broker

import (
	"context"
	"time"

	"github.com/rocketraft/rocketraft/broker/loop"
)

// offsetFlushTimeout bounds one replication of the pending consumer offsets;
// what fails stays pending for the next flush.
const offsetFlushTimeout = 5 * time.Second

// every runs body on the loop helper with the leader's clock until Close.
func (b *Broker) every(interval time.Duration, start loop.Start, body func(now time.Time)) {
	b.goLoop(func() { loop.EveryWithClock(b.ctx, interval, start, b.replica.Now, body) })
}

// startLoops starts the broker's periodic work.
func (b *Broker) startLoops() {
	// Registration at start, every RegisterInterval, on role and topic
	// changes, and soon after a failure (register.go).
	b.goLoop(b.registerLoop)
	b.every(b.cfg.OffsetFlushInterval, loop.AfterFirstTick, func(time.Time) {
		if !b.isLeader() {
			return
		}
		ctx, cancel := context.WithTimeout(b.ctx, offsetFlushTimeout)
		defer cancel()
		if err := b.offsets.Flush(ctx); err != nil {
			b.log.Warn("consumer offset flush failed", "error", err)
		}
	})
	b.every(clientExpiryScan, loop.AfterFirstTick, func(time.Time) {
		// Idle time is measured on the monotonic clock, as the heartbeats were
		// recorded (clientapi): a wall-clock jump must not drop live clients.
		for _, g := range b.clients.ExpireBefore(b.cfg.Monotonic().Add(-clientIdleTimeout)) {
			b.clients.NotifyConsumerIDsChanged(g)
		}
	})
	b.every(b.cfg.RetentionInterval, loop.AfterFirstTick, b.applyRetention)
	b.every(diskCheckRefresh, loop.AtOnce, b.checkDisk)
	b.every(statsTick, loop.AfterFirstTick, b.stats.Tick)
	if p := b.cfg.PreferredLeaderID; p != "" && p != b.cfg.SelfID {
		b.every(b.cfg.PreferredLeaderCheck, loop.AfterFirstTick, func(time.Time) { b.moveToPreferredLeader() })
	}
}

// applyRetention applies the store's retention policy (fileReservedTime at the
// deleteWhen hour, or at once above diskMaxUsedSpaceRatio). Every node runs it on
// its own files; the decision uses the messages' store timestamps, so replicas
// keep the same segments unless their disks differ.
func (b *Broker) applyRetention(now time.Time) {
	ratio, err := b.store.DiskUsedRatio()
	if err != nil {
		b.log.Warn("disk usage unknown; time-based retention only", "error", err)
		ratio = 0
	}
	n, err := b.store.CleanExpired(now, ratio)
	if err != nil {
		b.log.Warn("retention failed", "error", err)
	} else if n > 0 {
		b.log.Info("retention deleted CommitLog segments", "segments", n, "diskUsedRatio", ratio,
			"minOffset", b.store.MinPhysicalOffset())
	}
}

// moveToPreferredLeader hands leadership to preferredLeaderId when this node
// leads instead of it. raft refuses the transfer while the target is behind or
// down, so the loop simply tries again next time.
func (b *Broker) moveToPreferredLeader() {
	if !b.isLeader() {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, preferredTransferTimeout)
	defer cancel()
	if err := b.transferLeadership(ctx, b.cfg.PreferredLeaderID); err != nil {
		b.log.Debug("transfer to preferred leader not possible yet", "preferred", b.cfg.PreferredLeaderID, "error", err)
	} else {
		b.log.Info("leadership handed to the preferred leader", "preferred", b.cfg.PreferredLeaderID)
	}
}
