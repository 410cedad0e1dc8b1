package broker

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

// extForwarded marks a request relayed by a follower, so that a node which is not
// the leader either never forwards it again (no loops during elections).
const extForwarded = "rocketraftForwarded"

// leaderWait bounds how long a follower waits for an election to finish before it
// answers SERVICE_NOT_AVAILABLE (which the Go client retries).
const leaderWait = 3 * time.Second

// leaderClientAddr returns the client address of the current leader, waiting up
// to leaderWait while there is none.
func (b *Broker) leaderClientAddr(ctx context.Context) (string, error) {
	deadline := time.Now().Add(leaderWait)
	for {
		st := b.replica.Status()
		if st.LeaderID != "" && st.LeaderID != b.cfg.SelfID {
			for _, p := range b.cfg.Peers {
				if p.ID == st.LeaderID && p.ClientAddr != "" {
					return p.ClientAddr, nil
				}
			}
			return "", fmt.Errorf("%w: leader %s has no known client address", ErrNoLeader, st.LeaderID)
		}
		// Keep waiting even while this node still reads as leader: forwarding starts
		// after raft refused the write (leadership transfer in progress), and the
		// status catches up a moment later.
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%w: group %s has no leader yet", ErrNoLeader, b.cfg.BrokerName)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// forwardToLeader relays a write to the leader and returns its answer, so a client
// with a stale route (leadership transfer, rolling restart) sees no error.
func (b *Broker) forwardToLeader(ctx context.Context, req *transport.Command) *transport.Command {
	if req.ExtFields[extForwarded] != "" {
		return errorResponse(fmt.Errorf("%w: %s is not the leader of %s", ErrNotLeader, b.cfg.SelfID, b.cfg.BrokerName))
	}
	addr, err := b.leaderClientAddr(ctx)
	if err != nil {
		return errorResponse(err)
	}
	ext := maps.Clone(req.ExtFields)
	if ext == nil {
		ext = map[string]string{}
	}
	ext[extForwarded] = b.cfg.SelfID
	fwd := transport.NewRequest(req.RequestCode(), ext, req.Body)
	fctx, cancel := context.WithTimeout(ctx, sendTimeout+2*time.Second)
	defer cancel()
	resp, err := b.client.Invoke(fctx, addr, fwd)
	if err != nil {
		return errorResponse(fmt.Errorf("%w: forward to leader %s: %v", ErrUnknownOutcome, addr, err))
	}
	out := transport.NewResponse(resp.ResponseCode(), resp.Remark)
	out.ExtFields = resp.ExtFields
	out.Body = resp.Body
	return out
}

// forwardOneway relays a request whose answer the client ignores (offset updates).
func (b *Broker) forwardOneway(ctx context.Context, req *transport.Command) {
	if req.ExtFields[extForwarded] != "" {
		return
	}
	addr, err := b.leaderClientAddr(ctx)
	if err != nil {
		b.log.Debug("drop forwarded oneway request", "code", req.Code, "error", err)
		return
	}
	ext := maps.Clone(req.ExtFields)
	ext[extForwarded] = b.cfg.SelfID
	_ = b.client.InvokeOneway(ctx, addr, transport.NewRequest(req.RequestCode(), ext, req.Body))
}
