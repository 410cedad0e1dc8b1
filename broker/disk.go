package broker

import (
	"fmt"
	"time"

	"github.com/rocketraft/rocketraft/broker/route"
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

// raftLogSegmentReserve is what the raft log may claim at once: raft-wal creates
// its 64 MiB segment files whole, and a node whose raft log cannot append loses the
// group its quorum (chaos D5 flat-out: "segment is sealed" until restart).
const raftLogSegmentReserve = 2 * 64 << 20

// monoSinceStart is the time since New on the monotonic clock.
func (b *Broker) monoSinceStart() time.Duration { return b.cfg.Monotonic().Sub(b.monoBase) }

func (b *Broker) checkDisk(time.Time) {
	b.diskCheckedAt.Store(int64(b.monoSinceStart()))
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

// diskReserve is the free space below which sends are refused even under
// diskFullRatio: the next raft log segments and the next CommitLog segment
// (created whole, ahead of need) must always fit.
func (b *Broker) diskReserve() uint64 {
	return uint64(raftLogSegmentReserve + b.store.SegmentSize())
}

// errDiskFull is the answer to sends while the disk is above diskFullRatio.
func (b *Broker) errDiskFull() error {
	// Spaced on the monotonic clock: with the wall clock a backward jump would
	// stop the send path's re-checks until the clock caught up (chaos C-series).
	if b.monoSinceStart()-time.Duration(b.diskCheckedAt.Load()) > diskCheckInterval {
		b.checkDisk(time.Time{})
	}
	if !b.diskFull.Load() {
		return nil
	}
	return fmt.Errorf("%w: disk of %s is full: more than %.0f%% used or less than %d MiB free",
		route.ErrDiskFull, b.cfg.SelfID, diskFullRatio*100, b.diskReserve()>>20)
}
