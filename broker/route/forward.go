package route

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/transport"
)

// extForwarded marks a request relayed by a follower, so that a node which is
// not the leader either never relays it again (no loops during elections).
const extForwarded = "rocketraftForwarded"

// Forwarded reports whether a follower relayed cmd to this node.
func Forwarded(cmd *transport.Command) bool { return cmd.Field(extForwarded) != "" }

// leaderWait bounds how long a follower waits for an election to finish before
// it answers SERVICE_NOT_AVAILABLE (which the Go client retries).
const leaderWait = 3 * time.Second

// leaderPoll is how often a follower looks again for a leader while it waits.
const leaderPoll = 50 * time.Millisecond

// relayTimeout bounds one relayed request: the leader's own bound on a
// replicated write (10 s, see clientapi) plus the hop and a leader hand-off.
const relayTimeout = 12 * time.Second

// Forwarder is the chain's last stage: it relays requests of Leader and
// LeaderOneway codes from a follower to the leader (decisions 0001, 0008).
type Forwarder struct {
	SelfID     string
	BrokerName string
	// Leading reports whether this node serves as leader now (after its barrier).
	Leading func() bool
	// Status is the live raft status (the leader's id while an election ends).
	Status func() replica.Status
	// LeaderAddr is the client address of a peer, by raft id. ("", nil) means
	// not known yet: a new leader announces its address through raft just
	// after its election, so the stage waits for it as it waits for a leader.
	// An error (the peer is of another dLegerGroup) ends the wait.
	LeaderAddr func(id string) (string, error)
	Client     *transport.Client
	Logger     hclog.Logger
}

// Stage is the forwarding stage of the chain.
func (f *Forwarder) Stage(next Handler) Handler {
	return func(ctx context.Context, req *Request) (*transport.Command, error) {
		switch req.Route.Policy {
		case Leader:
			if !f.Leading() {
				if req.Inline() {
					return f.relayLater(ctx, req) // not on the connection's reader
				}
				return f.relay(ctx, req.Command)
			}
			req.After((*relayOnLostLead)(f))
			return next(ctx, req)
		case LeaderOneway:
			if !f.Leading() {
				go f.relayOneway(context.WithoutCancel(ctx), req.Command)
				return transport.NewResponse(transport.Success, ""), nil
			}
		}
		return next(ctx, req)
	}
}

// relayOnLostLead is the Forwarder as the After of a leader's request:
// leadership moved while the request ran, so the new leader answers it.
type relayOnLostLead Forwarder

func (l *relayOnLostLead) After(req *Request, resp *transport.Command, err error) (*transport.Command, error) {
	if !errors.Is(err, replica.ErrNotLeader) {
		return resp, err
	}
	f := (*Forwarder)(l)
	if !req.Deferred() && !req.Inline() {
		return f.relay(req.Context(), req.Command)
	}
	return f.relayLater(req.Context(), req) // not on the goroutine that answers
}

// leaderClientAddr returns the client address of the current leader, waiting up
// to leaderWait while there is none or its address is not known yet.
func (f *Forwarder) leaderClientAddr(ctx context.Context) (string, error) {
	deadline := time.Now().Add(leaderWait)
	for {
		st := f.Status()
		unknown := ""
		if st.LeaderID != "" && st.LeaderID != f.SelfID {
			addr, err := f.LeaderAddr(st.LeaderID)
			switch {
			case err != nil:
				return "", err
			case addr != "":
				return addr, nil
			}
			unknown = st.LeaderID
		}
		// Keep waiting even while this node still reads as leader: forwarding
		// starts after raft refused the write (leadership transfer in progress),
		// and the status catches up a moment later.
		if time.Now().After(deadline) {
			if unknown != "" {
				return "", fmt.Errorf("%w: leader %s has no known client address (it announces one when it becomes leader; "+
					"or set dLegerPeerClientAddrs)", replica.ErrNoLeader, unknown)
			}
			return "", fmt.Errorf("%w: group %s has no leader yet", replica.ErrNoLeader, f.BrokerName)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(leaderPoll):
		}
	}
}

// relay sends a write to the leader and returns its answer, so a client with a
// stale route (leadership transfer, rolling restart) sees no error.
func (f *Forwarder) relay(ctx context.Context, req *transport.Command) (*transport.Command, error) {
	if Forwarded(req) {
		return nil, fmt.Errorf("%w: %s is not the leader of %s", replica.ErrNotLeader, f.SelfID, f.BrokerName)
	}
	addr, err := f.leaderClientAddr(ctx)
	if err != nil {
		return nil, err
	}
	fctx, cancel := context.WithTimeout(ctx, relayTimeout)
	defer cancel()
	resp, err := f.Client.Invoke(fctx, addr, transport.NewRequest(req.RequestCode(), f.markForwarded(req), req.Body))
	if err != nil {
		return nil, fmt.Errorf("%w: forward to leader %s: %v", replica.ErrUnknownOutcome, addr, err)
	}
	out := transport.NewResponse(resp.ResponseCode(), resp.Remark)
	out.ExtFields = resp.Fields()
	out.Body = resp.Body
	return out, nil
}

// relayLater defers req and relays it from a goroutine of its own: the relay
// waits on the network, which the goroutine that runs the chain must not.
func (f *Forwarder) relayLater(ctx context.Context, req *Request) (*transport.Command, error) {
	resp, err := req.Defer() // before the goroutine may answer
	go func() { req.Answer(f.relay(ctx, req.Command)) }()
	return resp, err
}

// relayOneway relays a request whose answer the client ignores (offset updates).
func (f *Forwarder) relayOneway(ctx context.Context, req *transport.Command) {
	if Forwarded(req) {
		return
	}
	addr, err := f.leaderClientAddr(ctx)
	if err != nil {
		f.Logger.Debug("drop forwarded oneway request", "code", req.Code, "error", err)
		return
	}
	_ = f.Client.InvokeOneway(ctx, addr, transport.NewRequest(req.RequestCode(), f.markForwarded(req), req.Body))
}

// markForwarded returns req's extFields with the forwarded mark added, leaving
// req as it is. A decoded request's Fields is already a new map, so only a
// request built with ExtFields is copied.
func (f *Forwarder) markForwarded(req *transport.Command) map[string]string {
	out := req.Fields()
	if req.ExtFields != nil {
		out = maps.Clone(out)
	}
	if out == nil {
		out = map[string]string{}
	}
	out[extForwarded] = f.SelfID
	return out
}
