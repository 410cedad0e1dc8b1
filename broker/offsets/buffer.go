package offsets

import (
	"context"
	"sort"
	"sync"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

type key struct {
	group, topic string
	queueID      int32
}

// Buffer coalesces consumer offset commits on the leader.
type Buffer struct {
	rep     replica.Metadata
	mu      sync.Mutex
	pending map[key]store.QueueOffset
	// flushMu makes flushes one at a time, so offsets reach the log in the
	// order they were taken: two concurrent flushes (the periodic one and a
	// Durable read's) could otherwise apply an older value after a newer one.
	flushMu sync.Mutex
}

// NewBuffer is an empty buffer that flushes into rep.
func NewBuffer(rep replica.Metadata) *Buffer {
	return &Buffer{rep: rep, pending: make(map[key]store.QueueOffset)}
}

// Put records the newest committed offset of (group, topic, queueID).
func (b *Buffer) Put(group, topic string, queueID int32, off store.QueueOffset) {
	b.mu.Lock()
	b.pending[key{group, topic, queueID}] = off
	b.mu.Unlock()
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
	offs := b.take()
	if len(offs) == 0 {
		return nil
	}
	if err := b.rep.CommitOffsets(ctx, offs); err != nil {
		b.restore(offs)
		return err
	}
	return nil
}

// take removes and returns everything pending, sorted for a deterministic command.
func (b *Buffer) take() []fsm.OffsetEntry {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]fsm.OffsetEntry, 0, len(b.pending))
	for k, v := range b.pending {
		out = append(out, fsm.OffsetEntry{Group: k.group, Topic: k.topic, QueueID: k.queueID, Offset: v})
	}
	clear(b.pending)
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
	return out
}

// restore puts back offsets whose replication failed, unless newer ones arrived.
func (b *Buffer) restore(offs []fsm.OffsetEntry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range offs {
		k := key{c.Group, c.Topic, c.QueueID}
		if _, newer := b.pending[k]; !newer {
			b.pending[k] = c.Offset
		}
	}
}
