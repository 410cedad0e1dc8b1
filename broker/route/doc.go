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
// A stage that looks at the answer (metrics, the send statistics, Forward's
// relay on ErrNotLeader) registers an After before it calls the rest of the
// chain, rather than reading what the chain returns. That lets a handler answer
// later: it calls Request.Defer, hands the request on, and whoever finishes the
// work calls Request.Answer, which runs the afters (innermost first) and sends
// the response (transport.Deferred, Conn.Answer). The leader's send handler does
// so: its answer is built on the proposer's completion goroutine, and no
// goroutine waits for each send's raft entry. An After that would block on a
// deferred request (Forward's relay) defers it again and answers from a
// goroutine of its own.
//
// Codes registered with HandleInline (the sends) run on the connection's
// reader goroutine (transport.InlineHandler; Request.Inline): their stages and
// handler must not block. Forward relays such a request from a goroutine, and
// the send handler hands a send that must first create a topic to one.
// HandleInlineWhen narrows that to the requests a predicate accepts (the pulls
// near their queue's end); the others run on handler goroutines.
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
// A Request belongs to one goroutine at a time: the handler's until it hands the
// request on after Defer, then the one that answers it.
package route
