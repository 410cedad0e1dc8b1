package broker

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/transport/sign"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/rocketraft/rocketraft/broker/auth"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// testACL: a producer that may publish to Orders only, and an admin.
const testACL = `
accounts:
  - accessKey: producerAK
    secretKey: producer-secret
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - Orders=PUB
  - accessKey: adminAK01
    secretKey: admin-secret
    admin: true
`

func withACL(t *testing.T) func(*Config) {
	t.Helper()
	acl, err := auth.Parse([]byte(testACL))
	if err != nil {
		t.Fatal(err)
	}
	return func(c *Config) { c.ACL = acl }
}

// signed is ext with AccessKey and a Signature over it and body.
func signed(ak, sk string, ext map[string]string, body []byte) map[string]string {
	out := maps.Clone(ext)
	if out == nil {
		out = map[string]string{}
	}
	out["AccessKey"] = ak
	out["Signature"] = sign.Sign(sk, sign.StringToSign(out, body, nil))
	return out
}

// TestACLDeniesAndChangesNothing: over the wire, every way to be refused gets
// NO_PERMISSION with a reason, stores nothing, and leaves the connection
// usable; the right key works.
func TestACLDeniesAndChangesNothing(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil, withACL(t))
	body := []byte("order 1")
	good := signed("producerAK", "producer-secret", sendExt("Orders", 0, ""), body)
	if r := tb.call(t, transport.SendMessage, good, body); r.ResponseCode() != transport.Success {
		t.Fatalf("signed send to an allowed topic: %s %q", r.ResponseCode(), r.Remark)
	}
	tampered := maps.Clone(good)
	tampered["queueId"] = "1"
	cases := []struct {
		name   string
		code   transport.RequestCode
		ext    map[string]string
		body   []byte
		reason string
	}{
		{"unsigned", transport.SendMessage, sendExt("Orders", 0, ""), body, "not signed"},
		{"unknown account", transport.SendMessage, signed("nobody123", "whatever1", sendExt("Orders", 0, ""), body), body, "no account"},
		{"wrong secret", transport.SendMessage, signed("producerAK", "not-the-secret", sendExt("Orders", 0, ""), body), body, "signature check failed"},
		{"tampered header", transport.SendMessage, tampered, body, "signature check failed"},
		{"tampered body", transport.SendMessage, good, []byte("order 2"), "signature check failed"},
		{"denied topic", transport.SendMessage, signed("producerAK", "producer-secret", sendExt("Payments", 0, ""), body), body, "topic Payments"},
		{"non-admin admin code", transport.UpdateAndCreateTopic, signed("producerAK", "producer-secret", map[string]string{"topic": "Evil"}, nil), nil, "needs an admin account"},
		{"non-admin raft code", transport.RaftRemoveServer, signed("producerAK", "producer-secret", map[string]string{"id": "n0"}, nil), nil, "needs an admin account"},
	}
	for _, c := range cases {
		r := tb.call(t, c.code, c.ext, c.body)
		if r.ResponseCode() != transport.NoPermission || !strings.Contains(r.Remark, c.reason) {
			t.Errorf("%s: %s %q, want NO_PERMISSION naming %q", c.name, r.ResponseCode(), r.Remark, c.reason)
		}
		if strings.Contains(r.Remark, "producer-secret") || strings.Contains(r.Remark, "admin-secret") {
			t.Errorf("%s: remark leaks a secret: %q", c.name, r.Remark)
		}
	}
	if n := tb.replica.PutCount(); n != 1 {
		t.Fatalf("%d entries stored, want only the allowed send", n)
	}
	if _, ok := tb.replica.Topic("Evil"); ok {
		t.Fatal("a non-admin created a topic")
	}
	admin := signed("adminAK01", "admin-secret", map[string]string{"topic": "Made", "readQueueNums": "2", "writeQueueNums": "2"}, nil)
	if r := tb.call(t, transport.UpdateAndCreateTopic, admin, nil); r.ResponseCode() != transport.Success {
		t.Fatalf("admin create topic: %s %q", r.ResponseCode(), r.Remark)
	}
}

// TestACLForwardedWriteKeepsTheCallersIdentity: a follower checks a request
// before relaying it, and the leader checks it again with the caller's own
// signature (the forwarding marker is not part of it), so sending to a
// follower gains nothing.
func TestACLForwardedWriteKeepsTheCallersIdentity(t *testing.T) {
	leader := startTestBroker(t, replica.RoleLeader, nil, withACL(t))
	follower := startTestBroker(t, replica.RoleFollower, []Peer{{ID: "n0", ClientAddr: leader.b.Addr()}}, withACL(t))
	body := []byte("via follower")
	r := follower.call(t, transport.SendMessage, signed("producerAK", "producer-secret", sendExt("Orders", 0, ""), body), body)
	if r.ResponseCode() != transport.Success {
		t.Fatalf("signed send through the follower: %s %q", r.ResponseCode(), r.Remark)
	}
	if leader.replica.PutCount() != 1 {
		t.Fatalf("leader stored %d entries", leader.replica.PutCount())
	}
	r = follower.call(t, transport.SendMessage, signed("producerAK", "producer-secret", sendExt("Payments", 0, ""), body), body)
	if r.ResponseCode() != transport.NoPermission {
		t.Fatalf("denied topic through the follower: %s %q", r.ResponseCode(), r.Remark)
	}
	// A client that forges the forwarding marker straight at the leader is
	// checked like anyone else.
	forged := signed("producerAK", "producer-secret", sendExt("Payments", 0, ""), body)
	forged["rocketraftForwarded"] = "n1"
	if r := leader.call(t, transport.SendMessage, forged, body); r.ResponseCode() != transport.NoPermission {
		t.Fatalf("forged forwarding marker: %s %q", r.ResponseCode(), r.Remark)
	}
	if leader.replica.PutCount() != 1 {
		t.Fatalf("leader stored %d entries after denials", leader.replica.PutCount())
	}
}

// TestACLWithTheGoClient: the official client's WithCredentials signs what the
// broker verifies; a wrong secret and a denied topic fail with code 16.
func TestACLWithTheGoClient(t *testing.T) {
	ns := startNameserver(t, nameserver.Config{})
	st := openBrokerStore(t)
	rep := fakereplica.New(st, replica.RoleLeader)
	addr := proctest.TestAddr(t)
	cfg := Config{ClusterName: "c", BrokerName: "broker-a", ListenAddr: addr, ClientAddr: addr,
		NamesrvAddrs: []string{ns.Addr()}, SelfID: "n0", Peers: []Peer{{ID: "n0", ClientAddr: addr}}}
	withACL(t)(&cfg)
	b, err := New(cfg, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	for _, topic := range []string{"Orders", "Payments"} {
		if err := rep.UpsertTopic(context.Background(), fsmTopic(topic)); err != nil {
			t.Fatal(err)
		}
	}
	b.registerAll()
	waitRoute(t, ns.Addr(), "Orders", nil)

	send := func(name, sk, topic string) error {
		p, err := rocketmq.NewProducer(producer.WithNameServer([]string{ns.Addr()}), producer.WithGroupName("PG_"+name),
			producer.WithInstanceName(name), producer.WithRetry(0), producer.WithSendMsgTimeout(5*time.Second),
			producer.WithCredentials(primitive.Credentials{AccessKey: "producerAK", SecretKey: sk}))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = p.Shutdown() }()
		_, err = p.SendSync(context.Background(), primitive.NewMessage(topic, []byte("signed by the Go client")))
		return err
	}
	if err := send("right", "producer-secret", "Orders"); err != nil {
		t.Fatalf("right credentials: %v", err)
	}
	if err := send("wrongsecret", "not-the-secret", "Orders"); err == nil || !strings.Contains(err.Error(), "CODE: 16,") {
		t.Fatalf("wrong secret: %v, want CODE: 16", err)
	}
	if err := send("denied", "producer-secret", "Payments"); err == nil || !strings.Contains(err.Error(), "CODE: 16,") {
		t.Fatalf("denied topic: %v, want CODE: 16", err)
	}
	if n := rep.PutCount(); n != 1 {
		t.Fatalf("%d entries stored, want the one allowed send", n)
	}
}

func fsmTopic(name string) fsm.TopicConfig { return fsm.NewTopic(name, 4, fsm.PermRead|fsm.PermWrite) }
