package broker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

type leadershipAnswer struct {
	BrokerName string                     `json:"brokerName"`
	Node       string                     `json:"node"`
	Events     []replica.LeadershipChange `json:"events"`
}

// TestLeadershipHistoryOverTheWire runs a real three-node group with a broker
// on every node, transfers leadership through the admin code, then cuts the
// new leader off, and reads each node's ROCKETRAFT_LEADERSHIP_HISTORY: the
// causes must say what happened, as each node saw it.
func TestLeadershipHistoryOverTheWire(t *testing.T) {
	group := testcluster.New(t, 3, testcluster.Options{FastTimings: true})
	group.WaitLeader(10 * time.Second)
	ns := startNameserver(t, nameserver.Config{})
	addrs := map[raft.ServerID]string{}
	var peers []Peer
	for _, m := range group.Members() {
		addrs[m.ID] = proctest.TestAddr(t)
		peers = append(peers, Peer{ID: string(m.ID), ClientAddr: addrs[m.ID]})
	}
	for _, m := range group.Members() {
		cfg := Config{ClusterName: "c", BrokerName: "broker-a", ListenAddr: addrs[m.ID], ClientAddr: addrs[m.ID],
			NamesrvAddrs: []string{ns.Addr()}, SelfID: string(m.ID), Peers: peers, MaxMessageSize: 1 << 20}
		b, err := New(cfg, m.Node().Store(), replica.NewNode(m.Node(), replica.NodeOptions{}))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
	}
	c := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	t.Cleanup(func() { c.Close() })
	ask := func(id raft.ServerID, code transport.RequestCode, ext map[string]string) *transport.Command {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		resp, err := c.Invoke(ctx, addrs[id], transport.NewRequest(code, ext, nil))
		if err != nil {
			t.Fatalf("%s at %s: %v", code, id, err)
		}
		if resp.ResponseCode() != transport.Success {
			t.Fatalf("%s at %s: %s %s", code, id, resp.ResponseCode(), resp.Remark)
		}
		return resp
	}
	history := func(id raft.ServerID) leadershipAnswer {
		t.Helper()
		var a leadershipAnswer
		if err := json.Unmarshal(ask(id, transport.LeadershipHistory, nil).Body, &a); err != nil {
			t.Fatal(err)
		}
		if a.BrokerName != "broker-a" || a.Node != string(id) {
			t.Fatalf("history of %s names %s/%s", id, a.BrokerName, a.Node)
		}
		return a
	}

	// Every node starts with the first leader it saw, as a restart.
	for _, m := range group.Members() {
		deadline := time.Now().Add(5 * time.Second)
		h := history(m.ID)
		for len(h.Events) == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			h = history(m.ID)
		}
		if len(h.Events) == 0 || h.Events[0].Cause != "restart" || h.Events[0].Leader == "" {
			t.Fatalf("%s: first events %+v, want a restart with a leader", m.ID, h.Events)
		}
	}
	first := group.WaitLeader(10 * time.Second)

	var target raft.ServerID
	for _, m := range group.Members() {
		if m.ID != first.ID {
			target = m.ID
			break
		}
	}
	ask(first.ID, transport.RaftTransferLeader, map[string]string{"id": string(target)})
	second := group.WaitLeaderAmong(10*time.Second, target)
	lastCause := func(id raft.ServerID, leader raft.ServerID) (replica.LeadershipChange, bool) {
		h := history(id).Events
		for i := len(h) - 1; i >= 0; i-- {
			if h[i].Leader == string(leader) {
				return h[i], true
			}
		}
		return replica.LeadershipChange{}, false
	}
	waitCause := func(id, leader raft.ServerID) replica.LeadershipChange {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			if ev, ok := lastCause(id, leader); ok {
				return ev
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never observed leader %s: %+v", id, leader, history(id).Events)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, id := range []raft.ServerID{first.ID, second.ID} {
		ev := waitCause(id, second.ID)
		if ev.Cause != "leadership_transfer" || ev.PreviousLeader != string(first.ID) || ev.Term < 2 {
			t.Errorf("%s saw the transfer as %+v, want cause leadership_transfer from %s", id, ev, first.ID)
		}
	}

	// Cut the new leader off: the others lose contact, then elect a third.
	group.Partition(second.ID)
	third := group.WaitLeaderAmong(10*time.Second, first.ID, otherThan(group, first.ID, second.ID))
	for _, m := range group.Members() {
		if m.ID == second.ID {
			continue
		}
		ev := waitCause(m.ID, third.ID)
		if ev.Cause != "election_timeout" {
			t.Errorf("%s saw the election of %s as %+v, want election_timeout", m.ID, third.ID, ev)
		}
		lost, ok := lastCause(m.ID, "")
		if !ok || lost.Cause != "lost_contact" || lost.PreviousLeader != string(second.ID) {
			t.Errorf("%s: no lost_contact of %s before the election: %+v", m.ID, second.ID, history(m.ID).Events)
		}
	}
	group.Heal()
}

func otherThan(c *testcluster.Cluster, not ...raft.ServerID) raft.ServerID {
	for _, m := range c.Members() {
		skip := false
		for _, n := range not {
			skip = skip || m.ID == n
		}
		if !skip {
			return m.ID
		}
	}
	return ""
}
