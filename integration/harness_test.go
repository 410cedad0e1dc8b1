package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// envIntegration enables the long suite (failover, kill loops, timestamps).
const envIntegration = "ROCKETRAFT_INTEGRATION"

const (
	groupName   = "broker-a"
	clusterName = "ITCluster"
	groupSize   = 3
)

// binPath is the rocketraft binary built once by TestMain; empty when the build failed.
var binPath string

// buildErr says why binPath is empty; every test that needs processes fails with it.
var buildErr error

var (
	sharedOnce    sync.Once
	sharedCluster *cluster
	sharedErr     error
)

func TestMain(m *testing.M) {
	rlog.SetLogLevel("error")
	tmp, err := os.MkdirTemp("", "rocketraft-it-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: temp dir:", err)
		os.Exit(2)
	}
	// go test runs us in integration; the module root is one level up.
	binPath, buildErr = proctest.Binary("..", tmp)
	code := m.Run()
	if sharedCluster != nil {
		sharedCluster.stopAll()
	}
	_ = os.RemoveAll(tmp)
	os.Exit(code)
}

// requireLong skips a test unless the long integration suite was asked for.
func requireLong(t *testing.T) {
	t.Helper()
	if os.Getenv(envIntegration) == "" {
		t.Skipf("long integration test: set %s=1 (make integration) to run it", envIntegration)
	}
}

// newProc is a rocketraft process running binPath with args, logging to logPath.
func newProc(name, logPath string, args ...string) *proctest.Proc {
	return &proctest.Proc{Name: name, Bin: binPath, Args: args, LogPath: logPath}
}

// waitListening waits up to timeout until addr accepts TCP connections.
func waitListening(addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return proctest.WaitListening(ctx, addr)
}

// cluster is a nameserver plus one three-node raft group "broker-a", all separate
// processes on loopback ports.
type cluster struct {
	dir         string
	nsAddr      string
	ns          *proctest.Proc
	nodes       []*proctest.Proc // node i is dLegerSelfId n<i>
	clientAddrs []string         // client address of node i
	nsClient    *nameserver.Client
	tc          *transport.Client
}

// newCluster writes the configs of a fresh cluster under dir and starts every process.
func newCluster(dir string) (*cluster, error) { return newClusterOn(dir, "127.0.0.1") }

// newClusterOn is newCluster with the brokers' addresses (brokerIP1,
// dLegerPeers, dLegerPeerClientAddrs, their namesrvAddr) written with host, an
// IP or a name of the loopback interface. Clients keep the nameserver's IP:
// rocketmq-client-go refuses a nameserver address that is not one.
func newClusterOn(dir, host string) (*cluster, error) { return newClusterWith(dir, host, nil) }

// newClusterWith is newClusterOn with extra broker.conf lines for every node.
func newClusterWith(dir, host string, extra []string) (*cluster, error) {
	if buildErr != nil {
		return nil, buildErr
	}
	ports, err := proctest.FreePorts(1 + 2*groupSize)
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir, nsAddr: fmt.Sprintf("127.0.0.1:%d", ports[0])}
	brokersNamesrv := fmt.Sprintf("%s:%d", host, ports[0])
	confDir := filepath.Join(dir, "conf")
	logDir := filepath.Join(dir, "logs")
	for _, d := range []string{confDir, logDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	nsConf := filepath.Join(confDir, "namesrv.conf")
	if err := (proctest.NamesrvConfig{Addr: c.nsAddr, LogLevel: "debug"}).Write(nsConf); err != nil {
		return nil, err
	}
	c.ns = newProc("namesrv", filepath.Join(logDir, "namesrv.log"), "namesrv", "-c", nsConf)

	var peers, clients []proctest.Peer
	for i := range groupSize {
		id := fmt.Sprintf("n%d", i)
		addr := fmt.Sprintf("%s:%d", host, ports[1+i])
		c.clientAddrs = append(c.clientAddrs, addr)
		peers = append(peers, proctest.Peer{ID: id, Addr: fmt.Sprintf("%s:%d", host, ports[1+groupSize+i])})
		clients = append(clients, proctest.Peer{ID: id, Addr: addr})
	}
	for i := range groupSize {
		id := fmt.Sprintf("n%d", i)
		conf := proctest.BrokerConfig{
			ClusterName:      clusterName,
			BrokerName:       groupName,
			ClientAddr:       c.clientAddrs[i],
			NamesrvAddr:      brokersNamesrv,
			DataDir:          filepath.Join(dir, id),
			Group:            groupName,
			Peers:            peers,
			PeerClients:      clients,
			SelfID:           id,
			SegmentSize:      proctest.SegmentSize,
			AutoCreateTopics: true,
			DefaultQueues:    4,
			LogLevel:         "debug",
			Extra:            extra,
		}
		path := filepath.Join(confDir, id+".conf")
		if err := conf.Write(path); err != nil {
			return nil, err
		}
		c.nodes = append(c.nodes, newProc(id, filepath.Join(logDir, id+".log"), "broker", "-c", path))
	}
	c.tc = transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	c.nsClient = nameserver.NewClient(c.tc)

	if err := c.ns.Start(); err != nil {
		return nil, err
	}
	if err := waitListening(c.nsAddr, 10*time.Second); err != nil {
		c.stopAll()
		return nil, fmt.Errorf("nameserver: %w\n%s", err, c.ns.Tail(20))
	}
	for _, n := range c.nodes {
		if err := n.Start(); err != nil {
			c.stopAll()
			return nil, err
		}
	}
	return c, nil
}

// startCluster starts a private cluster for one test, registers its cleanup and
// waits for a leader with all three nodes listed.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	return startClusterOn(t, "127.0.0.1")
}

// startClusterOn is startCluster on newClusterOn(host).
func startClusterOn(t *testing.T, host string) *cluster {
	t.Helper()
	return startClusterWith(t, host, nil)
}

// startClusterWith is startClusterOn with extra broker.conf lines for every node.
func startClusterWith(t *testing.T, host string, extra []string) *cluster {
	t.Helper()
	c, err := newClusterWith(t.TempDir(), host, extra)
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			c.dumpLogs(t)
		}
		c.stopAll()
	})
	if _, err := c.waitLeader(30*time.Second, "", groupSize); err != nil {
		t.Fatalf("cluster never elected a leader: %v", err)
	}
	return c
}

// shared returns the cluster shared by the short tests, starting it on first use.
func shared(t *testing.T) *cluster {
	t.Helper()
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rocketraft-it-shared-")
		if err != nil {
			sharedErr = err
			return
		}
		c, err := newCluster(dir)
		if err != nil {
			sharedErr = err
			return
		}
		sharedCluster = c
		if _, err := c.waitLeader(30*time.Second, "", groupSize); err != nil {
			sharedErr = fmt.Errorf("no leader: %w", err)
		}
	})
	if sharedErr != nil {
		if sharedCluster != nil {
			sharedCluster.dumpLogs(t)
		}
		t.Fatalf("shared cluster: %v", sharedErr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			sharedCluster.dumpLogs(t)
		}
	})
	return sharedCluster
}

func (c *cluster) stopAll() {
	proctest.StopAll(10*time.Second, c.nodes...)
	c.ns.Stop(5 * time.Second)
	_ = c.tc.Close()
	if strings.Contains(filepath.Base(c.dir), "rocketraft-it-shared-") {
		_ = os.RemoveAll(c.dir)
	}
}

func (c *cluster) dumpLogs(t *testing.T) {
	t.Helper()
	for _, p := range append([]*proctest.Proc{c.ns}, c.nodes...) {
		t.Logf("---- tail of %s log (%s) ----\n%s", p.Name, p.LogPath, p.Tail(60))
	}
}

// brokerAddrs asks the nameserver for the group's brokerAddrs (id → client address).
func (c *cluster) brokerAddrs() (map[int64]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ci, err := c.nsClient.GetClusterInfo(ctx, c.nsAddr)
	if err != nil {
		return nil, err
	}
	bd, ok := ci.BrokerAddrTable[groupName]
	if !ok {
		return map[int64]string{}, nil
	}
	out := make(map[int64]string, len(bd.BrokerAddrs))
	for id, addr := range bd.BrokerAddrs {
		out[int64(id)] = addr
	}
	return out, nil
}

var errNoLeader = errors.New("no leader listed")

// waitLeader polls the nameserver until brokerAddrs[0] is listed, differs from notAddr
// and at least minNodes addresses are listed. It returns the leader's node index.
func (c *cluster) waitLeader(timeout time.Duration, notAddr string, minNodes int) (int, error) {
	deadline := time.Now().Add(timeout)
	var last map[int64]string
	var lastErr error
	for time.Now().Before(deadline) {
		addrs, err := c.brokerAddrs()
		lastErr = err
		if err == nil {
			last = addrs
			if leader, ok := addrs[0]; ok && leader != notAddr && len(addrs) >= minNodes {
				if i := c.nodeIndex(leader); i >= 0 {
					return i, nil
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return -1, fmt.Errorf("%w after %v (last brokerAddrs %v, last error %v)", errNoLeader, timeout, last, lastErr)
}

func (c *cluster) nodeIndex(addr string) int {
	for i, a := range c.clientAddrs {
		if a == addr {
			return i
		}
	}
	return -1
}
