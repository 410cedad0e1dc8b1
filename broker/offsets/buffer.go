package offsets

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

type key struct {
	group, topic string
	queueID      int32
}

// ResetHold is how long after an operator's reset the leader ignores the
// group's commits of the reset queues, unless a pull from the reset offset
// or a commit of it ends it sooner. A push consumer told to reset (RESET_CONSUMER_CLIENT_OFFSET)
// stops, waits 10 s, then commits the reset offset and pulls from it (the Go
// and the Java client alike); until then its periodic commits, and the
// commits carried by pulls already in flight, still hold its old offset, and
// taking one would undo the reset: chaos scenario O1 saw the committed offset
// go back up to the old one within a second of every reset, and a client that
// resumed from such a commit skipped everything the reset had put back.
const ResetHold = 20 * time.Second

// resetCommitGrace is how long the hold lasts after the group commits the
// reset offset itself: that is the client done with its pause (it commits
// the reset point, then resumes from it), and a follower relays it to the
// leader where a pull served by the follower never arrives. Its old offset,
// committed just before by the periodic commit, may still be on its way
// (requests are served concurrently, relays in the background): a second
// covers that.
const resetCommitGrace = time.Second

// Buffer coalesces consumer offset commits on the leader.
type Buffer struct {
	rep     replica.Metadata
	now     func() time.Time // the clock of reset marks (replica.Messages.Now)
	mu      sync.Mutex
	pending map[key]store.QueueOffset
	// flying is what the flush in progress replicates (flushes are one at a
	// time), for Advance.
	flying map[key]store.QueueOffset
	// lifted is, per key, the reset whose hold ends early on this node and
	// when (a pull from the reset offset, a commit of it).
	lifted map[key]lift
	// epoch counts Drops. A flush restores the offsets it failed to
	// replicate only if no Drop came since it took them: a flush in flight
	// when leadership was lost fails a moment after the Drop, and restoring
	// then would leave its offsets pending on a follower, to be written, old,
	// over newer ones when this node next leads (chaos N1 and P1 at load:
	// 958 then 378, the offsets of this node's term two leaderships earlier).
	epoch uint64
	// flushMu makes flushes one at a time, so offsets reach the log in the
	// order they were taken: two concurrent flushes (the periodic one and a
	// Durable read's) could otherwise apply an older value after a newer one.
	flushMu sync.Mutex
}

// NewBuffer is an empty buffer that flushes into rep; now is the clock reset
// marks are made and aged with.
func NewBuffer(rep replica.Metadata, now func() time.Time) *Buffer {
	return &Buffer{rep: rep, now: now, pending: make(map[key]store.QueueOffset), flying: make(map[key]store.QueueOffset), lifted: make(map[key]lift)}
}

// lift ends the hold of the reset made at At (its mark) from Unix ms From.
type lift struct{ At, From int64 }

// Put records the newest committed offset of (group, topic, queueID), unless
// the offset is held after a reset (ResetHold); a held commit of the reset
// offset itself ends the hold resetCommitGrace later.
func (b *Buffer) Put(group, topic string, queueID int32, off store.QueueOffset) {
	k := key{group, topic, queueID}
	if mark, held := b.held(k); held {
		if int64(off) == mark.Offset {
			b.liftFrom(k, mark, b.now().Add(resetCommitGrace))
		}
		return
	}
	b.mu.Lock()
	b.pending[k] = off
	b.mu.Unlock()
}

// Advance is Put for the offset a pull carries (PULL_MESSAGE's commitOffset):
// the client's progress, which never moves the committed offset back. A
// consumer taking a queue over in a rebalance starts from the committed offset
// it queried, and its first pull carries that offset; the previous owner's
// last commit may have come in between, so taking the pull's would move the
// offset back (chaos K1 at load: 4055 then 4034 within 260 ms). An explicit
// UPDATE_CONSUMER_OFFSET (Put) still sets any value: a lite-pull seek, an
// operator's clone, the Go client's correction after PULL_OFFSET_MOVED.
func (b *Buffer) Advance(group, topic string, queueID int32, off store.QueueOffset) {
	k := key{group, topic, queueID}
	b.mu.Lock()
	flying, inFlight := b.flying[k]
	b.mu.Unlock()
	if inFlight && off < flying {
		return // a flush is replicating a newer one
	}
	if cur, ok := b.Committed(group, topic, queueID); ok && off < cur {
		return
	}
	b.Put(group, topic, queueID, off)
}

// held reports whether k was reset less than ResetHold ago (by the mark any
// leader replicated, so a new leader holds it too) and its hold has not
// ended early on this node, and returns the mark.
func (b *Buffer) held(k key) (fsm.ResetMark, bool) {
	mark, ok := b.rep.LastReset(k.group, k.topic, k.queueID)
	if !ok {
		return mark, false
	}
	now, hold := b.now().UnixMilli(), ResetHold.Milliseconds()
	// A mark from the future beyond the hold is another node's clock far
	// off: not a reason to ignore commits for longer than the hold.
	if now >= mark.At+hold || now <= mark.At-hold {
		return mark, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	l, lifted := b.lifted[k]
	return mark, !lifted || l.At != mark.At || now < l.From
}

// liftFrom ends the hold of mark on k at from, or earlier if already set so.
func (b *Buffer) liftFrom(k key, mark fsm.ResetMark, from time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if l, ok := b.lifted[k]; ok && l.At == mark.At && l.From <= from.UnixMilli() {
		return
	}
	b.lifted[k] = lift{At: mark.At, From: from.UnixMilli()}
}

// Reset replicates offs as an operator's reset (one raft entry, exactly these
// offsets) and holds them: pending commits of those queues are dropped, and
// commits arriving during the next ResetHold are ignored, unless a pull from
// the reset offset (Pulled) or a commit of it (Put) ends the hold first. It runs between flushes, so
// no flush can write an older commit after it.
func (b *Buffer) Reset(ctx context.Context, offs []fsm.OffsetEntry) error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	b.mu.Lock()
	for _, o := range offs {
		k := key{o.Group, o.Topic, o.QueueID}
		delete(b.pending, k)
		delete(b.lifted, k)
	}
	b.mu.Unlock()
	return b.rep.ResetOffsets(ctx, b.now(), offs)
}

// Pulled tells the buffer that a consumer of group pulled (topic, queueID)
// from offset: a pull from the offset a reset set is its client resuming from
// the reset, so from then on its commits are its progress past the reset and
// the hold ends on this node.
func (b *Buffer) Pulled(group, topic string, queueID int32, offset store.QueueOffset) {
	k := key{group, topic, queueID}
	if mark, held := b.held(k); held && mark.Offset == int64(offset) {
		b.liftFrom(k, mark, b.now())
	}
}

// Forget drops the pending offsets of group (its offsets are being deleted:
// flushing them afterwards would bring them back).
func (b *Buffer) Forget(group string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.pending {
		if k.group == group {
			delete(b.pending, k)
		}
	}
}

// Drop discards everything pending and returns how many offsets it held. The
// broker calls it when this node stops being the leader: those commits can no
// longer be replicated from here, and flushing them after a later re-election
// would write them over newer offsets the other leaders replicated, moving
// committed offsets backwards. Live consumers commit again within seconds.
func (b *Buffer) Drop() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.epoch++
	n := len(b.pending)
	clear(b.pending)
	return n
}

// Committed is the latest committed offset: pending on this leader, else
// replicated.
func (b *Buffer) Committed(group, topic string, queueID int32) (store.QueueOffset, bool) {
	b.mu.Lock()
	off, ok := b.pending[key{group, topic, queueID}]
	b.mu.Unlock()
	if ok {
		return off, true
	}
	return b.rep.ConsumerOffset(group, topic, queueID)
}

// Durable is the committed offset for a reader that must never see it go
// back (QUERY_CONSUMER_OFFSET: what a consumer taking over a queue starts
// from): a pending offset of the key is replicated first, and the answer is
// always the replicated one. Committed's pending answer is forgotten when this
// node loses leadership (Drop) or dies, and the next answer, from the
// replicated offsets here or on the new leader, is older: chaos scenario R2
// saw committed offsets move back by up to 14 that way, and by as much
// between a flush taking the pending offsets and its entry applying. When the
// flush fails (no longer the leader) the answer is the replicated offset, no
// older than any earlier answer, since each was replicated before it was given.
func (b *Buffer) Durable(ctx context.Context, group, topic string, queueID int32) (store.QueueOffset, bool) {
	b.mu.Lock()
	_, pending := b.pending[key{group, topic, queueID}]
	b.mu.Unlock()
	if pending {
		_ = b.Flush(ctx)
	}
	return b.rep.ConsumerOffset(group, topic, queueID)
}

// Flush replicates everything pending as one entry; on failure the offsets go
// back, unless newer ones arrived meanwhile.
func (b *Buffer) Flush(ctx context.Context) error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	offs, epoch := b.take()
	if len(offs) == 0 {
		return nil
	}
	defer func() {
		b.mu.Lock()
		clear(b.flying)
		b.mu.Unlock()
	}()
	if err := b.rep.CommitOffsets(ctx, offs); err != nil {
		b.restore(offs, epoch)
		return err
	}
	return nil
}

// take removes and returns everything pending, sorted for a deterministic
// command, and the epoch it was taken in. A commit of a held queue is dropped
// here too: it may have been put while the reset's entry was still on its way
// to being applied.
func (b *Buffer) take() ([]fsm.OffsetEntry, uint64) {
	b.mu.Lock()
	keys := make([]key, 0, len(b.pending))
	for k := range b.pending {
		keys = append(keys, k)
	}
	b.mu.Unlock()
	held := map[key]bool{}
	for _, k := range keys {
		if _, h := b.held(k); h {
			held[k] = true
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]fsm.OffsetEntry, 0, len(b.pending))
	for k, v := range b.pending {
		if !held[k] {
			out = append(out, fsm.OffsetEntry{Group: k.group, Topic: k.topic, QueueID: k.queueID, Offset: v})
		}
	}
	clear(b.pending)
	// While the entry replicates, its offsets are neither pending nor applied;
	// Advance still compares with them. Set in the same critical section that
	// empties pending, so no Advance sees neither.
	for _, o := range out {
		b.flying[key{o.Group, o.Topic, o.QueueID}] = o.Offset
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := out[i], out[j]
		if x.Group != y.Group {
			return x.Group < y.Group
		}
		if x.Topic != y.Topic {
			return x.Topic < y.Topic
		}
		return x.QueueID < y.QueueID
	})
	return out, b.epoch
}

// restore puts back offsets taken in epoch whose replication failed, unless
// newer ones arrived or a Drop came since.
func (b *Buffer) restore(offs []fsm.OffsetEntry, epoch uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.epoch != epoch {
		return
	}
	for _, c := range offs {
		k := key{c.Group, c.Topic, c.QueueID}
		if _, newer := b.pending[k]; !newer {
			b.pending[k] = c.Offset
		}
	}
}
