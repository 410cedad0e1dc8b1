package broker

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

type offsetKey struct {
	group, topic string
	queueID      int32
}

// offsetBuffer coalesces consumer offset commits: clients commit every 5 s per
// queue and on every pull; the leader replicates the latest value of each key once
// per flush interval in one raft entry (lessons-from-dledger.md row 2: offsets go
// through the log, not a polling copy).
type offsetBuffer struct {
	mu      sync.Mutex
	pending map[offsetKey]store.QueueOffset
}

func newOffsetBuffer() *offsetBuffer {
	return &offsetBuffer{pending: make(map[offsetKey]store.QueueOffset)}
}

func (o *offsetBuffer) put(k offsetKey, off store.QueueOffset) {
	o.mu.Lock()
	o.pending[k] = off
	o.mu.Unlock()
}

func (o *offsetBuffer) get(k offsetKey) (store.QueueOffset, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	off, ok := o.pending[k]
	return off, ok
}

// take removes and returns everything pending, sorted for a deterministic command.
func (o *offsetBuffer) take() []ConsumerOffset {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]ConsumerOffset, 0, len(o.pending))
	for k, v := range o.pending {
		out = append(out, ConsumerOffset{Group: k.group, Topic: k.topic, QueueID: k.queueID, Offset: v})
	}
	clear(o.pending)
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.QueueID < b.QueueID
	})
	return out
}

// restore puts back offsets whose replication failed, unless newer ones arrived.
func (o *offsetBuffer) restore(offsets []ConsumerOffset) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range offsets {
		k := offsetKey{c.Group, c.Topic, c.QueueID}
		if _, newer := o.pending[k]; !newer {
			o.pending[k] = c.Offset
		}
	}
}

func (b *Broker) offsetFlushLoop() {
	t := time.NewTicker(b.cfg.OffsetFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
			if b.isLeader() {
				ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
				if err := b.flushOffsets(ctx); err != nil {
					b.log.Warn("consumer offset flush failed", "error", err)
				}
				cancel()
			}
		}
	}
}

func (b *Broker) flushOffsets(ctx context.Context) error {
	offsets := b.offsets.take()
	if len(offsets) == 0 {
		return nil
	}
	if err := b.replica.CommitOffsets(ctx, offsets); err != nil {
		b.offsets.restore(offsets)
		return err
	}
	return nil
}

// consumerOffset is the latest committed offset: pending on this leader, else replicated.
func (b *Broker) consumerOffset(group, topic string, queueID int32) (store.QueueOffset, bool) {
	if off, ok := b.offsets.get(offsetKey{group, topic, queueID}); ok {
		return off, true
	}
	return b.replica.ConsumerOffset(group, topic, queueID)
}

// handleQueryOffset serves QUERY_CONSUMER_OFFSET (14) with RocketMQ's rule that a
// group with no stored offset starts at 0 while the queue still holds message 0, so
// "produce first, then start a consumer" delivers the earlier messages.
func (b *Broker) handleQueryOffset(req *transport.Command) *transport.Command {
	e := &ext{fields: req.ExtFields}
	group, topic, queueID := e.str("consumerGroup", true), e.str("topic", true), e.int32("queueId", true, 0)
	if e.err != nil {
		return errorResponse(e.err)
	}
	if off, ok := b.consumerOffset(group, topic, queueID); ok {
		return okResponse(map[string]string{"offset": strconv.FormatInt(int64(off), 10)}, nil)
	}
	if req.ExtFields["setZeroIfNotFound"] != "false" && b.store.MinQueueOffset(topic, queueID) <= 0 {
		return okResponse(map[string]string{"offset": "0"}, nil)
	}
	return transport.NewResponse(transport.QueryNotFound, "no offset stored for "+group)
}

// handleUpdateOffset serves UPDATE_CONSUMER_OFFSET (15); followers forward it.
func (b *Broker) handleUpdateOffset(ctx context.Context, req *transport.Command) *transport.Command {
	e := &ext{fields: req.ExtFields}
	group, topic := e.str("consumerGroup", true), e.str("topic", true)
	queueID, off := e.int32("queueId", true, 0), e.int64("commitOffset", true, 0)
	if e.err != nil {
		return errorResponse(e.err)
	}
	if !b.isLeader() {
		go b.forwardOneway(context.WithoutCancel(ctx), req)
		return transport.NewResponse(transport.Success, "")
	}
	b.offsets.put(offsetKey{group, topic, queueID}, store.QueueOffset(off))
	return transport.NewResponse(transport.Success, "")
}
