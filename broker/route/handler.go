package route

import (
	"context"

	"github.com/rocketraft/rocketraft/transport"
)

// Request is one request as a handler sees it: the command (its extFields, body
// and code), the connection it came on, and the route it was matched to.
type Request struct {
	*transport.Command
	Conn  *transport.Conn
	Route *Route
}

// Handler serves one request: a response, an error (mapped through the error
// table), or neither (no answer, e.g. a oneway request).
type Handler func(ctx context.Context, req *Request) (*transport.Command, error)

// Stage is one step of the handler chain: it wraps the rest of the chain.
type Stage func(next Handler) Handler

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
}
