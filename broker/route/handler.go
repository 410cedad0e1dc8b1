package route

import (
	"context"
	"errors"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

// Request is one request as a handler sees it: the command (its extFields, body
// and code), the connection it came on, and the route it was matched to.
type Request struct {
	*transport.Command
	Conn  *transport.Conn
	Route *Route

	// ctx is the context the request is served in (Context), kept for the
	// afters, which may run after Call returned (a deferred request).
	ctx context.Context
	// afters are the stages' post-processing, outermost first (After).
	afters   []After
	afterBuf [3]After
	// deferred is set by Defer, before the handler hands the request on.
	deferred bool
	// inline: the request runs on its connection's reader goroutine.
	inline bool
	// started and answered are the clock readings the timing stages share
	// (Started, Elapsed).
	started, answered time.Time
}

// Started is when the first stage that asked began timing the request. The
// stages that time a request (metrics, runtime stats) share its clock
// readings: at ~70 ns each on our VMs, two per stage were a visible part of a
// send's cost.
func (r *Request) Started() time.Time {
	if r.started.IsZero() {
		r.started = time.Now()
	}
	return r.started
}

// Elapsed is the time from Started to the answer, read once when the first
// After asks. Call it only from an After.
func (r *Request) Elapsed() time.Duration {
	if r.answered.IsZero() {
		r.answered = time.Now()
	}
	return r.answered.Sub(r.Started())
}

// Handler serves one request: a response, an error (mapped through the error
// table), or neither (no answer, e.g. a oneway request). A handler that
// answers later returns Defer's result and calls Answer once.
type Handler func(ctx context.Context, req *Request) (*transport.Command, error)

// Stage is one step of the handler chain: it wraps the rest of the chain. A
// stage that looks at the answer registers an After instead of reading what
// next returns, so that it also sees the answer of a deferred request.
type Stage func(next Handler) Handler

// After post-processes the answer to a request: it gets what the chain
// inside its stage answered and returns what the stage answers. Afters run
// innermost first, once the answer is known: when the handler returns, or
// when a deferred request is answered. One that has to block on a deferred
// request (Deferred tells) hands the request on and returns Defer's result
// from a goroutine's Answer onward.
//
// It is an interface, not a function, so that a stage registers itself (a
// pointer, which an interface holds without allocating) and reads what it
// needs from the request: a closure over the request cost every request one
// allocation per stage (docs/performance.md, thirtieth pass).
type After interface {
	After(req *Request, resp *transport.Command, err error) (*transport.Command, error)
}

// AfterFunc is a function as an After: for stages with state of their own per
// request, at the price of the closure's allocation.
type AfterFunc func(req *Request, resp *transport.Command, err error) (*transport.Command, error)

// After calls f.
func (f AfterFunc) After(req *Request, resp *transport.Command, err error) (*transport.Command, error) {
	return f(req, resp, err)
}

// errDeferred is what Defer returns: not an error, the answer comes later.
var errDeferred = errors.New("route: the answer is deferred")

// Context is the context the request is served in: Call's, or Background
// for a request that was never called.
func (r *Request) Context() context.Context {
	if r.ctx == nil {
		return context.Background()
	}
	return r.ctx
}

// After registers f; a stage calls it before it calls next.
func (r *Request) After(f After) {
	if r.afters == nil {
		r.afters = r.afterBuf[:0]
	}
	r.afters = append(r.afters, f)
}

// CanDefer reports whether the request may be answered later: it came over a
// connection (a request served directly, as in tests, has none).
func (r *Request) CanDefer() bool { return r.Conn != nil }

// Defer marks the request as answered later and returns what the handler
// returns now. Call it before handing the request on: the answer may come
// before the handler returns. Whoever holds the request then calls Answer
// exactly once.
func (r *Request) Defer() (*transport.Command, error) {
	r.deferred = true
	return nil, errDeferred
}

// Inline reports whether the request runs on its connection's reader
// goroutine (Table.HandleInline): the stages and the handler must not block
// it, and defer what would.
func (r *Request) Inline() bool { return r.inline }

// Deferred reports whether Defer was called: an After then runs on whatever
// goroutine answers, which it must not block.
func (r *Request) Deferred() bool { return r.deferred }

// Answer completes a deferred request with the handler's answer: the
// stages' afters run, then the response is sent (a panic on the way is
// answered SYSTEM_ERROR, as in a handler).
func (r *Request) Answer(resp *transport.Command, err error) {
	r.Conn.Answer(r.Command, func() *transport.Command { return r.finish(resp, err) })
}

// AnswerWith is Answer for an answer still to be worked out: f runs inside
// the connection's panic guard, so that a panic in it is answered
// SYSTEM_ERROR, as one in a handler is, instead of ending the goroutine that
// answers (a store notifier's, a timer's).
func (r *Request) AnswerWith(f func() (*transport.Command, error)) {
	r.Conn.Answer(r.Command, func() *transport.Command { return r.finish(f()) })
}

// finish runs the afters not yet run, innermost first, and returns the
// response, or transport.Deferred when an After deferred the request again.
func (r *Request) finish(resp *transport.Command, err error) *transport.Command {
	for len(r.afters) > 0 {
		f := r.afters[len(r.afters)-1]
		r.afters = r.afters[:len(r.afters)-1]
		resp, err = f.After(r, resp, err)
		if err == errDeferred {
			return transport.Deferred
		}
	}
	return Respond(resp, err)
}

// Policy says what a follower does with a request of a code.
type Policy int

const (
	// Local: every node serves it (reads of applied state, soft state, relays).
	Local Policy = iota
	// Leader: a follower relays it to the leader and returns the leader's answer;
	// on the leader, a handler error matching replica.ErrNotLeader (leadership
	// moved mid-request) relays it too.
	Leader
	// LeaderOneway: a follower relays it in the background and answers SUCCESS
	// at once (UPDATE_CONSUMER_OFFSET, whose answer clients ignore).
	LeaderOneway
)

func (p Policy) String() string {
	return [...]string{"local", "leader", "leader-oneway"}[p]
}

// Route is one registered request code.
type Route struct {
	Code    transport.RequestCode
	Policy  Policy
	Handler Handler
	// Inline reports the requests served on the connection's reader goroutine
	// (HandleInline: all of them; HandleInlineWhen: those it accepts); nil
	// means none.
	Inline func(*transport.Command) bool
}
