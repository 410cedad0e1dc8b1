package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/rocketraft/rocketraft/transport"
)

// RaftPeer is one member of a group's raft configuration.
type RaftPeer struct {
	ID       string `json:"id"`
	Address  string `json:"address"`
	Suffrage string `json:"suffrage"`
	Leader   bool   `json:"leader"`
}

// RaftPeers reads the group's configuration from its leader (or any node).
func (c *Client) RaftPeers(ctx context.Context, group string) (Group, []RaftPeer, error) {
	g, err := c.group(ctx, group)
	if err != nil {
		return g, nil, err
	}
	ps, err := c.RaftPeersAt(ctx, g.Target())
	return g, ps, err
}

// RaftPeersAt reads the raft configuration as the node at addr knows it
// (any member answers; the console asks the next one when the leader is down).
func (c *Client) RaftPeersAt(ctx context.Context, addr string) ([]RaftPeer, error) {
	resp, err := c.call(ctx, addr, transport.RaftPeers, nil)
	if err != nil {
		return nil, err
	}
	var body struct {
		Servers []RaftPeer `json:"servers"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		return nil, fmt.Errorf("raft peers broker=%s: %v: %w", addr, err, ErrBadAnswer)
	}
	return body.Servers, nil
}

// RaftPeersTable renders RaftPeers.
func RaftPeersTable(group string, ps []RaftPeer) Table {
	type peerDoc struct {
		BrokerName string `json:"brokerName"`
		RaftPeer
	}
	t := Table{Header: []string{"GROUP", "ID", "RAFT-ADDR", "SUFFRAGE", "LEADER"}}
	docs := []peerDoc{}
	for _, p := range ps {
		leader := ""
		if p.Leader {
			leader = "*"
		}
		t.Rows = append(t.Rows, []string{group, p.ID, p.Address, p.Suffrage, leader})
		docs = append(docs, peerDoc{group, p})
	}
	t.Doc = docs
	return t
}

// raftChange sends one membership or leadership request to the group; the node
// forwards it to its leader.
func (c *Client) raftChange(ctx context.Context, group string, code transport.RequestCode, ext map[string]string) (GroupResult, error) {
	g, err := c.group(ctx, group)
	if err != nil {
		return GroupResult{}, err
	}
	addr := g.Target()
	_, err = c.callTimeout(ctx, addr, code, ext, 3*c.cfg.Timeout)
	return GroupResult{Group: g.Name, Addr: addr, Err: err}, nil
}

// RaftTransferLeader hands leadership to id, or to the most up-to-date follower
// when id is empty.
func (c *Client) RaftTransferLeader(ctx context.Context, group, id string) (GroupResult, error) {
	ext := map[string]string{}
	if id != "" {
		ext["id"] = id
	}
	return c.raftChange(ctx, group, transport.RaftTransferLeader, ext)
}

// RaftAddVoter adds a voting member (or promotes a non-voter) at its raft address.
func (c *Client) RaftAddVoter(ctx context.Context, group, id, addr string) (GroupResult, error) {
	return c.raftChange(ctx, group, transport.RaftAddVoter, map[string]string{"id": id, "address": addr})
}

// RaftAddNonvoter adds a member that replicates without voting.
func (c *Client) RaftAddNonvoter(ctx context.Context, group, id, addr string) (GroupResult, error) {
	return c.raftChange(ctx, group, transport.RaftAddNonvoter, map[string]string{"id": id, "address": addr})
}

// RaftRemove removes a member.
func (c *Client) RaftRemove(ctx context.Context, group, id string) (GroupResult, error) {
	return c.raftChange(ctx, group, transport.RaftRemoveServer, map[string]string{"id": id})
}

// SnapshotResult is one node's answer to RaftSnapshot.
type SnapshotResult struct {
	Addr      string
	ID        string `json:"id"`
	LastIndex string `json:"lastIndex"`
	Result    string `json:"result"`
	Err       error
}

// RaftSnapshot snapshots every registered node of the group (snapshots are per
// node; each compacts its own log).
func (c *Client) RaftSnapshot(ctx context.Context, group string) (Group, []SnapshotResult, error) {
	g, err := c.group(ctx, group)
	if err != nil {
		return g, nil, err
	}
	var out []SnapshotResult
	for _, addr := range g.Nodes() {
		r := SnapshotResult{Addr: addr}
		resp, err := c.callTimeout(ctx, addr, transport.RaftSnapshot, nil, 3*c.cfg.Timeout)
		if err == nil {
			if jerr := json.Unmarshal(resp.Body, &r); jerr != nil {
				err = fmt.Errorf("raft snapshot broker=%s: %v: %w", addr, jerr, ErrBadAnswer)
			}
		}
		r.Err = err
		out = append(out, r)
	}
	return g, out, nil
}

// SnapshotTable renders RaftSnapshot.
func SnapshotTable(group string, rs []SnapshotResult) Table {
	type snapshotDoc struct {
		BrokerName    string `json:"brokerName"`
		Addr          string `json:"addr"`
		Node          string `json:"node"`
		SnapshotIndex uint64 `json:"snapshotIndex"`
		Result        string `json:"result"`
		OK            bool   `json:"ok"`
		Error         string `json:"error,omitempty"`
	}
	t := Table{Header: []string{"GROUP", "ADDR", "NODE", "SNAPSHOT-INDEX", "RESULT"}}
	docs := []snapshotDoc{}
	for _, r := range rs {
		res := r.Result
		if r.Err != nil {
			res = "FAILED: " + r.Err.Error()
		}
		t.Rows = append(t.Rows, []string{group, r.Addr, r.ID, r.LastIndex, res})
		// The broker sends the index as a string; a node that failed sent none.
		idx, _ := strconv.ParseUint(r.LastIndex, 10, 64)
		docs = append(docs, snapshotDoc{BrokerName: group, Addr: r.Addr, Node: r.ID, SnapshotIndex: idx, Result: r.Result,
			OK: r.Err == nil, Error: errText(r.Err)})
	}
	t.Doc = docs
	return t
}

// SnapshotError is the first failed node, for the exit status.
func SnapshotError(rs []SnapshotResult) error {
	for _, r := range rs {
		if r.Err != nil {
			return fmt.Errorf("snapshot %s: %w", r.Addr, r.Err)
		}
	}
	return nil
}
