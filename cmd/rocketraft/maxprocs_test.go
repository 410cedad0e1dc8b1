package main

import (
	"net/netip"
	"runtime"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/config"
)

func TestMembersOnHost(t *testing.T) {
	local := []netip.Addr{netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("fd00::5")}
	peers := func(addrs ...string) []config.Peer {
		var ps []config.Peer
		for i, a := range addrs {
			ps = append(ps, config.Peer{ID: "n" + string(rune('0'+i)), Addr: a})
		}
		return ps
	}
	cases := []struct {
		name  string
		peers []config.Peer
		want  int
	}{
		{"three on loopback", peers("127.0.0.1:40911", "127.0.0.1:40921", "127.0.0.1:40931"), 3},
		{"loopback of any form", peers("127.0.0.1:1", "127.0.0.2:2", "[::1]:3"), 3},
		{"localhost", peers("localhost:1", "LOCALHOST:2", "127.0.0.1:3"), 3},
		{"a local interface address", peers("10.0.0.5:1", "10.0.0.5:2", "10.0.0.6:3"), 2},
		{"a local IPv6 address, mapped IPv4 too", peers("[fd00::5]:1", "[::ffff:10.0.0.5]:2", "[fd00::6]:3"), 2},
		{"one host each", peers("10.0.0.5:1", "10.0.0.6:1", "10.0.0.7:1"), 1},
		{"the same name as this node", peers("node-a.example:1", "node-a.example:2", "node-b.example:1"), 2},
		{"other names are other hosts", peers("a.example:1", "b.example:1", "c.example:1"), 1},
		{"a malformed peer address counts as elsewhere", peers("127.0.0.1:1", "nonsense", "127.0.0.1:3"), 2},
		{"a lone node", peers("127.0.0.1:1"), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := membersOnHost(c.peers, c.peers[0], local); got != c.want {
				t.Fatalf("membersOnHost = %d, want %d", got, c.want)
			}
		})
	}
}

func TestBrokerMaxProcs(t *testing.T) {
	cases := []struct {
		maxProcs, cores, onHost, want int
	}{
		{0, 2, 3, 1},  // this build machine: three nodes, two cores
		{0, 1, 3, 1},  // never below one
		{0, 16, 3, 5}, // the cores divided, rounded down
		{0, 16, 1, 16},
		{0, 16, 0, 16},
		{4, 2, 3, 4}, // the key wins over the division
		{3, 16, 1, 3},
	}
	for _, c := range cases {
		if got := brokerMaxProcs(c.maxProcs, c.cores, c.onHost); got != c.want {
			t.Errorf("brokerMaxProcs(%d, %d, %d) = %d, want %d", c.maxProcs, c.cores, c.onHost, got, c.want)
		}
	}
}

// setBrokerMaxProcs applies the division and leaves GOMAXPROCS alone when the
// variable names one.
func TestSetBrokerMaxProcs(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	cfg := config.Broker{SelfID: "n0", Peers: []config.Peer{
		{ID: "n0", Addr: "127.0.0.1:40911"}, {ID: "n1", Addr: "127.0.0.1:40921"}, {ID: "n2", Addr: "127.0.0.1:40931"},
	}}

	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(6)
	setBrokerMaxProcs(hclog.NewNullLogger(), cfg)
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("6 cores, 3 members on this host: GOMAXPROCS %d, want 2", got)
	}

	runtime.GOMAXPROCS(6)
	cfg.MaxProcs = 5
	setBrokerMaxProcs(hclog.NewNullLogger(), cfg)
	if got := runtime.GOMAXPROCS(0); got != 5 {
		t.Fatalf("maxProcs=5: GOMAXPROCS %d, want 5", got)
	}

	t.Setenv("GOMAXPROCS", "6")
	runtime.GOMAXPROCS(6)
	setBrokerMaxProcs(hclog.NewNullLogger(), cfg)
	if got := runtime.GOMAXPROCS(0); got != 6 {
		t.Fatalf("GOMAXPROCS=6 set: the broker changed it to %d", got)
	}
}
