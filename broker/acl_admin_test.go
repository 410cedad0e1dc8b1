package broker

import (
	"bytes"
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/transport/sign"

	"github.com/rocketraft/rocketraft/broker/auth"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/transport"
)

// TestACLAdminCodesOverTheWire: an admin creates an account through code 50
// sent to a follower (forwarded to the leader, replicated back: the fake
// mirrors the leader's document to the follower), the account works on both
// nodes, a non-admin cannot use code 50, code 54 carries no secret, and code
// 51 revokes the account everywhere.
func TestACLAdminCodesOverTheWire(t *testing.T) {
	leader := startTestBroker(t, replica.RoleLeader, nil, withACL(t))
	follower := startTestBroker(t, replica.RoleFollower, []Peer{{ID: "n0", ClientAddr: leader.b.Addr()}}, withACL(t))
	leader.replica.MirrorACLTo(follower.replica)
	admin := func(ext map[string]string) map[string]string { return signed("adminAK01", "admin-secret", ext, nil) }

	create := map[string]string{"accessKey": "newProducer", "secretKey": "new-producer-secret", "topicPerms": "Orders=PUB"}
	if r := follower.call(t, transport.UpdateAndCreateACLConfig, signed("producerAK", "producer-secret", create, nil), nil); r.ResponseCode() != transport.NoPermission {
		t.Fatalf("code 50 from a non-admin: %s %q", r.ResponseCode(), r.Remark)
	}
	if _, _, ok := leader.replica.ACLDocument(); ok {
		t.Fatal("a non-admin's code 50 changed the ACL")
	}
	if r := follower.call(t, transport.UpdateAndCreateACLConfig, admin(create), nil); r.ResponseCode() != transport.Success {
		t.Fatalf("code 50 from the admin through the follower: %s %q", r.ResponseCode(), r.Remark)
	}
	body := []byte("from the new account")
	send := func(tb *testBroker, ak, sk string) *transport.Command {
		return tb.call(t, transport.SendMessage, signed(ak, sk, sendExt("Orders", 0, ""), body), body)
	}
	for name, tb := range map[string]*testBroker{"leader": leader, "follower": follower} {
		if r := send(tb, "newProducer", "new-producer-secret"); r.ResponseCode() != transport.Success {
			t.Fatalf("new account on the %s: %s %q", name, r.ResponseCode(), r.Remark)
		}
		r := tb.call(t, transport.GetBrokerClusterACLConfig, admin(nil), nil)
		if r.ResponseCode() != transport.Success || !bytes.Contains(r.Body, []byte(`"newProducer"`)) {
			t.Fatalf("code 54 on the %s: %s %q %s", name, r.ResponseCode(), r.Remark, r.Body)
		}
		for _, secret := range []string{"new-producer-secret", "producer-secret", "admin-secret"} {
			if bytes.Contains(r.Body, []byte(secret)) {
				t.Fatalf("code 54 on the %s returns a secret: %s", name, r.Body)
			}
		}
		info := tb.call(t, transport.GetBrokerClusterACLInfo, admin(nil), nil)
		if info.ResponseCode() != transport.Success || !bytes.Contains([]byte(info.Field("version")), []byte(`"counter":1`)) {
			t.Fatalf("code 52 on the %s: %s %v", name, info.ResponseCode(), info.Fields())
		}
	}
	if r := follower.call(t, transport.DeleteACLConfig, admin(map[string]string{"accessKey": "newProducer"}), nil); r.ResponseCode() != transport.Success {
		t.Fatalf("code 51: %s %q", r.ResponseCode(), r.Remark)
	}
	for name, tb := range map[string]*testBroker{"leader": leader, "follower": follower} {
		if r := send(tb, "newProducer", "new-producer-secret"); r.ResponseCode() != transport.NoPermission {
			t.Fatalf("deleted account on the %s: %s %q", name, r.ResponseCode(), r.Remark)
		}
		if r := send(tb, "producerAK", "producer-secret"); r.ResponseCode() != transport.Success {
			t.Fatalf("the file's account on the %s after the edits: %s %q", name, r.ResponseCode(), r.Remark)
		}
	}
	// mqadmin `deleteAclConfig -c` sends 51 to every node: after the follower's
	// delete the leader finds no account and must answer 0, replicating nothing.
	if r := leader.call(t, transport.DeleteACLConfig, admin(map[string]string{"accessKey": "newProducer"}), nil); r.ResponseCode() != transport.Success {
		t.Fatalf("code 51 for an already deleted key: %s %q", r.ResponseCode(), r.Remark)
	}
	if info := leader.call(t, transport.GetBrokerClusterACLInfo, admin(nil), nil); !bytes.Contains([]byte(info.Field("version")), []byte(`"counter":2`)) {
		t.Fatalf("code 52 after the repeated delete: %s %v", info.ResponseCode(), info.Fields())
	}
}

// TestACLReplicatedSurvivesLeaderCrash: with raft for real, an ACL set on the
// leader is enforced by every node at the index it applied it, and by the new
// leader after the old one crashes.
func TestACLReplicatedSurvivesLeaderCrash(t *testing.T) {
	file, err := auth.Parse([]byte(testACL))
	if err != nil {
		t.Fatal(err)
	}
	c := testcluster.New(t, 3, testcluster.Options{FastTimings: true})
	sources := func() map[string]*auth.Source {
		out := map[string]*auth.Source{}
		for _, m := range c.Running() {
			out[string(m.ID)] = auth.NewSource(file, replica.NewNode(m.Node(), replica.NodeOptions{}), nil, nil)
		}
		return out
	}
	lead := c.WaitLeader(10 * time.Second)
	next, err := file.WithAccount(auth.AccountUpdate{AccessKey: "rotatedAK", SecretKey: "rotated-secret", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	if next, err = next.WithoutAccount("adminAK01"); err != nil {
		t.Fatal(err)
	}
	doc, err := next.Document()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := replica.NewNode(lead.Node(), replica.NodeOptions{}).SetACL(ctx, doc); err != nil {
		t.Fatal(err)
	}
	// A message too: a crash tears the CommitLog's tail, which needs one.
	c.CreateTopic("T", 1)
	if _, err := c.Propose(ctx, [][]byte{testcluster.Message("T", 0, []byte("m"))}); err != nil {
		t.Fatal(err)
	}
	c.WaitConverged(5 * time.Second)

	check := func(id string, s *auth.Source) {
		t.Helper()
		rotated := sign.Credentials{AccessKey: "rotatedAK", SecretKey: "rotated-secret"}.SignExt(map[string]string{"topic": "T"}, nil)
		if err := s.ACL().Check(transport.UpdateAndCreateTopic, rotated, nil, netip.Addr{}); err != nil {
			t.Fatalf("%s: the new admin is refused: %v", id, err)
		}
		removed := sign.Credentials{AccessKey: "adminAK01", SecretKey: "admin-secret"}.SignExt(map[string]string{"topic": "T"}, nil)
		if err := s.ACL().Check(transport.UpdateAndCreateTopic, removed, nil, netip.Addr{}); err == nil {
			t.Fatalf("%s: the removed admin is still allowed", id)
		}
		if in := s.Current(); !in.Replicated || in.Version != 1 {
			t.Fatalf("%s: in force %+v", id, in)
		}
	}
	for id, s := range sources() {
		check(id, s)
	}
	c.CrashNode(lead.ID)
	newLead := c.WaitLeader(10 * time.Second)
	if newLead.ID == lead.ID {
		t.Fatal("the crashed node still leads")
	}
	check(string(newLead.ID), sources()[string(newLead.ID)])
	// The crashed node comes back with the document (checkpoint + log replay).
	c.RestartNode(lead.ID)
	c.WaitConverged(10 * time.Second)
	check(string(lead.ID), sources()[string(lead.ID)])
}
