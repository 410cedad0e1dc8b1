package proctest

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// Group is a nameserver and one three-node broker group (DefaultCluster,
// broker-a) as real processes on free loopback ports: what admin and operator
// tests need when the test is about the tool, not the cluster's shape.
type Group struct {
	Bin, Namesrv string
	ClientAddr   map[string]string // raft id (n0…n2) → client address
	RaftAddr     map[string]string // raft id → raft address
	Conf         map[string]string // raft id → its broker.conf
	Procs        map[string]*Proc  // "namesrv", "n0"… → the process
}

// StartGroup starts the group with bin, data, configs and logs under dir, each
// broker.conf ending with extra lines, and stops every process when the test
// ends (printing the tail of each log when it failed). The brokers use raft
// timeouts of half a second, so an election settles quickly; it returns once
// every process has started, not when a leader is elected.
func StartGroup(t testing.TB, bin, dir string, extra ...string) *Group {
	t.Helper()
	ports, err := FreePorts(7)
	if err != nil {
		t.Fatal(err)
	}
	g := &Group{Bin: bin, Namesrv: fmt.Sprintf("127.0.0.1:%d", ports[0]), ClientAddr: map[string]string{},
		RaftAddr: map[string]string{}, Conf: map[string]string{}, Procs: map[string]*Proc{}}
	var peers, clients []Peer
	for i := range 3 {
		id := fmt.Sprintf("n%d", i)
		g.ClientAddr[id] = fmt.Sprintf("127.0.0.1:%d", ports[1+i])
		g.RaftAddr[id] = fmt.Sprintf("127.0.0.1:%d", ports[4+i])
		peers = append(peers, Peer{ID: id, Addr: g.RaftAddr[id]})
		clients = append(clients, Peer{ID: id, Addr: g.ClientAddr[id]})
	}
	t.Cleanup(func() {
		var all []*Proc
		for _, p := range g.Procs {
			all = append(all, p)
		}
		StopAll(10*time.Second, all...)
		if t.Failed() {
			for _, p := range all {
				t.Logf("--- %s log (tail) ---\n%s", p.Name, p.Tail(3000))
			}
		}
	})
	start := func(name string, args ...string) {
		p := &Proc{Name: name, Bin: bin, Args: args, LogPath: filepath.Join(dir, name+".log")}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		g.Procs[name] = p
	}
	nsConf := filepath.Join(dir, "namesrv.conf")
	if err := (NamesrvConfig{Addr: g.Namesrv}).Write(nsConf); err != nil {
		t.Fatal(err)
	}
	start("namesrv", "namesrv", "-c", nsConf)
	for i := range 3 {
		id := fmt.Sprintf("n%d", i)
		g.Conf[id] = filepath.Join(dir, id+".conf")
		err := BrokerConfig{ClusterName: "DefaultCluster", BrokerName: "broker-a", ClientAddr: g.ClientAddr[id],
			NamesrvAddr: g.Namesrv, DataDir: filepath.Join(dir, id), Peers: peers, PeerClients: clients, SelfID: id,
			SegmentSize: SegmentSize,
			Extra: append([]string{"raftHeartbeatTimeout=500ms", "raftElectionTimeout=500ms", "raftLeaderLeaseTimeout=250ms"},
				extra...),
		}.Write(g.Conf[id])
		if err != nil {
			t.Fatal(err)
		}
		start(id, "broker", "-c", g.Conf[id])
	}
	return g
}
