package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/config"
	"github.com/rocketraft/rocketraft/internal/proctest"
)

// fakeLookup answers from a table and counts its calls.
type fakeLookup struct {
	answers map[string][]netip.Addr
	calls   int
}

func (f *fakeLookup) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	f.calls++
	if a, ok := f.answers[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

func TestStoreHost(t *testing.T) {
	f := &fakeLookup{answers: map[string][]netip.Addr{
		"broker-a-0.broker-a.rocketraft.svc.cluster.local": addrs("fd00::7", "10.244.1.7"),
		"v6only":  addrs("fd00::8"),
		"mapped":  addrs("::ffff:10.0.0.9"),
		"nothing": {},
		"wild":    addrs("0.0.0.0"),
	}}
	for _, tc := range []struct {
		addr, want, errHas string
		lookups            int
	}{
		{addr: "10.0.0.5:10911", want: "10.0.0.5:10911"},
		{addr: "[fd00::5]:10911", want: "[fd00::5]:10911"},
		{addr: "broker-a-0.broker-a.rocketraft.svc.cluster.local:10911", want: "10.244.1.7:10911", lookups: 1},
		{addr: "v6only:10911", want: "[fd00::8]:10911", lookups: 1},
		{addr: "mapped:10911", want: "10.0.0.9:10911", lookups: 1},
		{addr: "missing:10911", errHas: `brokerIP1="missing"`, lookups: 1},
		{addr: "nothing:10911", errHas: "no addresses", lookups: 1},
		{addr: "wild:10911", errHas: "cannot connect", lookups: 1},
		{addr: "host:0", errHas: "listenPort"},
		{addr: "no-port", errHas: "no-port"},
	} {
		f.calls = 0
		got, err := storeHost(tc.addr, f.lookup)
		if f.calls != tc.lookups {
			t.Errorf("%s: %d lookups, want %d (an IP must not be resolved)", tc.addr, f.calls, tc.lookups)
		}
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%s: err = %v, want one containing %q", tc.addr, err, tc.errHas)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("%s: storeHost = %s, %v; want %s", tc.addr, got, err, tc.want)
		}
	}
}

func TestStoreHostSystemResolverLocalhost(t *testing.T) {
	got, err := storeHost("localhost:10911", systemLookup)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Addr().IsLoopback() || got.Port() != 10911 {
		t.Fatalf("localhost:10911 resolved to %s, want a loopback address", got)
	}
}

// nodeConfig with host names everywhere: raft's configuration and this node's
// advertised address keep the names, only STOREHOST is an IP.
func TestNodeConfigKeepsHostNames(t *testing.T) {
	ports := proctest.TestPorts(t, 3)
	conf := fmt.Sprintf(`brokerIP1=localhost
listenPort=10911
storePathRootDir=%s
dLegerPeers=n0-localhost:%d;n1-localhost:%d;n2-localhost:%d
dLegerSelfId=n1
adminListen=
`, t.TempDir(), ports[0], ports[1], ports[2])
	cfg, err := config.ParseBroker([]byte(conf), config.FormatProperties)
	if err != nil {
		t.Fatal(err)
	}
	ncfg, err := nodeConfig(cfg, newRaftPeers(cfg), hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("nodeConfig: %v", err)
	}
	defer ncfg.Transport.(*raft.NetworkTransport).Close()
	if want := fmt.Sprintf("localhost:%d", ports[1]); string(ncfg.Transport.LocalAddr()) != want {
		t.Errorf("advertised raft address %s, want %s", ncfg.Transport.LocalAddr(), want)
	}
	for i, p := range ncfg.Peers {
		if want := fmt.Sprintf("localhost:%d", ports[i]); string(p.Address) != want {
			t.Errorf("peer %s address %s, want %s (resolved into the configuration?)", p.ID, p.Address, want)
		}
	}
	if !ncfg.StoreHost.Addr().IsLoopback() || ncfg.StoreHost.Port() != 10911 {
		t.Errorf("StoreHost = %s, want localhost resolved with listenPort 10911", ncfg.StoreHost)
	}
}

func TestNodeConfigUnresolvableBrokerIP1(t *testing.T) {
	cfg := config.DefaultBroker()
	cfg.BrokerIP1 = "no-such-host.invalid"
	_, err := nodeConfig(cfg, newRaftPeers(cfg), hclog.NewNullLogger())
	var dns *net.DNSError
	if err == nil || !strings.Contains(err.Error(), `brokerIP1="no-such-host.invalid"`) || !errors.As(err, &dns) {
		t.Fatalf("err = %v, want a DNS error naming brokerIP1", err)
	}
}
