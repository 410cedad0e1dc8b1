// Package route is the broker's request-routing core: the table from request
// code to handler, the handler chain every request runs through, and the one
// table that maps errors to RocketMQ response codes.
//
// # A request's path
//
//	transport.Server → Table.Serve → stage 1 … stage n → Forward → handler
//
// The stages are given to Serve in order; the broker passes metrics first, then
// authentication and authorisation (empty until the security work fills it),
// and Forward always runs last, just before the handler. Forward is the one place that
// decides what a follower does with a request, from the Policy its code was
// registered with: Local runs here, Leader is relayed to the leader (also when
// the handler finds out mid-request that leadership moved: replica.ErrNotLeader),
// LeaderOneway is relayed in the background and answered at once.
//
// A Handler returns a response, an error, or neither (no answer). Errors become
// responses in one place, Respond, through ResponseCode: the table of codes.go,
// which a test holds against every exported error of store, fsm, replica and
// this package.
//
// Fields reads typed extFields values and names the key, the value and the rule
// of the first bad one; names.go holds RocketMQ's topic, group and size rules.
//
// It may import broker/replica, fsm, store and transport; handler rooms import it,
// never the other way.
//
// # Concurrency
//
// A Table is built before Serve and read-only afterwards; Serve's handler is
// safe for concurrent use (the transport runs each request on its own goroutine).
package route
