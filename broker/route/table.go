package route

import (
	"context"
	"fmt"

	"github.com/rocketraft/rocketraft/transport"
)

// Table maps request codes to routes. Handlers register with Handle before
// Serve; codes without a route are answered REQUEST_CODE_NOT_SUPPORTED.
type Table struct {
	routes map[transport.RequestCode]*Route
}

// NewTable is an empty table.
func NewTable() *Table { return &Table{routes: make(map[transport.RequestCode]*Route)} }

// Handle registers h for every code in codes under policy p. A code registered
// twice is a wiring bug and panics at start-up.
func (t *Table) Handle(p Policy, h Handler, codes ...transport.RequestCode) {
	for _, c := range codes {
		if _, dup := t.routes[c]; dup {
			panic(fmt.Sprintf("route: request code %s registered twice", c))
		}
		t.routes[c] = &Route{Code: c, Policy: p, Handler: h}
	}
}

// Lookup returns the route of a code (tests and documentation).
func (t *Table) Lookup(c transport.RequestCode) (*Route, bool) {
	r, ok := t.routes[c]
	return r, ok
}

// Chain is a table's handler chains as the transport runs them.
type Chain struct {
	chains      map[transport.RequestCode]routed
	unsupported Handler // the chain of a code without a route
}

// routed is one code's chain and its route.
type routed struct {
	h Handler
	r *Route
}

// ServeRemoting implements transport.Handler: it runs the chain of req's
// code (REQUEST_CODE_NOT_SUPPORTED's when none).
func (c *Chain) ServeRemoting(ctx context.Context, conn *transport.Conn, cmd *transport.Command) *transport.Command {
	code := cmd.RequestCode()
	rt, ok := c.chains[code]
	if !ok {
		rt = routed{c.unsupported, &Route{Code: code, Policy: Local, Handler: notSupported}}
	}
	return Call(ctx, rt.h, &Request{Command: cmd, Conn: conn, Route: rt.r, inline: transport.IsInline(ctx)})
}

// Inline implements transport.InlineHandler: the codes registered with
// HandleInline run on the connection's reader goroutine.
func (c *Chain) Inline(cmd *transport.Command) bool {
	rt, ok := c.chains[cmd.RequestCode()]
	return ok && rt.r.Inline != nil && rt.r.Inline(cmd)
}

// HandleInline is Handle for codes whose requests run on the connection's
// reader goroutine (transport.InlineHandler). Their chain must not block when
// Request.Inline is set: the stages and the handler answer at once, or defer
// the request (Request.Defer) and hand it to a goroutine.
func (t *Table) HandleInline(p Policy, h Handler, codes ...transport.RequestCode) {
	t.HandleInlineWhen(p, h, func(*transport.Command) bool { return true }, codes...)
}

// HandleInlineWhen is HandleInline for the requests when accepts; the others
// run on a handler goroutine as Handle's do, so the handler must serve both.
// when runs on the reader goroutine for every request of the codes: it must
// be cheap and must not block.
func (t *Table) HandleInlineWhen(p Policy, h Handler, when func(*transport.Command) bool, codes ...transport.RequestCode) {
	t.Handle(p, h, codes...)
	for _, c := range codes {
		t.routes[c].Inline = when
	}
}

// Serve builds every route's chain — the stages in order, then fwd, then the
// handler — and returns what runs them.
func (t *Table) Serve(fwd Stage, stages ...Stage) *Chain {
	chain := func(h Handler) Handler {
		h = fwd(h)
		for i := len(stages) - 1; i >= 0; i-- {
			h = stages[i](h)
		}
		return h
	}
	chains := make(map[transport.RequestCode]routed, len(t.routes))
	for c, r := range t.routes {
		chains[c] = routed{chain(r.Handler), r}
	}
	// A code without a route still runs the stages (metrics count it, and an
	// authorisation stage sees every request), as a Local route of its own.
	return &Chain{chains: chains, unsupported: chain(notSupported)}
}

// Call runs a chain for req as the table does, the stages' afters included,
// and returns the response; transport.Deferred when req is answered later
// (req.Answer sends that answer).
func Call(ctx context.Context, h Handler, req *Request) *transport.Command {
	req.ctx = ctx
	resp, err := h(ctx, req)
	if err == errDeferred {
		return transport.Deferred
	}
	return req.finish(resp, err)
}

// notSupported answers a request code no room registered.
func notSupported(_ context.Context, req *Request) (*transport.Command, error) {
	return transport.NewResponse(transport.RequestCodeNotSupported,
		fmt.Sprintf("request code %d is not supported", req.Code)), nil
}

// Without is a copy of t minus the routes of codes: a second port that serves
// every code but those (the VIP channel has no pull) builds its own chain from
// it, and the codes left out get REQUEST_CODE_NOT_SUPPORTED through the stages.
func (t *Table) Without(codes ...transport.RequestCode) *Table {
	c := NewTable()
	for code, r := range t.routes {
		c.routes[code] = r
	}
	for _, code := range codes {
		delete(c.routes, code)
	}
	return c
}
