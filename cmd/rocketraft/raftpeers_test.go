package main

import (
	"errors"
	"slices"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/config"
)

// The raft port accepts the peers broker.conf names and, once the node runs,
// those of the group's current configuration (a node added later); a failing
// configuration read leaves the configured ones.
func TestRaftPeersAreConfiguredAndCurrent(t *testing.T) {
	cfg := config.Broker{Peers: []config.Peer{{ID: "n0", Addr: "10.0.0.1:40911"}, {ID: "n1", Addr: "node-1.example:40911"}}}
	p := newRaftPeers(cfg)
	if got, want := p.addrs(), []string{"10.0.0.1:40911", "node-1.example:40911"}; !slices.Equal(got, want) {
		t.Fatalf("before the node runs: %v, want %v", got, want)
	}
	p.follow(func() ([]raft.Server, error) {
		return []raft.Server{{ID: "n0", Address: "10.0.0.1:40911"}, {ID: "n3", Address: "10.0.0.4:40911"}}, nil
	})
	if got := p.addrs(); !slices.Contains(got, "10.0.0.4:40911") || !slices.Contains(got, "node-1.example:40911") {
		t.Fatalf("with the node's configuration: %v, want the added n3 and the configured n1", got)
	}
	p.follow(func() ([]raft.Server, error) { return nil, errors.New("raft is shutting down") })
	if got := p.addrs(); len(got) != 2 {
		t.Fatalf("on a configuration error: %v, want the two configured peers", got)
	}
}
