package auth

import "github.com/rocketraft/rocketraft/broker/route"

// Stage is the authentication and authorisation stage of the handler chain:
// it runs after metrics and before forwarding, so a follower checks a request
// before it relays it, and the leader checks it again with the caller's own
// signature (the relay keeps every field the client signed).
func (a *ACL) Stage(next route.Handler) route.Handler {
	return stage(func() *ACL { return a }, next)
}
