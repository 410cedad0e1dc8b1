package auth

import (
	"fmt"
	"net/netip"

	tsign "github.com/rocketraft/rocketraft/transport/sign"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// unsigned are fields a broker adds on the way and a client never signs: the
// forwarding marker a follower sets when it relays a request to the leader.
var unsigned = []string{"rocketraftForwarded"}

// Check decides one request: nil to let it run, else an error wrapping
// route.ErrNoPermission (or route.ErrBadHeader for a body it cannot read)
// whose text names the reason, never a secret.
func (a *ACL) Check(code transport.RequestCode, ext map[string]string, body []byte, remote netip.Addr) error {
	acc, err := a.authenticate(code, ext, body, remote)
	if err != nil || acc == nil {
		return err
	}
	ak := acc.AccessKey
	if adminOnly(code) && !acc.Admin {
		return fmt.Errorf("%w: request code %s needs an admin account; accessKey=%s is not one", route.ErrNoPermission, code, ak)
	}
	if acc.Admin && len(acc.TopicPerms) == 0 && len(acc.GroupPerms) == 0 {
		return nil // Apache: an admin without resource perms may access everything
	}
	ns, err := needs(code, ext, body)
	if err != nil {
		return err
	}
	for _, n := range ns {
		if n.kind == topicResource && n.name == traceTopic && n.perm == PermPub {
			continue
		}
		owned, perms := acc.DefaultTopicPerm, acc.TopicPerms
		if n.kind == groupResource {
			owned, perms = acc.DefaultGroupPerm, acc.GroupPerms
		}
		if p, ok := perms[n.name]; ok {
			owned = p
		}
		if !Allows(owned, n.perm) {
			return fmt.Errorf("%w: accessKey=%s has %s on %s %s, request code %s needs %s",
				route.ErrNoPermission, ak, owned, n.kind, n.name, code, n.perm)
		}
	}
	return nil
}

// AuthorizeAdmin decides a request that only an admin may send whatever its
// code, as the nameserver's writes (nameserver.AdminAuthorizer): the same
// allow-lists and signature as Check, then an admin account. Errors wrap
// route.ErrNoPermission and never name a secret.
func (a *ACL) AuthorizeAdmin(code transport.RequestCode, ext map[string]string, body []byte, remote netip.Addr) error {
	acc, err := a.authenticate(code, ext, body, remote)
	if err != nil || acc == nil {
		return err
	}
	if !acc.Admin {
		return fmt.Errorf("%w: request code %s needs an admin account; accessKey=%s is not one", route.ErrNoPermission, code, acc.AccessKey)
	}
	return nil
}

// authenticate runs Apache's first steps: an allow-listed address passes
// (nil account, nil error); else the AccessKey must name an account whose
// secret verifies the signature, and that account is returned.
func (a *ACL) authenticate(code transport.RequestCode, ext map[string]string, body []byte, remote netip.Addr) (*Account, error) {
	if a.whitelisted(a.globalWhite, remote) {
		return nil, nil
	}
	ak := ext[tsign.AccessKeyField]
	if ak == "" {
		return nil, fmt.Errorf("%w: request code %s is not signed (no AccessKey) and %s is not on the allow-list",
			route.ErrNoPermission, code, addrText(remote))
	}
	acc, ok := a.account(ak)
	if !ok {
		return nil, fmt.Errorf("%w: no account with accessKey=%s", route.ErrNoPermission, ak)
	}
	if acc.White != nil && remote.IsValid() && acc.White.Match(remote) {
		return nil, nil
	}
	if !tsign.VerifyRequest(acc.SecretKey, ext, body, unsigned...) {
		return nil, fmt.Errorf("%w: signature check failed for accessKey=%s (request code %s)", route.ErrNoPermission, ak, code)
	}
	return acc, nil
}

func (a *ACL) whitelisted(patterns []AddrPattern, remote netip.Addr) bool {
	if !remote.IsValid() {
		return false
	}
	for _, p := range patterns {
		if p.Match(remote) {
			return true
		}
	}
	return false
}

func addrText(a netip.Addr) string {
	if !a.IsValid() {
		return "the caller's address"
	}
	return a.String()
}
