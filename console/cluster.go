package console

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/internal/admin"
	"github.com/rocketraft/rocketraft/transport"
)

// nodeDoc is one node of the cluster document (docs/console-api.md § Cluster).
type nodeDoc struct {
	Node               string   `json:"node"`
	Addr               string   `json:"addr"`
	BrokerID           int64    `json:"brokerId"`
	Up                 bool     `json:"up"`
	Error              string   `json:"error"`
	Role               string   `json:"role"`
	Term               uint64   `json:"term"`
	Leader             string   `json:"leader"`
	CommitIndex        uint64   `json:"commitIndex"`
	AppliedIndex       uint64   `json:"appliedIndex"`
	LastIndex          uint64   `json:"lastIndex"`
	LagEntries         uint64   `json:"lagEntries"`
	LagBytes           int64    `json:"lagBytes"`
	LastContact        string   `json:"lastContact"`
	LastContactMs      *float64 `json:"lastContactMs"`
	CommitLogMaxOffset int64    `json:"commitLogMaxOffset"`
	CommitLogMinOffset int64    `json:"commitLogMinOffset"`
	DiskUsedRatio      *float64 `json:"diskUsedRatio"`
	DiskTotalBytes     *uint64  `json:"diskTotalBytes"`
	DiskFreeBytes      *uint64  `json:"diskFreeBytes"`
	MsgPutTotal        int64    `json:"msgPutTotal"`
	MsgGetTotal        int64    `json:"msgGetTotal"`
	// putLatencyP99 and the raft log's write counters are kept for the
	// series, not shown in the document.
	putLatencyP99            *float64
	logWrites, logWriteNanos float64
	hasLogWrites             bool
	// logFsyncs, logFsyncNanos: the leader's deferred raft log fsync rounds
	// (decision 0015); its logWrites then time the write only.
	logFsyncs, logFsyncNanos float64
}

// groupDoc is one broker group.
type groupDoc struct {
	Cluster    string    `json:"cluster"`
	BrokerName string    `json:"brokerName"`
	Term       uint64    `json:"term"`
	Leader     string    `json:"leader"`
	LeaderAddr string    `json:"leaderAddr"`
	Voters     *int      `json:"voters"`
	Nonvoters  *int      `json:"nonvoters"`
	Healthy    int       `json:"healthy"`
	Quorum     *int      `json:"quorum"`
	Nodes      []nodeDoc `json:"nodes"`
}

// clusterDoc is GET /api/v1/cluster and the SSE "cluster" event.
type clusterDoc struct {
	Time    int64      `json:"time"`
	Namesrv []string   `json:"namesrv"`
	Groups  []groupDoc `json:"groups"`
}

// seenNode is a node the console saw registered once: it stays on the page as
// DOWN after the nameserver forgets it (a dead leader's id 0 is taken over).
type seenNode struct {
	cluster, group, node string
	brokerID             int64
	lastSeen             time.Time
}

// memory holds the nodes ever seen, by address.
type memory struct {
	mu    sync.Mutex
	nodes map[string]seenNode
}

func (m *memory) remember(n seenNode, addr string) {
	m.mu.Lock()
	if m.nodes == nil {
		m.nodes = map[string]seenNode{}
	}
	if old, ok := m.nodes[addr]; ok && n.node == "" {
		n.node = old.node // a down row keeps the id it had
	}
	m.nodes[addr] = n
	m.mu.Unlock()
}

func (m *memory) forget(addr string) {
	m.mu.Lock()
	delete(m.nodes, addr)
	m.mu.Unlock()
}

func (m *memory) all() map[string]seenNode {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.nodes)
}

// snapshot asks every node for its state. A node that does not answer is a
// DOWN row with the error; only a cluster without any nameserver answering
// fails.
func (s *Server) snapshot(ctx context.Context) (clusterDoc, error) {
	now := s.cfg.Now()
	rows, err := s.adm.Cluster(ctx)
	if err != nil {
		return clusterDoc{}, &apiError{http.StatusServiceUnavailable, codeUnavailable, "", err.Error()}
	}
	doc := clusterDoc{Time: now.UnixMilli(), Namesrv: s.cfg.Namesrv, Groups: []groupDoc{}}
	byGroup := map[string]*groupDoc{}
	var order []string
	registered := map[string]bool{}
	for _, r := range rows {
		g := byGroup[r.Group]
		if g == nil {
			g = &groupDoc{Cluster: r.Cluster, BrokerName: r.Group}
			byGroup[r.Group] = g
			order = append(order, r.Group)
		}
		registered[r.Addr] = true
		n := nodeOf(r)
		g.Nodes = append(g.Nodes, n)
		if n.Up {
			s.seen.remember(seenNode{cluster: r.Cluster, group: r.Group, node: n.Node, brokerID: n.BrokerID, lastSeen: now}, r.Addr)
		}
	}
	for addr, sn := range s.seen.all() {
		if registered[addr] {
			continue
		}
		g := byGroup[sn.group]
		if g == nil {
			g = &groupDoc{Cluster: sn.cluster, BrokerName: sn.group}
			byGroup[sn.group] = g
			order = append(order, sn.group)
		}
		why := "not registered with the nameserver since " + sn.lastSeen.UTC().Format(time.RFC3339)
		if _, _, perr := s.adm.Probe(ctx, addr, transport.GetBrokerRuntimeInfo); perr != nil {
			why = perr.Error()
		}
		g.Nodes = append(g.Nodes, nodeDoc{Node: sn.node, Addr: addr, BrokerID: -1, Role: "DOWN", Error: why})
	}
	slices.Sort(order)
	for _, name := range order {
		g := byGroup[name]
		s.fillGroup(ctx, g)
		doc.Groups = append(doc.Groups, *g)
	}
	return doc, nil
}

func nodeOf(r admin.NodeStatus) nodeDoc {
	n := nodeDoc{Node: r.SelfID, Addr: r.Addr, BrokerID: int64(r.BrokerID)}
	if r.Err != nil {
		n.Role, n.Error = "DOWN", r.Err.Error()
		return n
	}
	n.Up, n.Role, n.Term, n.Leader = true, r.Role, r.Term, r.LeaderID
	n.CommitIndex, n.AppliedIndex, n.LastIndex, n.LagEntries = r.CommitIndex, r.AppliedIndex, r.LastIndex, r.Lag
	n.LastContact, n.CommitLogMaxOffset = r.LastContact, r.CommitLogMaxOffset
	t := r.Runtime
	n.CommitLogMinOffset, _ = strconv.ParseInt(t["commitLogMinOffset"], 10, 64)
	n.MsgPutTotal, _ = strconv.ParseInt(t["msgPutTotalTodayNow"], 10, 64)
	n.MsgGetTotal, _ = strconv.ParseInt(t["msgGetTotalTodayNow"], 10, 64)
	if f, err := strconv.ParseFloat(t["commitLogDiskRatio"], 64); err == nil {
		n.DiskUsedRatio = &f
	}
	if v, err := strconv.ParseUint(t["commitLogDirTotalBytes"], 10, 64); err == nil {
		n.DiskTotalBytes = &v
	}
	if v, err := strconv.ParseUint(t["commitLogDirFreeBytes"], 10, 64); err == nil {
		n.DiskFreeBytes = &v
	}
	if f, err := strconv.ParseFloat(t["putLatency99"], 64); err == nil {
		n.putLatencyP99 = &f
	}
	w, werr := strconv.ParseFloat(t["raftLogWrites"], 64)
	ns, nerr := strconv.ParseFloat(t["raftLogWriteNanos"], 64)
	if werr == nil && nerr == nil {
		n.logWrites, n.logWriteNanos, n.hasLogWrites = w, ns, true
	}
	if f, err := strconv.ParseFloat(t["raftLogDeferredFsyncs"], 64); err == nil {
		if fns, err := strconv.ParseFloat(t["raftLogDeferredFsyncNanos"], 64); err == nil {
			n.logFsyncs, n.logFsyncNanos = f, fns
		}
	}
	if r.Role != "LEADER" {
		n.LastContactMs = lastContactMs(r.LastContact)
	}
	return n
}

// lastContactMs reads raft's last_contact ("0", "never", "12.5ms").
func lastContactMs(s string) *float64 {
	if s == "0" {
		z := 0.0
		return &z
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return nil
	}
	ms := float64(d) / float64(time.Millisecond)
	return &ms
}

// fillGroup derives the group's term, leader, byte lag and membership.
func (s *Server) fillGroup(ctx context.Context, g *groupDoc) {
	var leaderMax int64 = -1
	for _, n := range g.Nodes {
		if !n.Up {
			continue
		}
		g.Healthy++
		g.Term = max(g.Term, n.Term)
		if n.Role == "LEADER" {
			g.Leader, g.LeaderAddr, leaderMax = n.Node, n.Addr, n.CommitLogMaxOffset
		}
	}
	if g.Leader == "" { // no leader answered: the newest term's view, if any
		for _, n := range g.Nodes {
			if n.Up && n.Term == g.Term && n.Leader != "" {
				g.Leader = n.Leader
			}
		}
	}
	for i := range g.Nodes {
		if n := &g.Nodes[i]; n.Up && leaderMax > n.CommitLogMaxOffset {
			n.LagBytes = leaderMax - n.CommitLogMaxOffset
		}
	}
	slices.SortFunc(g.Nodes, func(a, b nodeDoc) int {
		return strings.Compare(a.Node+"\x00"+a.Addr, b.Node+"\x00"+b.Addr)
	})
	if peers, err := s.groupPeers(ctx, g); err == nil {
		// A remembered node that the raft configuration no longer names was
		// removed on purpose: it leaves the page.
		member := map[string]bool{}
		for _, p := range peers {
			member[p.ID] = true
		}
		g.Nodes = slices.DeleteFunc(g.Nodes, func(n nodeDoc) bool {
			gone := n.BrokerID < 0 && n.Node != "" && !member[n.Node]
			if gone {
				s.seen.forget(n.Addr)
			}
			return gone
		})
		var v, nv int
		for _, p := range peers {
			if p.Suffrage == "Voter" {
				v++
			} else {
				nv++
			}
		}
		q := v/2 + 1
		g.Voters, g.Nonvoters, g.Quorum = &v, &nv, &q
	}
}

// groupPeers reads the raft configuration from the leader, else from the
// first node that answers: during a failover the registered leader is the
// dead one.
func (s *Server) groupPeers(ctx context.Context, g *groupDoc) ([]admin.RaftPeer, error) {
	var addrs []string
	if g.LeaderAddr != "" {
		addrs = append(addrs, g.LeaderAddr)
	}
	for _, n := range g.Nodes {
		if n.Up && n.Addr != g.LeaderAddr {
			addrs = append(addrs, n.Addr)
		}
	}
	err := fmt.Errorf("group %s: no node answered", g.BrokerName)
	for _, a := range addrs {
		var ps []admin.RaftPeer
		if ps, err = s.adm.RaftPeersAt(ctx, a); err == nil {
			return ps, nil
		}
	}
	return nil, err
}

func (s *Server) getCluster(r *http.Request, _ user) (any, error) {
	return s.snapshot(r.Context())
}
