package chaos

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// An inprocGroup is what the in-process scenarios (D1, D2, D7–D9, C1–C5)
// serve their testcluster group with, so that the real clients can load it:
// a nameserver in the test process and a real broker on every node, each
// over loopback TCP, registering with it as a deployment's would (the leader
// as brokerId 0). view is a Cluster over those addresses (AttachCluster), the
// one the Go, raw and Java producers of Load take.
//
// A broker serves one *node.Node: a node testcluster stops and opens again
// is a new one, so the scenario closes the node's broker before (or, for a
// power cut, right after) and starts a new one on the same address after
// (startBroker).
type inprocGroup struct {
	t     *testing.T
	c     *testcluster.Cluster
	ns    *nameserver.Server
	view  *Cluster
	addrs map[raft.ServerID]string
	peers []broker.Peer
	// configure adjusts every broker's config (the clock scenarios' retention
	// and transaction timings).
	configure func(*broker.Config)

	mu      sync.Mutex
	brokers map[raft.ServerID]*broker.Broker
}

// startInprocGroup starts the nameserver and a broker on every running node
// of c; everything is closed at the test's cleanup, brokers first.
func startInprocGroup(t *testing.T, c *testcluster.Cluster, configure func(*broker.Config)) *inprocGroup {
	t.Helper()
	g := &inprocGroup{t: t, c: c, addrs: map[raft.ServerID]string{}, configure: configure, brokers: map[raft.ServerID]*broker.Broker{}}
	g.ns = nameserver.New(nameserver.Config{ListenAddr: "127.0.0.1:0"}, inprocLogger().Named("ns"))
	if err := g.ns.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.ns.Close() })
	var nodes []Node
	// A port of its own per node for the life of the test, so that a broker
	// started again on its node listens where the clients know it; picked below
	// the ephemeral range, with each VIP port (listenPort-2) reserved too.
	ports, err := proctest.FreePorts(len(c.Members()))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range c.Members() {
		g.addrs[m.ID] = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[i]))
		g.peers = append(g.peers, broker.Peer{ID: string(m.ID), ClientAddr: g.addrs[m.ID]})
		nodes = append(nodes, Node{Index: i, ID: string(m.ID), ClientAddr: g.addrs[m.ID]})
	}
	g.view = AttachCluster(g.ns.Addr(), nodes, inprocLogger())
	t.Cleanup(g.view.StopAll)
	for _, m := range c.Running() {
		g.startBroker(m.ID)
	}
	t.Cleanup(g.closeBrokers) // before the group closes its nodes (last in, first out)
	return g
}

// startBroker starts a broker on id's running node.
func (g *inprocGroup) startBroker(id raft.ServerID) {
	g.t.Helper()
	m := g.c.Member(id)
	n := m.Node()
	if n == nil {
		g.t.Fatalf("start broker on %s: the node is not running", id)
	}
	idx := 0
	for i, p := range g.peers {
		if p.ID == string(id) {
			idx = i
		}
	}
	cfg := broker.Config{ClusterName: ClusterName, BrokerName: GroupName, ListenAddr: g.addrs[id], ClientAddr: g.addrs[id],
		NamesrvAddrs: []string{g.ns.Addr()}, SelfID: string(id), SelfIndex: idx, Peers: g.peers,
		MaxMessageSize: 4 << 20, AutoCreateTopicEnable: true, DefaultTopicQueueNums: 4,
		Logger: inprocLogger().Named(string(id))}
	if g.configure != nil {
		g.configure(&cfg)
	}
	b, err := broker.New(cfg, n.Store(), replica.NewNode(n, replica.NodeOptions{}))
	if err != nil {
		g.t.Fatal(err)
	}
	// The port is free: reserved at the start, or released by the Close of
	// the broker before this one (Go listens with SO_REUSEADDR).
	if err := b.Start(); err != nil {
		g.t.Fatalf("start broker on %s: %v", id, err)
	}
	g.mu.Lock()
	g.brokers[id] = b
	g.mu.Unlock()
}

// closeBroker closes id's broker, if one runs.
func (g *inprocGroup) closeBroker(id raft.ServerID) {
	g.mu.Lock()
	b := g.brokers[id]
	delete(g.brokers, id)
	g.mu.Unlock()
	if b != nil {
		_ = b.Close()
	}
}

// closeBrokers closes every broker; safe to call twice.
func (g *inprocGroup) closeBrokers() {
	for _, m := range g.c.Members() {
		g.closeBroker(m.ID)
	}
}

// createTopic creates topic with queues queues through a broker
// (UPDATE_AND_CREATE_TOPIC, forwarded to the leader), which registers it
// with the nameserver at once: the clients need its route.
func (g *inprocGroup) createTopic(topic string, queues int32) {
	g.t.Helper()
	ext := map[string]string{"topic": topic, "readQueueNums": strconv.Itoa(int(queues)), "writeQueueNums": strconv.Itoa(int(queues)), "perm": "6"}
	var last string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		r, err := g.view.TC.Invoke(ctx, g.addrs[g.c.WaitLeader(10*time.Second).ID], transport.NewRequest(transport.UpdateAndCreateTopic, ext, nil))
		cancel()
		switch {
		case err != nil:
			last = err.Error()
		case r.ResponseCode() != transport.Success:
			last = fmt.Sprintf("%s %s", r.ResponseCode(), r.Remark)
		default:
			return
		}
	}
	g.t.Fatalf("create topic %s: %s", topic, last)
}

// storedBy is the node whose leadership stored an acked send, "" if
// unknown: the STOREHOST of its offset msgId is the proposing node's, which
// testcluster sets per member (Member.StoreHost), not the broker's address.
func (g *inprocGroup) storedBy(op SendOp) raft.ServerID {
	host, _, err := store.ParseOffsetMsgID(op.BrokerMsgID)
	if err != nil {
		return ""
	}
	for _, m := range g.c.Members() {
		if m.StoreHost == host {
			return m.ID
		}
	}
	return ""
}

// unattributed counts the acked sends storedBy cannot name a node for.
func (g *inprocGroup) unattributed(sends []SendOp) (n int, first string) {
	for _, op := range sends {
		if op.Outcome == OK && g.storedBy(op) == "" {
			if n == 0 {
				first = fmt.Sprintf("%s %s msgId %q", op.Client, op.ID, op.BrokerMsgID)
			}
			n++
		}
	}
	return n, first
}
