package auth

import (
	"context"
	"net/netip"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// Stage is the authentication and authorisation stage of the handler chain:
// it runs after metrics and before forwarding, so a follower checks a request
// before it relays it, and the leader checks it again with the caller's own
// signature (the relay keeps every field the client signed).
func (a *ACL) Stage(next route.Handler) route.Handler {
	return func(ctx context.Context, req *route.Request) (*transport.Command, error) {
		var remote netip.Addr
		if req.Conn != nil {
			remote, _ = RemoteIP(req.Conn.RemoteAddr())
		}
		if err := a.Check(req.RequestCode(), req.ExtFields, req.Body, remote); err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}
