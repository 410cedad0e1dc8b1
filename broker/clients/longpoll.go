package clients

import (
	"context"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

// PullWaiters holds long-polled PULL_MESSAGE requests. A pull that finds nothing
// registers a waiter for its queue (Hold) and its handler returns; no goroutine
// waits for it. The waiter fires once: when the store's dispatch notifier finds
// the queue's max offset past the offset the pull asked for (it then runs on the
// notifier's goroutine, so the messages just dispatched are served without a
// goroutine hand-off), when its timeout passes, or when its context ends (the
// connection closed).
type PullWaiters struct {
	mu      sync.Mutex
	waiters map[store.TopicQueue][]*pullWaiter
}

type pullWaiter struct {
	offset store.QueueOffset
	fire   func()

	mu      sync.Mutex
	fired   bool
	timer   *time.Timer
	stopCtx func() bool
}

func NewPullWaiters() *PullWaiters {
	return &PullWaiters{waiters: make(map[store.TopicQueue][]*pullWaiter)}
}

// trigger runs fire the first time it is called, and stops the waiter's other
// wake-ups; later calls do nothing.
func (w *pullWaiter) trigger() {
	w.mu.Lock()
	if w.fired {
		w.mu.Unlock()
		return
	}
	w.fired = true
	t, stop := w.timer, w.stopCtx
	w.mu.Unlock()
	if t != nil {
		t.Stop()
	}
	if stop != nil {
		stop()
	}
	w.fire()
}

// register adds w to tq's waiters.
func (p *PullWaiters) register(tq store.TopicQueue, w *pullWaiter) {
	p.mu.Lock()
	p.waiters[tq] = append(p.waiters[tq], w)
	p.mu.Unlock()
}

// cancel removes w from tq's waiters, if it is still there.
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

// notifyInline is how many of a queue's due waiters Notify fires on its
// caller's goroutine; the others fire on goroutines of their own. One consumer
// group per queue is the common case, and its pull is then served with no
// hand-off; many groups on one queue are served in parallel rather than one
// after another on the store's dispatch goroutine.
const notifyInline = 2

// Notify is the store's Notifier: it fires every waiter of the queue whose
// offset is now below maxOffset, after it has let go of the waiters' lock: the
// first notifyInline on the caller's goroutine, the rest on goroutines of their
// own. It never blocks on a waiter, but it runs fire functions.
func (p *PullWaiters) Notify(topic string, queueID int32, maxOffset store.QueueOffset) {
	tq := store.TopicQueue{Topic: topic, QueueID: queueID}
	p.mu.Lock()
	ws := p.waiters[tq]
	if len(ws) == 0 {
		p.mu.Unlock()
		return
	}
	var due []*pullWaiter
	keep := ws[:0]
	for _, w := range ws {
		if w.offset < maxOffset {
			due = append(due, w)
		} else {
			keep = append(keep, w)
		}
	}
	clear(ws[len(keep):])
	if len(keep) == 0 {
		delete(p.waiters, tq)
	} else {
		p.waiters[tq] = keep
	}
	p.mu.Unlock()
	for i, w := range due {
		if i < notifyInline {
			w.trigger()
		} else {
			go w.trigger()
		}
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

// Hold calls fire once: when a message at or after offset may exist in tq, when
// timeout passes, or when ctx ends. fire runs on whichever goroutine saw that
// first: Notify's caller, a timer's, ctx's AfterFunc's, or this one, when
// hasNew, checked after registering, reports that a message was dispatched
// between the caller's read and the registration. fire must not block.
func (p *PullWaiters) Hold(ctx context.Context, tq store.TopicQueue, offset store.QueueOffset, timeout time.Duration, hasNew func() bool, fire func()) {
	w := &pullWaiter{offset: offset, fire: fire}
	p.register(tq, w)
	if hasNew() {
		p.cancel(tq, w)
		w.trigger()
		return
	}
	expire := func() {
		p.cancel(tq, w)
		w.trigger()
	}
	t := time.AfterFunc(timeout, expire)
	stop := context.AfterFunc(ctx, expire)
	w.mu.Lock()
	if w.fired { // a Notify fired it meanwhile
		w.mu.Unlock()
		t.Stop()
		stop()
		return
	}
	w.timer, w.stopCtx = t, stop
	w.mu.Unlock()
}

// Wait is Hold for a caller that blocks until the waiter fires.
func (p *PullWaiters) Wait(ctx context.Context, tq store.TopicQueue, offset store.QueueOffset, timeout time.Duration, hasNew func() bool) {
	done := make(chan struct{})
	p.Hold(ctx, tq, offset, timeout, hasNew, func() { close(done) })
	<-done
}
