package broker

import (
	"testing"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/nameserver"
)

const groupSecret = "broker-a-group-secret-0123"

// startRegisteringBroker starts a leader of broker-a that registers with nsAddr,
// signing with secret ("" = unsigned), and returns its advertised address.
func startRegisteringBroker(t *testing.T, nsAddr, secret string) (*Broker, string) {
	t.Helper()
	st := openBrokerStore(t)
	rep := fakereplica.New(st, replica.RoleLeader)
	if err := rep.UpsertTopic(t.Context(), fsmTopic("Orders")); err != nil {
		t.Fatal(err)
	}
	addr := proctest.TestAddr(t)
	b, err := New(Config{ClusterName: "c", BrokerName: "broker-a", ListenAddr: addr, ClientAddr: addr,
		NamesrvAddrs: []string{nsAddr}, SelfID: "n0", Peers: []Peer{{ID: "n0", ClientAddr: addr}},
		NamesrvAuthSecret: secret}, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b, addr
}

// Without brokerAuthFile a fake broker-a at id 0 takes the route: the attack
// the next test shows refused.
func TestWithoutBrokerAuthAFakeTakesTheRoute(t *testing.T) {
	ns := startNameserver(t, nameserver.Config{})
	startRegisteringBroker(t, ns.Addr(), "")
	waitRoute(t, ns.Addr(), "Orders", nil)
	fake, fakeAddr := startRegisteringBroker(t, ns.Addr(), "")
	fake.registerAll()
	if got := ns.Registry().ClusterInfo().BrokerAddrTable["broker-a"].BrokerAddrs[nameserver.MasterID]; got != fakeAddr {
		t.Fatalf("broker-a master = %q, want the fake %s (the control case)", got, fakeAddr)
	}
}

// A broker with its group's namesrvAuthSecret registers with a nameserver that
// has brokerAuthFile; a second broker claiming the same group as brokerId 0
// without the secret, or with another, is refused and the route keeps naming
// the first. Its unregistration (at Close) is refused too.
func TestNamesrvAuthSecretRegisters(t *testing.T) {
	secrets, err := nameserver.ParseBrokerSecrets([]byte("brokers:\n  - brokerName: broker-a\n    secret: " + groupSecret + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	ns := startNameserver(t, nameserver.Config{BrokerAuth: secrets})
	master := func() string {
		bd, ok := ns.Registry().ClusterInfo().BrokerAddrTable["broker-a"]
		if !ok {
			return ""
		}
		return bd.BrokerAddrs[nameserver.MasterID]
	}

	_, realAddr := startRegisteringBroker(t, ns.Addr(), groupSecret)
	waitRoute(t, ns.Addr(), "Orders", nil)
	if got := master(); got != realAddr {
		t.Fatalf("broker-a master = %q, want the signed broker %s", got, realAddr)
	}
	for _, secret := range []string{"", "another-secret-of-16+chars"} {
		fake, _ := startRegisteringBroker(t, ns.Addr(), secret)
		fake.registerAll() // Start registers in the background; this one is synchronous
		if got := master(); got != realAddr {
			t.Fatalf("secret %q: broker-a master = %q, want %s", secret, got, realAddr)
		}
		fake.unregisterAll()
		if got := master(); got != realAddr {
			t.Fatalf("secret %q: unregistration removed the master (now %q)", secret, got)
		}
	}
}
