package admin

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/transport/sign"

	"github.com/rocketraft/rocketraft/transport"
)

// TestACLCommandsOnTheWire: acl set sends code 50 with only the flags given
// (admin always), signed; acl list prints no secret even from a broker that
// sent one.
func TestACLCommandsOnTheWire(t *testing.T) {
	seen := make(chan *transport.Command, 8)
	h := func(_ context.Context, _ *transport.Conn, req *transport.Command) *transport.Command {
		seen <- req
		switch req.RequestCode() {
		case transport.GetBrokerRuntimeInfo:
			r := transport.NewResponse(transport.Success, "")
			r.Body = []byte(`{"table":{"brokerName":"broker-a","brokerClusterName":"C"}}`)
			return r
		case transport.GetBrokerClusterACLConfig:
			r := transport.NewResponse(transport.Success, "")
			r.Body = []byte(`{"globalWhiteAddrs":["10.0.0.*"],"plainAccessConfigs":[{"accessKey":"adminAK01","secretKey":"leaked-secret","admin":true,"defaultTopicPerm":"DENY","defaultGroupPerm":"DENY","topicPerms":["A=PUB","B=SUB"],"groupPerms":[]}]}`)
			return r
		case transport.UpdateAndCreateACLConfig:
			return transport.NewResponse(transport.Success, "")
		case transport.DeleteACLConfig:
			return transport.NewResponse(transport.DeleteACLConfigFailed, "no such account: accessKey=nobody123")
		}
		return transport.NewResponse(transport.RequestCodeNotSupported, "")
	}
	srv := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0"}, transport.HandlerFunc(h))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	creds := sign.Credentials{AccessKey: "adminAK01", SecretKey: "admin-secret"}
	c := New(Config{BrokerAddr: srv.Addr(), Timeout: 2 * time.Second, Credentials: creds})
	defer c.Close()
	ctx := context.Background()

	cs, err := c.ACLList(ctx, "", "")
	if err != nil || len(cs) != 1 || len(cs[0].Accounts) != 1 {
		t.Fatalf("list %+v %v", cs, err)
	}
	out := ACLListTable(cs).String()
	if strings.Contains(out, "leaked-secret") || !strings.Contains(out, "adminAK01") || !strings.Contains(out, "A=PUB,B=SUB") ||
		!strings.Contains(out, "10.0.0.*") {
		t.Fatalf("list table:\n%s", out)
	}
	topics := "Orders=PUB"
	rs, err := c.ACLSet(ctx, ACLAccountSpec{AccessKey: "newProducer", SecretKey: "new-secret", TopicPerms: &topics}, "", "")
	if err != nil || FirstError(rs) != nil {
		t.Fatalf("set %+v %v", rs, err)
	}
	rs, err = c.ACLDelete(ctx, "nobody123", "", "")
	if err != nil || FirstError(rs) == nil || !strings.Contains(FirstError(rs).Error(), "no such account") {
		t.Fatalf("delete unknown: %+v %v", rs, err)
	}
	for len(seen) > 0 {
		req := <-seen
		if !sign.VerifyRequest("admin-secret", req.Fields(), req.Body) {
			t.Errorf("%s not signed with the admin credentials", req.RequestCode())
		}
		if req.RequestCode() == transport.UpdateAndCreateACLConfig {
			e := req.Fields()
			if e["accessKey"] != "newProducer" || e["secretKey"] != "new-secret" || e["admin"] != "false" || e["topicPerms"] != "Orders=PUB" {
				t.Errorf("code 50 ext %v", e)
			}
			if _, sent := e["groupPerms"]; sent {
				t.Errorf("code 50 sent groupPerms, which was not given: %v", e)
			}
		}
	}
}
