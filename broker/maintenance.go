package broker

import (
	"context"
	"fmt"
	"time"
)

// diskFullRatio is the disk usage at which the leader stops accepting messages
// (Java's diskSpaceWarningLevelRatio default, 90 %): past it a committed entry
// might not fit on a replica's disk, and a replica that cannot apply a committed
// entry must stop. Producers get SERVICE_NOT_AVAILABLE until retention or the
// operator frees space.
const diskFullRatio = 0.90

// diskCheckInterval bounds how stale the disk-full flag may be: sends re-check
// when it is older (one statfs per interval, not per send), and a background loop
// keeps it fresh while nobody sends. Chaos D5 showed a once-a-second check is
// outrun by producers writing tens of MB/s into a small disk.
const diskCheckInterval = 100 * time.Millisecond

// diskCheckLoop refreshes the disk-full flag in the background.
func (b *Broker) diskCheckLoop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		b.checkDisk(time.Now())
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (b *Broker) checkDisk(now time.Time) {
	b.diskCheckedAt.Store(now.UnixNano())
	ratio, err := b.diskUsedRatio()
	if err != nil {
		return
	}
	free, ferr := b.diskFreeBytes()
	reserve := b.diskReserve()
	full := ratio >= diskFullRatio || (ferr == nil && free < reserve)
	if b.diskFull.Swap(full) != full {
		if full {
			b.log.Error("disk almost full: refusing new messages", "usedRatio", ratio, "limit", diskFullRatio,
				"freeBytes", free, "reserveBytes", reserve)
		} else {
			b.log.Info("disk space recovered: accepting messages again", "usedRatio", ratio, "freeBytes", free)
		}
	}
}

// raftLogSegmentReserve is what the raft log may claim at once: raft-wal creates
// its 64 MiB segment files whole, and a node whose raft log cannot append loses the
// group its quorum (chaos D5 flat-out: "segment is sealed" until restart).
const raftLogSegmentReserve = 2 * 64 << 20

// diskReserve is the free space below which sends are refused even under
// diskFullRatio: the next raft log segments and the next CommitLog segment (created
// whole, ahead of need) must always fit.
func (b *Broker) diskReserve() uint64 {
	return uint64(raftLogSegmentReserve + b.store.SegmentSize())
}

// errDiskFull is the answer to sends while the disk is above diskFullRatio.
func (b *Broker) errDiskFull() error {
	if now := time.Now(); now.UnixNano()-b.diskCheckedAt.Load() > int64(diskCheckInterval) {
		b.checkDisk(now)
	}
	if !b.diskFull.Load() {
		return nil
	}
	return fmt.Errorf("%w: disk of %s is full: more than %.0f%% used or less than %d MiB free",
		ErrDiskFull, b.cfg.SelfID, diskFullRatio*100, b.diskReserve()>>20)
}

// retentionLoop applies the store's retention policy (fileReservedTime at the
// deleteWhen hour, or at once above diskMaxUsedSpaceRatio) every RetentionInterval.
// Every node runs it on its own files; the decision uses the messages' store
// timestamps, so replicas keep the same segments unless their disks differ.
func (b *Broker) retentionLoop() {
	t := time.NewTicker(b.cfg.RetentionInterval)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case now := <-t.C:
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
	}
}

// preferredLeaderLoop hands leadership to preferredLeaderId whenever this node
// leads instead of it. raft refuses the transfer while the target is behind or
// down, so the loop simply tries again next time.
func (b *Broker) preferredLeaderLoop() {
	if b.cfg.PreferredLeaderID == "" || b.cfg.PreferredLeaderID == b.cfg.SelfID {
		return
	}
	t := time.NewTicker(b.cfg.PreferredLeaderCheck)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
			if !b.isLeader() {
				continue
			}
			ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
			err := b.replica.TransferLeadership(ctx, b.cfg.PreferredLeaderID)
			cancel()
			if err != nil {
				b.log.Debug("transfer to preferred leader not possible yet", "preferred", b.cfg.PreferredLeaderID, "error", err)
			} else {
				b.log.Info("leadership handed to the preferred leader", "preferred", b.cfg.PreferredLeaderID)
			}
		}
	}
}

// handOffLeadership transfers leadership before a clean shutdown, so the group
// has a new leader in milliseconds instead of after an election timeout.
func (b *Broker) handOffLeadership() {
	if !b.isLeader() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := b.replica.TransferLeadership(ctx, ""); err != nil {
		b.log.Warn("leadership hand-off before shutdown failed; the group will elect after the election timeout", "error", err)
		return
	}
	b.log.Info("leadership handed off before shutdown")
}
