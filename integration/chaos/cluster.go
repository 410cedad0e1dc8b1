package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/transport/sign"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// Names of the one group every Cluster runs.
const (
	GroupName   = "broker-a"
	ClusterName = "ChaosCluster"
)

// Errors of the harness.
var (
	ErrNoLeader     = errors.New("no leader")
	ErrNotConverged = errors.New("replicas did not converge")
)

// Options configures a Cluster. Zero values take defaults.
type Options struct {
	Bin         string // rocketraft binary (required)
	Dir         string // root of configs, logs and data dirs (required)
	Nodes       int    // default 3
	SegmentSize int64  // mappedFileSizeCommitLog, default proctest.SegmentSize
	// FlushDiskType is ASYNC_FLUSH (default) or SYNC_FLUSH. Acks never depend on it:
	// raft's log is fsynced before an entry is acknowledged.
	FlushDiskType string
	LogLevel      string // default "info"
	Logger        hclog.Logger
	// DataDirs[i], when set, is node i's storePathRootDir instead of Dir/n<i>
	// (D5 puts each on its own size-limited mount).
	DataDirs []string
	// ExtraConfig lines ("key=value") are appended to every node's config.
	ExtraConfig []string
	// ACL, when set, is a plain_acl.yml document: every node runs with
	// aclEnable=true on it, and the harness signs its own requests (runtime
	// info, raw sends, pulls, the Go producers) with Credentials.
	ACL         string
	Credentials sign.Credentials
	// Net, when set, runs every process in its own network namespace of Net
	// (its own address, fixed ports) with no proxies: raft links are direct and
	// network faults are Net's. Links is then nil.
	Net *Network
}

// Ports every process uses on its own address when Options.Net is set.
const (
	netNamesrvPort = 9876
	netClientPort  = 10911 // its VIP channel listens at 10909
	netRaftPort    = 10921
	netAdminPort   = 10931
)

// Node is one broker process of the group with its addresses.
type Node struct {
	Index      int
	ID         string // dLegerSelfId, "n<index>"
	ClientAddr string // remoting address (clients, admin requests)
	RaftAddr   string // the node's own raft listen address
	AdminAddr  string // HTTP /metrics /healthz
	DataDir    string // storePathRootDir
	Proc       *Proc
}

// StoreDir is the node's message store (CommitLog, ConsumeQueues).
func (n *Node) StoreDir() string { return filepath.Join(n.DataDir, "store") }

// Cluster is a nameserver plus one raft group of separate processes on loopback.
// Raft traffic from node i to node j goes through Links[i][j], so any pair and
// direction can be cut without root.
type Cluster struct {
	opts   Options
	log    hclog.Logger
	NSAddr string
	NS     *Proc
	Nodes  []*Node
	// Links[i][j] is the proxy node i dials to reach node j's raft port (nil on the diagonal).
	Links [][]*Proxy

	TC       *transport.Client
	nsClient *nameserver.Client
	stopOnce sync.Once
}

// StartCluster writes configs under opts.Dir, starts the proxies, the nameserver and
// every node, and waits until the nameserver lists a leader and all nodes.
func StartCluster(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	if opts.SegmentSize == 0 {
		opts.SegmentSize = proctest.SegmentSize
	}
	if opts.LogLevel == "" {
		opts.LogLevel = "info"
	}
	if opts.FlushDiskType == "" {
		opts.FlushDiskType = "ASYNC_FLUSH"
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	c, err := newCluster(opts)
	if err != nil {
		return nil, err
	}
	if err := c.NS.Start(); err != nil {
		c.StopAll()
		return nil, err
	}
	nsCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	err = proctest.WaitListening(nsCtx, c.NSAddr)
	cancel()
	if err != nil {
		c.StopAll()
		return nil, fmt.Errorf("nameserver: %w\n%s", err, c.NS.Tail(20))
	}
	for i := range c.Nodes {
		if err := c.Start(i); err != nil {
			c.StopAll()
			return nil, err
		}
	}
	if _, err := c.WaitLeader(ctx, -1, opts.Nodes); err != nil {
		c.StopAll()
		return nil, fmt.Errorf("%w\n%s", err, c.LogTails(5))
	}
	return c, nil
}

func newCluster(opts Options) (*Cluster, error) {
	n := opts.Nodes
	var ports []int
	if opts.Net == nil {
		var err error
		if ports, err = proctest.FreePorts(1 + 3*n); err != nil {
			return nil, err
		}
	} else if len(opts.Net.hosts) != n+1 {
		return nil, fmt.Errorf("chaos: Options.Net has %d hosts, need %d nodes and the nameserver", len(opts.Net.hosts), n+1)
	}
	c := &Cluster{opts: opts, log: opts.Logger}
	if opts.Net == nil {
		c.NSAddr = fmt.Sprintf("127.0.0.1:%d", ports[0])
	} else {
		c.NSAddr = fmt.Sprintf("%s:%d", opts.Net.NamesrvHost().IP, netNamesrvPort)
	}
	confDir, logDir := filepath.Join(opts.Dir, "conf"), filepath.Join(opts.Dir, "logs")
	for _, d := range []string{confDir, logDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	extra := opts.ExtraConfig
	if opts.ACL != "" {
		aclFile := filepath.Join(confDir, "plain_acl.yml")
		if err := os.WriteFile(aclFile, []byte(opts.ACL), 0o600); err != nil {
			return nil, err
		}
		extra = append(append([]string{}, extra...), "aclEnable=true", "aclFile="+aclFile)
	}
	nsConf := filepath.Join(confDir, "namesrv.conf")
	if err := (proctest.NamesrvConfig{Addr: c.NSAddr, LogLevel: opts.LogLevel}).Write(nsConf); err != nil {
		return nil, err
	}
	c.NS = c.newProc(opts.Net.hostOrNil(n), "namesrv", filepath.Join(logDir, "namesrv.log"), "namesrv", "-c", nsConf)
	for i := range n {
		nd := &Node{Index: i, ID: fmt.Sprintf("n%d", i), DataDir: filepath.Join(opts.Dir, fmt.Sprintf("n%d", i))}
		if opts.Net == nil {
			nd.ClientAddr = fmt.Sprintf("127.0.0.1:%d", ports[1+i])
			nd.RaftAddr = fmt.Sprintf("127.0.0.1:%d", ports[1+n+i])
			nd.AdminAddr = fmt.Sprintf("127.0.0.1:%d", ports[1+2*n+i])
		} else {
			ip := opts.Net.Node(i).IP
			nd.ClientAddr = fmt.Sprintf("%s:%d", ip, netClientPort)
			nd.RaftAddr = fmt.Sprintf("%s:%d", ip, netRaftPort)
			nd.AdminAddr = fmt.Sprintf("%s:%d", ip, netAdminPort)
		}
		if i < len(opts.DataDirs) && opts.DataDirs[i] != "" {
			nd.DataDir = opts.DataDirs[i]
		}
		c.Nodes = append(c.Nodes, nd)
	}
	if opts.Net == nil {
		c.Links = make([][]*Proxy, n)
	}
	for i := range c.Links {
		c.Links[i] = make([]*Proxy, n)
		for j := range n {
			if i == j {
				continue
			}
			p, err := NewProxy(fmt.Sprintf("n%d->n%d", i, j), "127.0.0.1:0", c.Nodes[j].RaftAddr, c.log)
			if err != nil {
				c.closeProxies()
				return nil, err
			}
			c.Links[i][j] = p
		}
	}
	var clients []proctest.Peer
	for _, nd := range c.Nodes {
		clients = append(clients, proctest.Peer{ID: nd.ID, Addr: nd.ClientAddr})
	}
	for i, nd := range c.Nodes {
		// Node i lists itself at its real raft address (the stream layer binds it)
		// and every other node at the proxy only node i dials.
		var peers []proctest.Peer
		for j, other := range c.Nodes {
			addr := other.RaftAddr
			if j != i && c.Links != nil {
				addr = c.Links[i][j].Addr()
			}
			peers = append(peers, proctest.Peer{ID: other.ID, Addr: addr})
		}
		conf := proctest.BrokerConfig{
			ClusterName:      ClusterName,
			BrokerName:       GroupName,
			ClientAddr:       nd.ClientAddr,
			NamesrvAddr:      c.NSAddr,
			DataDir:          nd.DataDir,
			Group:            GroupName,
			Peers:            peers,
			PeerClients:      clients,
			SelfID:           nd.ID,
			SegmentSize:      opts.SegmentSize,
			FlushDiskType:    opts.FlushDiskType,
			AutoCreateTopics: true,
			DefaultQueues:    4,
			AdminListen:      nd.AdminAddr,
			LogLevel:         opts.LogLevel,
			Extra:            extra,
		}
		path := filepath.Join(confDir, nd.ID+".conf")
		if err := conf.Write(path); err != nil {
			c.closeProxies()
			return nil, err
		}
		nd.Proc = c.newProc(opts.Net.hostOrNil(i), nd.ID, filepath.Join(logDir, nd.ID+".log"), "broker", "-c", path)
	}
	c.TC = transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	c.nsClient = nameserver.NewClient(c.TC)
	return c, nil
}

// AttachCluster is a Cluster over a group the harness did not start: the
// in-process scenarios' brokers, which run in the test process on loopback
// (integration/chaos's _test.go files). Only what the workload, the load and
// the Java producers use is there: the nameserver, the nodes' IDs and client
// addresses, and a client; it has no processes, proxies or data dirs, and
// StopAll only closes the client. nodes[i].Index must be i.
func AttachCluster(nsAddr string, nodes []Node, log hclog.Logger) *Cluster {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	c := &Cluster{opts: Options{Nodes: len(nodes), Logger: log}, log: log, NSAddr: nsAddr}
	for i := range nodes {
		n := nodes[i]
		c.Nodes = append(c.Nodes, &n)
	}
	c.TC = transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	c.nsClient = nameserver.NewClient(c.TC)
	return c
}

// Dir is the cluster's root directory (configs, logs, data dirs).
func (c *Cluster) Dir() string { return c.opts.Dir }

// SegmentSize is the CommitLog segment size every node uses.
func (c *Cluster) SegmentSize() int64 { return c.opts.SegmentSize }

// newProc is a process of the cluster, run inside host's namespace when the
// cluster has a Network (host nil: on loopback).
func (c *Cluster) newProc(host *NetHost, name, logPath string, args ...string) *Proc {
	if host == nil {
		return newProc(name, c.opts.Bin, logPath, args...)
	}
	bin, argv := host.Command(c.opts.Bin, args...)
	p := newProc(name, bin, logPath, argv...)
	p.host, p.realBin = host, c.opts.Bin
	return p
}

// Start starts node i (a new incarnation).
func (c *Cluster) Start(i int) error { return c.Nodes[i].Proc.Start() }

// Kill SIGKILLs node i and waits until it is gone.
func (c *Cluster) Kill(i int) { c.Nodes[i].Proc.Kill() }

// Stop SIGTERMs node i (SIGKILL after 15 s) and reports a clean exit.
func (c *Cluster) Stop(i int) bool { return c.Nodes[i].Proc.Stop(15 * time.Second) }

// StopAll stops every node, the nameserver and the proxies. Idempotent.
func (c *Cluster) StopAll() {
	c.stopOnce.Do(func() {
		var nodes []*proctest.Proc
		for _, n := range c.Nodes {
			if n.Proc != nil {
				nodes = append(nodes, n.Proc.Proc)
			}
		}
		proctest.StopAll(15*time.Second, nodes...)
		if c.NS != nil {
			c.NS.Stop(5 * time.Second)
		}
		c.closeProxies()
		if c.TC != nil {
			_ = c.TC.Close()
		}
	})
}

func (c *Cluster) closeProxies() {
	for _, row := range c.Links {
		for _, p := range row {
			if p != nil {
				_ = p.Close()
			}
		}
	}
}

// Net is the cluster's Network, nil on loopback.
func (c *Cluster) Net() *Network { return c.opts.Net }

// Isolate blackholes every raft link to and from node i, both directions.
// Isolate and CutOneWay act on the proxies of a loopback cluster; on a Network
// (Links nil) use its faults instead.
func (c *Cluster) Isolate(i int) {
	if c.Links == nil {
		c.log.Error("Isolate on a cluster without proxies: use Net().IsolateFromPeers", "node", i)
		return
	}
	for j := range c.Nodes {
		if j == i {
			continue
		}
		c.Links[i][j].SetBoth(Blackhole, 0)
		c.Links[j][i].SetBoth(Blackhole, 0)
	}
}

// CutOneWay drops every raft byte node from sends to node to, while to → from
// still flows: from's requests to `to` and from's answers to to's requests.
func (c *Cluster) CutOneWay(from, to int) {
	if c.Links == nil {
		c.log.Error("CutOneWay on a cluster without proxies: use Net().DropFrom", "from", from, "to", to)
		return
	}
	c.Links[from][to].Set(Forward, Blackhole, 0)
	c.Links[to][from].Set(Backward, Blackhole, 0)
}

// HealAll sets every link back to Pass and, with a Network, ends its faults.
func (c *Cluster) HealAll() {
	if c.opts.Net != nil {
		if err := c.opts.Net.Heal(); err != nil {
			c.log.Error("netns heal", "error", err)
		}
	}
	for _, row := range c.Links {
		for _, p := range row {
			if p != nil {
				p.SetBoth(Pass, 0)
			}
		}
	}
}

// BrokerAddrs asks the nameserver for the group's brokerAddrs (id → client address).
func (c *Cluster) BrokerAddrs(ctx context.Context) (map[int64]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ci, err := c.nsClient.GetClusterInfo(ctx, c.NSAddr)
	if err != nil {
		return nil, err
	}
	out := map[int64]string{}
	if bd, ok := ci.BrokerAddrTable[GroupName]; ok {
		for id, addr := range bd.BrokerAddrs {
			out[int64(id)] = addr
		}
	}
	return out, nil
}

// NodeByAddr is the index of the node with client address addr, or -1.
func (c *Cluster) NodeByAddr(addr string) int {
	for i, n := range c.Nodes {
		if n.ClientAddr == addr {
			return i
		}
	}
	return -1
}

// Leader is the node the nameserver lists as brokerId 0 (what clients use).
func (c *Cluster) Leader(ctx context.Context) (int, error) {
	addrs, err := c.BrokerAddrs(ctx)
	if err != nil {
		return -1, err
	}
	if i := c.NodeByAddr(addrs[0]); i >= 0 {
		return i, nil
	}
	return -1, fmt.Errorf("%w: brokerAddrs %v", ErrNoLeader, addrs)
}

// WaitLeader polls the nameserver until a node other than not (-1 = any) is listed
// as brokerId 0 with at least minListed addresses.
func (c *Cluster) WaitLeader(ctx context.Context, not, minListed int) (int, error) {
	var last map[int64]string
	var lastErr error
	for {
		addrs, err := c.BrokerAddrs(ctx)
		lastErr = err
		if err == nil {
			last = addrs
			if i := c.NodeByAddr(addrs[0]); i >= 0 && i != not && len(addrs) >= minListed {
				return i, nil
			}
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("%w on the nameserver (last brokerAddrs %v, last error %v): %w", ErrNoLeader, last, lastErr, ctx.Err())
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// Sign adds the harness's credentials to a request's extFields (no-op
// without Options.Credentials).
func (c *Cluster) Sign(ext map[string]string, body []byte) map[string]string {
	return c.opts.Credentials.SignExt(ext, body)
}

// RuntimeInfo is GET_BROKER_RUNTIME_INFO's table of node i.
func (c *Cluster) RuntimeInfo(ctx context.Context, i int) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := c.TC.Invoke(ctx, c.Nodes[i].ClientAddr, transport.NewRequest(transport.GetBrokerRuntimeInfo, c.Sign(nil, nil), nil))
	if err != nil {
		return nil, err
	}
	if resp.ResponseCode() != transport.Success {
		return nil, fmt.Errorf("runtime info of n%d: %s %s", i, resp.ResponseCode(), resp.Remark)
	}
	var body struct {
		Table map[string]string `json:"table"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		return nil, fmt.Errorf("runtime info of n%d: %w", i, err)
	}
	return body.Table, nil
}

// TransferLeader asks node from (the leader; a follower forwards) to hand
// leadership to node to (ROCKETRAFT_RAFT_TRANSFER_LEADER).
func (c *Cluster) TransferLeader(ctx context.Context, from, to int) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := c.TC.Invoke(ctx, c.Nodes[from].ClientAddr, transport.NewRequest(transport.RaftTransferLeader,
		c.Sign(map[string]string{"id": c.Nodes[to].ID}, nil), nil))
	if err != nil {
		return err
	}
	if resp.ResponseCode() != transport.Success {
		return fmt.Errorf("transfer n%d → n%d: %s %s", from, to, resp.ResponseCode(), resp.Remark)
	}
	return nil
}

// RaftLeader asks every running node and returns the one that says it is leader
// (-1 if none or more than one does).
func (c *Cluster) RaftLeader(ctx context.Context) int {
	leader := -1
	for i, n := range c.Nodes {
		if !n.Proc.Running() {
			continue
		}
		t, err := c.RuntimeInfo(ctx, i)
		if err != nil || !strings.EqualFold(t["role"], "leader") {
			continue
		}
		if leader >= 0 {
			return -1
		}
		leader = i
	}
	return leader
}

// WaitConverged waits until every node answers with the same appliedIndex and
// commitLogMaxOffset twice in a row (a quiet, fully replicated group).
func (c *Cluster) WaitConverged(ctx context.Context) error {
	var prev, last string
	for {
		var vals []string
		ok := true
		for i := range c.Nodes {
			t, err := c.RuntimeInfo(ctx, i)
			if err != nil {
				ok = false
				vals = append(vals, fmt.Sprintf("n%d:%v", i, err))
				continue
			}
			vals = append(vals, t["appliedIndex"]+"/"+t["commitLogMaxOffset"])
		}
		last = strings.Join(vals, " ")
		if ok && allEqual(vals) && last == prev {
			return nil
		}
		prev = last
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: appliedIndex/commitLogMaxOffset per node %s: %w", ErrNotConverged, last, ctx.Err())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func allEqual(v []string) bool {
	for _, x := range v {
		if x != v[0] {
			return false
		}
	}
	return true
}

// Goroutines reads go_goroutines from node i's /metrics.
func (c *Cluster) Goroutines(ctx context.Context, i int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.Nodes[i].AdminAddr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(f), err
		}
	}
	return 0, fmt.Errorf("go_goroutines not in /metrics of n%d", i)
}

// LogTails returns the last n lines of every process log, for a failure report.
func (c *Cluster) LogTails(n int) string {
	var b strings.Builder
	for _, p := range append([]*Proc{c.NS}, c.procs()...) {
		fmt.Fprintf(&b, "---- tail of %s (%s) ----\n%s\n", p.Name, p.LogPath, p.Tail(n))
	}
	return b.String()
}

func (c *Cluster) procs() []*Proc {
	var out []*Proc
	for _, n := range c.Nodes {
		out = append(out, n.Proc)
	}
	return out
}
