package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// twoGroups is a nameserver and two three-node groups (broker-a, broker-b).
type twoGroups struct {
	nsAddr string
	ns     *proctest.Proc
	nodes  map[string][]*proctest.Proc // group → nodes
	addrs  map[string][]string
	nsc    *nameserver.Client
	tc     *transport.Client
}

func startTwoGroups(t *testing.T) *twoGroups {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	dir := t.TempDir()
	ports, err := proctest.FreePorts(1 + 2*2*groupSize)
	if err != nil {
		t.Fatal(err)
	}
	g := &twoGroups{nsAddr: fmt.Sprintf("127.0.0.1:%d", ports[0]), nodes: map[string][]*proctest.Proc{}, addrs: map[string][]string{}}
	nsConf := filepath.Join(dir, "namesrv.conf")
	if err := (proctest.NamesrvConfig{Addr: g.nsAddr}).Write(nsConf); err != nil {
		t.Fatal(err)
	}
	g.ns = newProc("namesrv", filepath.Join(dir, "namesrv.log"), "namesrv", "-c", nsConf)
	next := 1
	for _, name := range []string{"broker-a", "broker-b"} {
		var peers, clients []proctest.Peer
		base := next
		for i := range groupSize {
			id := fmt.Sprintf("n%d", i)
			addr := fmt.Sprintf("127.0.0.1:%d", ports[base+i])
			g.addrs[name] = append(g.addrs[name], addr)
			peers = append(peers, proctest.Peer{ID: id, Addr: fmt.Sprintf("127.0.0.1:%d", ports[base+groupSize+i])})
			clients = append(clients, proctest.Peer{ID: id, Addr: addr})
		}
		next += 2 * groupSize
		for i := range groupSize {
			id := fmt.Sprintf("n%d", i)
			conf := proctest.BrokerConfig{
				ClusterName: clusterName,
				BrokerName:  name,
				ClientAddr:  g.addrs[name][i],
				NamesrvAddr: g.nsAddr,
				DataDir:     filepath.Join(dir, name, id),
				Peers:       peers,
				PeerClients: clients,
				SelfID:      id,
				SegmentSize: proctest.SegmentSize,
			}
			path := filepath.Join(dir, name+"-"+id+".conf")
			if err := conf.Write(path); err != nil {
				t.Fatal(err)
			}
			g.nodes[name] = append(g.nodes[name], newProc(name+"-"+id, filepath.Join(dir, name+"-"+id+".log"), "broker", "-c", path))
		}
	}
	g.tc = transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	g.nsc = nameserver.NewClient(g.tc)
	t.Cleanup(func() {
		for _, ns := range g.nodes {
			for _, n := range ns {
				n.Stop(5 * time.Second)
			}
		}
		g.ns.Stop(5 * time.Second)
		g.tc.Close()
	})
	if err := g.ns.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitListening(g.nsAddr, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, ns := range g.nodes {
		for _, n := range ns {
			if err := n.Start(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return g
}

// leader returns the node index of group's brokerId 0 once it differs from notAddr.
func (g *twoGroups) leader(t *testing.T, group, notAddr string, timeout time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		ci, err := g.nsc.GetClusterInfo(ctx, g.nsAddr)
		cancel()
		if err == nil {
			if addr, ok := ci.BrokerAddrTable[group].BrokerAddrs[nameserver.MasterID]; ok && addr != notAddr {
				for i, a := range g.addrs[group] {
					if a == addr {
						return i
					}
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("group %s has no leader listed after %v", group, timeout)
	return -1
}

// TestTwoGroupsLeaderKillWriteGap: with two groups, a rocketmq-client-go producer
// with default retries sends on while broker-a's leader is SIGKILLed; its retries go
// to broker-b, so the client-observed write gap is short. Reports the gap.
func TestTwoGroupsLeaderKillWriteGap(t *testing.T) {
	requireLong(t)
	g := startTwoGroups(t)
	la := g.leader(t, "broker-a", "", 30*time.Second)
	g.leader(t, "broker-b", "", 30*time.Second)
	p, err := rocketmq.NewProducer(producer.WithNameServer([]string{g.nsAddr}), producer.WithGroupName(unique(t, "PG2")),
		producer.WithInstanceName(unique(t, "p2")))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown()
	topic := unique(t, "TG2")
	// Create the topic on both groups (auto-create would put it only on the group
	// that served the first send, as in RocketMQ).
	for _, group := range []string{"broker-a", "broker-b"} {
		addr := g.addrs[group][g.leader(t, group, "", 10*time.Second)]
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := g.tc.Invoke(ctx, addr, transport.NewRequest(transport.UpdateAndCreateTopic,
			map[string]string{"topic": topic, "readQueueNums": "4", "writeQueueNums": "4", "perm": "6"}, nil))
		cancel()
		if err != nil || resp.ResponseCode() != transport.Success {
			t.Fatalf("create %s on %s: %v %v", topic, group, resp, err)
		}
	}
	brokers := map[string]bool{}
	for i := 0; len(brokers) < 2 && i < 200; i++ {
		res, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte("warm")))
		if err == nil {
			brokers[res.MessageQueue.BrokerName] = true
		}
	}
	if len(brokers) < 2 {
		t.Fatalf("warm-up reached %v only", brokers)
	}
	time.Sleep(31 * time.Second) // one route refresh, so the producer knows both groups' queues

	var acked, failed atomic.Int64
	var lastAck atomic.Int64
	lastAck.Store(time.Now().UnixNano())
	var maxGap atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte(fmt.Sprintf("m%d", i))))
			cancel()
			if err != nil {
				failed.Add(1)
				continue
			}
			now := time.Now().UnixNano()
			if gap := now - lastAck.Swap(now); gap > maxGap.Load() {
				maxGap.Store(gap)
			}
			acked.Add(1)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	time.Sleep(3 * time.Second)
	killedAt := time.Now()
	g.nodes["broker-a"][la].Kill()
	newLeader := g.leader(t, "broker-a", g.addrs["broker-a"][la], 30*time.Second)
	registered := time.Since(killedAt)
	time.Sleep(10 * time.Second)
	close(stop)
	<-done
	gap := time.Duration(maxGap.Load())
	t.Logf("two groups: broker-a leader n%d killed; n%d listed as brokerId 0 after %v; producer acked %d, failed %d, longest gap between acks %v",
		la, newLeader, registered.Round(time.Millisecond), acked.Load(), failed.Load(), gap.Round(time.Millisecond))
	if acked.Load() == 0 {
		t.Fatal("no send was acknowledged")
	}
	if gap > 10*time.Second {
		t.Errorf("write gap %v: with two groups the client should retry on broker-b", gap)
	}
}
