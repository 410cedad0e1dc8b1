package transport

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrTimeout answers an InvokeAsync call that got no response within its timeout.
var ErrTimeout = errors.New("transport: no response within the timeout")

// pendingCall is one request this side sent and waits to have answered:
// either an Invoke blocked on ch, or an InvokeAsync whose done runs when the
// answer, its deadline or the connection's end comes first.
type pendingCall struct {
	ch       chan *Command
	done     func(*Command, error)
	deadline int64 // InvokeAsync only: time.Now().UnixNano() after which it times out
}

// asyncSweepInterval is how often InvokeAsync deadlines are checked: a call
// times out between its deadline and one interval later. Java's remoting
// client scans its response table once a second; 50 ms keeps a 3 s send
// timeout within 2 %.
const asyncSweepInterval = 50 * time.Millisecond

// InvokeAsync sends req and returns once it is queued; done runs exactly once
// with the response, or with an error when timeout passes first (ErrTimeout)
// or the connection closes (ErrConnClosed). It assigns req.Opaque.
//
// done runs on the connection's reader goroutine (or its deadline sweeper)
// and must not block: it is where a pipelined sender counts its answer and
// frees a slot. Unlike Invoke there is no goroutine, context or timer per
// call, which is what keeps a producer with hundreds of sends in flight cheap.
func (c *Conn) InvokeAsync(req *Command, timeout time.Duration, done func(*Command, error)) error {
	req.Opaque = nextOpaque()
	req.Flag &^= flagResponse | flagOneway
	c.pmu.Lock()
	if c.isClosed() {
		c.pmu.Unlock()
		return c.invokeErr(req, ErrConnClosed)
	}
	c.pending[req.Opaque] = pendingCall{done: done, deadline: time.Now().Add(timeout).UnixNano()}
	c.pmu.Unlock()
	if c.sweeping.CompareAndSwap(false, true) {
		go c.sweepAsync()
	}
	if err := c.send(req); err != nil {
		if c.take(req.Opaque) {
			return c.invokeErr(req, err)
		}
		return nil // the reader or the sweeper already answered done
	}
	return nil
}

// take removes the pending call opaque and reports whether it was there, so
// that exactly one path answers it.
func (c *Conn) take(opaque int32) bool {
	c.pmu.Lock()
	_, ok := c.pending[opaque]
	delete(c.pending, opaque)
	c.pmu.Unlock()
	return ok
}

// sweepAsync times out InvokeAsync calls until the connection closes.
func (c *Conn) sweepAsync() {
	t := time.NewTicker(asyncSweepInterval)
	defer t.Stop()
	var expired []int32
	var dones []func(*Command, error)
	for {
		select {
		case <-c.closed:
			return
		case now := <-t.C:
			n := now.UnixNano()
			expired, dones = expired[:0], dones[:0]
			c.pmu.Lock()
			for op, call := range c.pending {
				if call.done != nil && call.deadline <= n {
					expired = append(expired, op)
					dones = append(dones, call.done)
					delete(c.pending, op)
				}
			}
			c.pmu.Unlock()
			for i, done := range dones {
				done(nil, fmt.Errorf("invoke opaque=%d remote=%s: %w", expired[i], c.remote, ErrTimeout))
			}
		}
	}
}

// failAsync answers every InvokeAsync call still pending once the connection
// is closed. Blocked Invokes see the close themselves.
func (c *Conn) failAsync() {
	var dones []func(*Command, error)
	c.pmu.Lock()
	for op, call := range c.pending {
		if call.done != nil {
			dones = append(dones, call.done)
			delete(c.pending, op)
		}
	}
	c.pmu.Unlock()
	for _, done := range dones {
		done(nil, fmt.Errorf("invoke remote=%s: %w", c.remote, ErrConnClosed))
	}
}

// InvokeAsync sends req to addr, dialling it if needed (bounded by ctx), and
// answers done as Conn.InvokeAsync does.
func (c *Client) InvokeAsync(ctx context.Context, addr string, req *Command, timeout time.Duration, done func(*Command, error)) error {
	conn, err := c.conn(ctx, addr)
	if err != nil {
		return err
	}
	return conn.InvokeAsync(req, timeout, done)
}
