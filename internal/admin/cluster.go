package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// runtimeInfo reads GET_BROKER_RUNTIME_INFO's table from one node.
func (c *Client) runtimeInfo(ctx context.Context, addr string) (map[string]string, error) {
	resp, err := c.call(ctx, addr, transport.GetBrokerRuntimeInfo, nil)
	if err != nil {
		return nil, err
	}
	var body struct {
		Table map[string]string `json:"table"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		return nil, fmt.Errorf("runtime info broker=%s: %v: %w", addr, err, ErrBadAnswer)
	}
	return body.Table, nil
}

// NodeStatus is one node of the cluster view.
type NodeStatus struct {
	Cluster  string
	Group    string
	BrokerID nameserver.BrokerID
	Addr     string
	// Err is set when the node did not answer; the raft fields are then zero.
	Err      error
	SelfID   string
	Role     string
	Term     uint64
	LeaderID string
	// AppliedIndex is the last entry applied (raft's count, FSM or not).
	AppliedIndex uint64
	CommitIndex  uint64
	LastIndex    uint64
	// Lag is how many committed entries this node has still to apply, measured
	// against the highest commit index any node of its group reported.
	Lag                uint64
	CommitLogMaxOffset int64
	LastContact        string
	// Runtime is the node's whole GET_BROKER_RUNTIME_INFO table (disk, traffic
	// counters) for callers that show more than the table above.
	Runtime map[string]string
}

// Cluster asks every registered node of every group for its raft and store state.
func (c *Client) Cluster(ctx context.Context) ([]NodeStatus, error) {
	groups, err := c.Groups(ctx)
	if err != nil {
		return nil, err
	}
	var out []NodeStatus
	for _, g := range groups {
		var rows []NodeStatus
		seen := map[string]bool{}
		for _, id := range slices.Sorted(maps.Keys(g.Addrs)) {
			addr := g.Addrs[id]
			if seen[addr] {
				continue
			}
			seen[addr] = true
			ns := NodeStatus{Cluster: g.Cluster, Group: g.Name, BrokerID: id, Addr: addr}
			info, err := c.runtimeInfo(ctx, addr)
			if err != nil {
				ns.Err = err
			} else {
				fillNode(&ns, info)
			}
			rows = append(rows, ns)
		}
		out = append(out, withLag(rows)...)
	}
	return out, nil
}

func fillNode(ns *NodeStatus, t map[string]string) {
	u := func(k string) uint64 { v, _ := strconv.ParseUint(t[k], 10, 64); return v }
	ns.SelfID, ns.Role, ns.LeaderID = t["selfId"], t["role"], t["leaderId"]
	ns.Term, ns.AppliedIndex, ns.CommitIndex, ns.LastIndex = u("term"), u("appliedIndex"), u("commitIndex"), u("lastIndex")
	// raft's applied index includes no-op and configuration entries the FSM never
	// sees; without it an idle group would show a permanent lag.
	ns.AppliedIndex = max(ns.AppliedIndex, u("raftAppliedIndex"))
	ns.CommitLogMaxOffset, _ = strconv.ParseInt(t["commitLogMaxOffset"], 10, 64)
	ns.LastContact = t["lastContact"]
	ns.Runtime = t
}

// withLag fills Lag for one group's rows.
func withLag(rows []NodeStatus) []NodeStatus {
	var commit uint64
	for _, r := range rows {
		if r.Err == nil {
			commit = max(commit, r.CommitIndex)
		}
	}
	for i := range rows {
		if rows[i].Err == nil && commit > rows[i].AppliedIndex {
			rows[i].Lag = commit - rows[i].AppliedIndex
		}
	}
	return rows
}

// nodeDoc is one row of ClusterTable in JSON; an unreachable node has role
// UNREACHABLE, its error and zero raft fields.
type nodeDoc struct {
	Cluster            string `json:"cluster"`
	BrokerName         string `json:"brokerName"`
	BrokerID           int64  `json:"brokerId"`
	Addr               string `json:"addr"`
	Node               string `json:"node"`
	Role               string `json:"role"`
	Term               uint64 `json:"term"`
	Leader             string `json:"leader"`
	AppliedIndex       uint64 `json:"appliedIndex"`
	CommitIndex        uint64 `json:"commitIndex"`
	LastIndex          uint64 `json:"lastIndex"`
	Lag                uint64 `json:"lag"`
	CommitLogMaxOffset int64  `json:"commitLogMaxOffset"`
	LastContact        string `json:"lastContact"`
	Error              string `json:"error,omitempty"`
}

// ClusterTable renders Cluster's answer, one line per node.
func ClusterTable(nodes []NodeStatus) Table {
	t := Table{Header: []string{"CLUSTER", "GROUP", "BID", "ADDR", "NODE", "ROLE", "TERM", "LEADER", "APPLIED", "COMMIT", "LAST", "LAG", "CL-MAX-OFFSET", "LAST-CONTACT"}}
	docs := []nodeDoc{}
	for _, n := range nodes {
		if n.Err != nil {
			t.Rows = append(t.Rows, []string{n.Cluster, n.Group, strconv.FormatInt(int64(n.BrokerID), 10), n.Addr,
				"", "UNREACHABLE", "", "", "", "", "", "", "", ""})
			t.Footer = append(t.Footer, fmt.Sprintf("%s: %v", n.Addr, n.Err))
			docs = append(docs, nodeDoc{Cluster: n.Cluster, BrokerName: n.Group, BrokerID: int64(n.BrokerID), Addr: n.Addr,
				Role: "UNREACHABLE", Error: n.Err.Error()})
			continue
		}
		t.Rows = append(t.Rows, []string{n.Cluster, n.Group, strconv.FormatInt(int64(n.BrokerID), 10), n.Addr,
			n.SelfID, n.Role, u64(n.Term), n.LeaderID, u64(n.AppliedIndex), u64(n.CommitIndex), u64(n.LastIndex),
			u64(n.Lag), strconv.FormatInt(n.CommitLogMaxOffset, 10), n.LastContact})
		docs = append(docs, nodeDoc{Cluster: n.Cluster, BrokerName: n.Group, BrokerID: int64(n.BrokerID), Addr: n.Addr,
			Node: n.SelfID, Role: n.Role, Term: n.Term, Leader: n.LeaderID, AppliedIndex: n.AppliedIndex, CommitIndex: n.CommitIndex,
			LastIndex: n.LastIndex, Lag: n.Lag, CommitLogMaxOffset: n.CommitLogMaxOffset, LastContact: n.LastContact})
	}
	t.Doc = docs
	return t
}

func u64(v uint64) string { return strconv.FormatUint(v, 10) }
