package bench

import (
	"context"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// testBroker is a nameserver and one broker (leader of a fake replica over a
// real store) on loopback TCP: what the bench talks to, minus raft.
type testBroker struct {
	ns  string // nameserver address
	st  *store.Store
	rep *fakereplica.Replica
}

// startBroker starts a nameserver and a broker serving topics (name → queue
// count, read and write), registered before it returns.
func startBroker(t *testing.T, topics map[string]int32) *testBroker {
	t.Helper()
	ns := nameserver.New(nameserver.Config{ListenAddr: "127.0.0.1:0"}, nil)
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ns.Close() })
	st := fakereplica.OpenStore(t)
	rep := fakereplica.New(st, replica.RoleLeader)
	for name, q := range topics {
		if err := rep.UpsertTopic(context.Background(), fsm.NewTopic(name, q, fsm.PermRead|fsm.PermWrite)); err != nil {
			t.Fatal(err)
		}
	}
	addr := proctest.TestAddr(t)
	b, err := broker.New(broker.Config{ClusterName: "c", BrokerName: "broker-a", ListenAddr: addr, ClientAddr: addr,
		NamesrvAddrs: []string{ns.Addr()}, SelfID: "n0", Peers: []broker.Peer{{ID: "n0", ClientAddr: addr}},
		LongPollingEnable: true, AutoCreateTopicEnable: true}, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	for name := range topics {
		waitRoute(t, ns.Addr(), name)
	}
	return &testBroker{ns: ns.Addr(), st: st, rep: rep}
}

// waitRoute waits until the nameserver serves a route for topic.
func waitRoute(t *testing.T, nsAddr, topic string) {
	t.Helper()
	c := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	defer c.Close()
	ns := nameserver.NewClient(c)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		rd, err := ns.GetRoute(ctx, nsAddr, topic)
		cancel()
		if err == nil && len(rd.QueueDatas) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no route for %s at the nameserver: %v", topic, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// queueLengths counts the stored messages of every queue of topic.
func queueLengths(t *testing.T, st *store.Store, topic string, queues int32) []int {
	t.Helper()
	out := make([]int, queues)
	for q := range queues {
		out[q] = len(fakereplica.ReadQueue(t, st, topic, q))
	}
	return out
}
