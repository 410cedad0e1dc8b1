package clients

import (
	"context"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

// PullWaiters holds long-polled PULL_MESSAGE requests. A pull that finds nothing
// registers a waiter for its queue and blocks its own handler goroutine (the
// transport answers other requests on the connection meanwhile); the store's
// dispatch notifier wakes every waiter of a queue once its max offset passes the
// offset the waiter asked for.
type PullWaiters struct {
	mu      sync.Mutex
	waiters map[store.TopicQueue][]*pullWaiter
}

type pullWaiter struct {
	offset store.QueueOffset
	ready  chan struct{}
}

func NewPullWaiters() *PullWaiters {
	return &PullWaiters{waiters: make(map[store.TopicQueue][]*pullWaiter)}
}

// register adds a waiter for messages at or after offset in tq.
func (p *PullWaiters) register(tq store.TopicQueue, offset store.QueueOffset) *pullWaiter {
	w := &pullWaiter{offset: offset, ready: make(chan struct{})}
	p.mu.Lock()
	p.waiters[tq] = append(p.waiters[tq], w)
	p.mu.Unlock()
	return w
}

// cancel removes a waiter that timed out.
func (p *PullWaiters) cancel(tq store.TopicQueue, w *pullWaiter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ws := p.waiters[tq]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(p.waiters, tq)
	} else {
		p.waiters[tq] = ws
	}
}

// Notify is the store's Notifier: it wakes every waiter of the queue whose offset
// is now below maxOffset. It never blocks.
func (p *PullWaiters) Notify(topic string, queueID int32, maxOffset store.QueueOffset) {
	tq := store.TopicQueue{Topic: topic, QueueID: queueID}
	p.mu.Lock()
	defer p.mu.Unlock()
	ws := p.waiters[tq]
	if len(ws) == 0 {
		return
	}
	keep := ws[:0]
	for _, w := range ws {
		if w.offset < maxOffset {
			close(w.ready)
		} else {
			keep = append(keep, w)
		}
	}
	if len(keep) == 0 {
		delete(p.waiters, tq)
	} else {
		p.waiters[tq] = keep
	}
}

// Count is the number of held pulls (a metric).
func (p *PullWaiters) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, ws := range p.waiters {
		n += len(ws)
	}
	return n
}

// Wait blocks until a message at or after offset may exist in tq, the timeout
// passes or ctx ends. hasNew is re-checked after registering so a message that was
// dispatched between the caller's read and the registration is not missed.
func (p *PullWaiters) Wait(ctx context.Context, tq store.TopicQueue, offset store.QueueOffset, timeout time.Duration, hasNew func() bool) {
	w := p.register(tq, offset)
	if hasNew() {
		p.cancel(tq, w)
		return
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-w.ready:
	case <-t.C:
		p.cancel(tq, w)
	case <-ctx.Done():
		p.cancel(tq, w)
	}
}
