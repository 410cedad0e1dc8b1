package broker

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/devcert"
)

// freeVIPPair returns a loopback client address whose port-2 is free too, as
// the VIP channel needs.
func freeVIPPair(t *testing.T) (client, vip string) {
	t.Helper()
	for range 100 {
		addr := proctest.TestAddr(t)
		_, p, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(p)
		if port < 3 {
			continue
		}
		v := fmt.Sprintf("127.0.0.1:%d", port-2)
		if ln, err := net.Listen("tcp", v); err == nil {
			_ = ln.Close()
			return addr, v
		}
	}
	t.Fatal("no free port pair p, p-2 on loopback")
	return "", ""
}

// withVIP puts the broker on a client port whose port-2 is its VIP channel.
func withVIP(t *testing.T, tlsCfg *transport.TLSConfig) func(*Config) {
	client, vip := freeVIPPair(t)
	return func(c *Config) {
		c.ListenAddr, c.ClientAddr, c.VIPListenAddr = client, client, vip
		c.Peers[0].ClientAddr = client
		c.TLS = tlsCfg
	}
}

// TestVIPChannelServesAllButPull: what a Java client with
// sendMessageWithVIPChannel (or rocketmq-dashboard) sends to listenPort-2 over
// real TCP: a send is stored, an admin request and a heartbeat are answered,
// while pulls (11, 361) get REQUEST_CODE_NOT_SUPPORTED as from Apache's fast
// server, and the same pull on the client port reads the message the VIP
// channel stored.
func TestVIPChannelServesAllButPull(t *testing.T) {
	rb := startRaftBrokerWith(t, withVIP(t, nil))
	vip := rb.b.VIPAddr()
	_, mainPort, _ := net.SplitHostPort(rb.b.Addr())
	_, vipPort, _ := net.SplitHostPort(vip)
	if p, _ := strconv.Atoi(mainPort); strconv.Itoa(p-2) != vipPort {
		t.Fatalf("VIP channel on %s, client port %s: not port-2", vip, rb.b.Addr())
	}

	send := map[string]string{"a": "pg", "b": "VipTopic", "c": "TBW102", "d": "4", "e": "0", "f": "0",
		"g": "1700000000000", "h": "0", "i": "WAIT\x01true\x02UNIQ_KEY\x01VIP1", "j": "0", "k": "false", "m": "false"}
	sent := mustOK(t, "send over the VIP channel", rb.callAt(t, vip, transport.SendMessageV2, send, []byte("over vip")))
	if sent.Field("msgId") == "" || sent.Field("queueOffset") != "0" {
		t.Fatalf("send answer ext %v", sent.Fields())
	}
	runtime := mustOK(t, "runtime info over the VIP channel", rb.callAt(t, vip, transport.GetBrokerRuntimeInfo, nil, nil))
	if len(runtime.Body) == 0 {
		t.Fatal("GET_BROKER_RUNTIME_INFO over the VIP channel has no body")
	}
	mustOK(t, "heartbeat over the VIP channel", rb.callAt(t, vip, transport.HeartBeat, nil,
		consumerHeartbeat(t, "127.0.0.1@vip", "vipGroup", "CLUSTERING", "VipTopic")))
	if err := rb.b.store.WaitDispatched(context.Background(), rb.b.store.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}

	pull := pullExt("vipGroup", "VipTopic", 0, 0, 0)
	pull["sysFlag"], pull["subscription"] = strconv.Itoa(pullFlagSubscription), "*"
	for _, code := range []transport.RequestCode{transport.PullMessage, transport.LitePullMessage} {
		if r := rb.callAt(t, vip, code, pull, nil); r.ResponseCode() != transport.RequestCodeNotSupported {
			t.Errorf("%s over the VIP channel answered %s %q, want REQUEST_CODE_NOT_SUPPORTED", code, r.ResponseCode(), r.Remark)
		}
	}
	msgs := primitive.DecodeMessage(mustOK(t, "pull on the client port", rb.call(t, transport.PullMessage, pull, nil)).Body)
	if len(msgs) != 1 || string(msgs[0].Body) != "over vip" || msgs[0].GetProperty(store.PropertyUniqKey) != "VIP1" {
		t.Fatalf("the client port pulled %d messages: %v", len(msgs), msgs)
	}
	// Clients subtract 2 from the addresses they learn, so STOREHOST (and the
	// offset msgId) is the node's own, never the VIP channel's.
	if got := msgs[0].StoreHost; got == "" || got == vip {
		t.Errorf("STOREHOST of a message sent over the VIP channel = %q (VIP channel %s)", got, vip)
	}
}

// TestVIPChannelFollowsTLSMode: with tlsMode=enforcing the VIP channel refuses
// plaintext like the client port does, and serves a TLS client.
func TestVIPChannelFollowsTLSMode(t *testing.T) {
	files, err := devcert.Write(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	serverTLS := &transport.TLSConfig{Mode: transport.TLSEnforcing, CertFile: files.Cert, KeyFile: files.Key}
	clientTLS, err := transport.ClientTLS(files.Cert, files.Key, files.CACert, nil)
	if err != nil {
		t.Fatal(err)
	}
	rb := startRaftBrokerWith(t, withVIP(t, serverTLS))
	vip := rb.b.VIPAddr()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	_, err = rb.client.Invoke(ctx, vip, transport.NewRequest(transport.GetBrokerRuntimeInfo, nil, nil))
	cancel()
	if err == nil {
		t.Fatal("a plaintext request to the enforcing VIP channel was answered")
	}
	secure := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second, TLS: clientTLS})
	defer secure.Close()
	for _, addr := range []string{vip, rb.b.Addr()} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := secure.Invoke(ctx, addr, transport.NewRequest(transport.GetBrokerRuntimeInfo, nil, nil))
		cancel()
		if err != nil {
			t.Fatalf("TLS request to %s: %v", addr, err)
		}
		mustOK(t, "runtime info over TLS at "+addr, resp)
	}
}

// TestVIPChannelPortTaken: a VIP port already in use fails Start with an error
// naming it, and leaves the client port closed.
func TestVIPChannelPortTaken(t *testing.T) {
	client, vip := freeVIPPair(t)
	ln, err := net.Listen("tcp", vip)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	st := openBrokerStore(t)
	b, err := New(Config{ClusterName: "c", BrokerName: "broker-a", ListenAddr: client, ClientAddr: client, VIPListenAddr: vip,
		SelfID: "n0", Peers: []Peer{{ID: "n0", ClientAddr: client}}}, st, fakereplica.New(st, replica.RoleLeader))
	if err != nil {
		t.Fatal(err)
	}
	err = b.Start()
	if err == nil {
		_ = b.Close()
		t.Fatal("Start succeeded with the VIP port taken")
	}
	if want := "VIP channel listen " + vip; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
	if c, err := net.DialTimeout("tcp", client, time.Second); err == nil {
		_ = c.Close()
		t.Errorf("the client port %s still listens after a failed Start", client)
	}
}
