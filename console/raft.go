package console

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// Raft operations as the URL names them, and the permission each needs.
var raftOps = map[string]string{
	"transfer-leader": opRaftTransfer,
	"add-voter":       opRaftAddVoter,
	"add-nonvoter":    opRaftAddNonvote,
	"remove":          opRaftRemove,
	"snapshot":        opRaftSnapshot,
}

// raftPeers reads a group's configuration; an unknown group is a 404 naming it.
func (s *Server) raftPeers(r *http.Request) (string, []admin.RaftPeer, error) {
	group := r.PathValue("brokerName")
	if group == "" {
		return "", nil, badRequest("brokerName", "brokerName is required")
	}
	groups, err := s.adm.Groups(r.Context())
	if err != nil {
		return "", nil, err
	}
	known := false
	for _, g := range groups {
		known = known || g.Name == group
	}
	if !known {
		return "", nil, notFound("brokerName", "broker group %q is not registered with the nameserver", group)
	}
	_, peers, err := s.adm.RaftPeers(r.Context(), group)
	if err != nil {
		return "", nil, err
	}
	return group, peers, nil
}

func (s *Server) getRaft(r *http.Request, _ user) (any, error) {
	group, peers, err := s.raftPeers(r)
	if err != nil {
		return nil, err
	}
	if peers == nil {
		peers = []admin.RaftPeer{}
	}
	return map[string]any{"brokerName": group, "servers": peers}, nil
}

type raftBody struct {
	Op      string `json:"op"`
	ID      string `json:"id"`
	Address string `json:"address"`
	Confirm *bool  `json:"confirm"`
}

// raftPreview is what an operation will do to a group (docs/console-api.md §
// Raft operations).
type raftPreview struct {
	Op                string   `json:"op"`
	BrokerName        string   `json:"brokerName"`
	VotersBefore      int      `json:"votersBefore"`
	VotersAfter       int      `json:"votersAfter"`
	QuorumAfter       int      `json:"quorumAfter"`
	FailuresTolerated int      `json:"failuresTolerated"`
	Summary           string   `json:"summary"`
	Warnings          []string `json:"warnings"`
}

// previewRaft is the deterministic core: the configuration, which voters are
// down now (by id), and the request give the outcome, or an error naming the
// bad input.
func previewRaft(group string, peers []admin.RaftPeer, down map[string]bool, b raftBody) (raftPreview, error) {
	p := raftPreview{Op: b.Op, BrokerName: group, Warnings: []string{}}
	var voters []string
	var leader string
	member := map[string]admin.RaftPeer{}
	for _, x := range peers {
		member[x.ID] = x
		if x.Suffrage == "Voter" {
			voters = append(voters, x.ID)
		}
		if x.Leader {
			leader = x.ID
		}
	}
	p.VotersBefore, p.VotersAfter = len(voters), len(voters)
	downAfter := 0
	for _, v := range voters {
		if down[v] {
			downAfter++
		}
	}
	switch b.Op {
	case "transfer-leader":
		if b.ID != "" {
			x, ok := member[b.ID]
			switch {
			case !ok:
				return p, notFound("id", "node %q is not a member of %s (members: %s)", b.ID, group, ids(peers))
			case x.Suffrage != "Voter":
				return p, badRequest("id", "node %q is a non-voter and cannot lead", b.ID)
			case b.ID == leader:
				return p, badRequest("id", "node %q already leads %s", b.ID, group)
			case down[b.ID]:
				return p, badRequest("id", "node %q is down; transfer to a node that answers", b.ID)
			}
			p.Summary = fmt.Sprintf("leadership of %s moves from %s to %s; the term goes up by one and writes pause for about an election", group, orNone(leader), b.ID)
		} else {
			p.Summary = fmt.Sprintf("leadership of %s moves from %s to the most up-to-date follower; writes pause for about an election", group, orNone(leader))
		}
	case "add-voter", "add-nonvoter":
		if b.ID == "" {
			return p, badRequest("id", "id (the new node's raft server id) is required")
		}
		if err := checkAddress(b.Address); err != nil {
			return p, err
		}
		x, exists := member[b.ID]
		if b.Op == "add-voter" {
			if exists && x.Suffrage == "Voter" {
				return p, badRequest("id", "node %q is a voter of %s already", b.ID, group)
			}
			p.VotersAfter++
			if exists {
				p.Summary = fmt.Sprintf("promotes non-voter %s of %s to voter", b.ID, group)
			} else {
				p.Summary = fmt.Sprintf("adds %s at %s to %s as a voter; it catches up from the leader first", b.ID, b.Address, group)
			}
			if p.VotersAfter%2 == 0 {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%d voters tolerate no more failures than %d do", p.VotersAfter, p.VotersAfter-1))
			}
		} else {
			if exists {
				return p, badRequest("id", "node %q is a member of %s already (%s)", b.ID, group, x.Suffrage)
			}
			p.Summary = fmt.Sprintf("adds %s at %s to %s as a non-voter: it replicates but never votes or leads", b.ID, b.Address, group)
		}
	case "remove":
		if b.ID == "" {
			return p, badRequest("id", "id (the raft server id to remove) is required")
		}
		x, ok := member[b.ID]
		if !ok {
			return p, notFound("id", "node %q is not a member of %s (members: %s)", b.ID, group, ids(peers))
		}
		p.Summary = fmt.Sprintf("removes %s from %s", b.ID, group)
		if x.Suffrage == "Voter" {
			p.VotersAfter--
			if down[b.ID] {
				downAfter--
			}
			if p.VotersAfter == 0 {
				return p, badRequest("id", "node %q is the last voter of %s", b.ID, group)
			}
		}
		if b.ID == leader {
			p.Warnings = append(p.Warnings, b.ID+" is the leader: it steps down and the group elects a new one")
		}
	case "snapshot":
		p.Summary = fmt.Sprintf("every node of %s writes a snapshot and compacts its raft log; clients are not affected", group)
	default:
		return p, badRequest("op", "op %q is not one of transfer-leader, add-voter, add-nonvoter, remove, snapshot", b.Op)
	}
	p.QuorumAfter = p.VotersAfter/2 + 1
	p.FailuresTolerated = max(p.VotersAfter-p.QuorumAfter-downAfter, 0)
	if b.Op == "add-voter" || b.Op == "remove" {
		p.Summary += fmt.Sprintf("; the group will have %d voters", p.VotersAfter)
		switch {
		case p.VotersAfter-downAfter < p.QuorumAfter:
			p.Summary += "; it will have lost its quorum"
			p.Warnings = append(p.Warnings, fmt.Sprintf("only %d of %d voters answer: the group cannot elect or commit", p.VotersAfter-downAfter, p.VotersAfter))
		case p.FailuresTolerated == 0:
			p.Summary += "; one more failure loses the quorum"
		default:
			p.Summary += fmt.Sprintf("; it tolerates %d more failures", p.FailuresTolerated)
		}
	}
	return p, nil
}

func checkAddress(a string) error {
	if a == "" {
		return badRequest("address", "address (the new node's raft host:port) is required")
	}
	if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
		return badRequest("address", "address %q is not host:port", a)
	}
	return nil
}

func ids(ps []admin.RaftPeer) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return strings.Join(out, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "(no leader)"
	}
	return s
}

// downNodes are the ids of nodes that did not answer in a fresh snapshot.
func (s *Server) downNodes(r *http.Request, group string) map[string]bool {
	down := map[string]bool{}
	doc, err := s.snapshot(r.Context())
	if err != nil {
		return down
	}
	for _, g := range doc.Groups {
		if g.BrokerName != group {
			continue
		}
		for _, n := range g.Nodes {
			if !n.Up && n.Node != "" {
				down[n.Node] = true
			}
		}
	}
	return down
}

func (s *Server) raftPreview(r *http.Request, _ user) (any, error) {
	var b raftBody
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	if _, ok := raftOps[b.Op]; !ok {
		return nil, badRequest("op", "op %q is not one of transfer-leader, add-voter, add-nonvoter, remove, snapshot", b.Op)
	}
	group, peers, err := s.raftPeers(r)
	if err != nil {
		return nil, err
	}
	return previewRaft(group, peers, s.downNodes(r, group), b)
}

func (s *Server) raftChange(r *http.Request, u user) (any, error) {
	opName := r.PathValue("op")
	perm, ok := raftOps[opName]
	if !ok {
		return nil, notFound("op", "no raft operation %q (transfer-leader, add-voter, add-nonvoter, remove, snapshot)", opName)
	}
	if !u.may(perm) {
		return nil, &apiError{http.StatusForbidden, codeForbidden, "", fmt.Sprintf("account %s may not %s: it is not an admin account", u.accessKey, perm)}
	}
	var b raftBody
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	if b.Op != "" && b.Op != opName {
		return nil, badRequest("op", "body op %q contradicts the path's %q", b.Op, opName)
	}
	b.Op = opName
	group, peers, err := s.raftPeers(r)
	if err != nil {
		return nil, err
	}
	p, err := previewRaft(group, peers, s.downNodes(r, group), b)
	if err != nil {
		return nil, err
	}
	if err := confirmed(b.Confirm); err != nil {
		return nil, err
	}
	c := s.as(u)
	ctx := r.Context()
	var res admin.GroupResult
	switch opName {
	case "transfer-leader":
		res, err = c.RaftTransferLeader(ctx, group, b.ID)
	case "add-voter":
		res, err = c.RaftAddVoter(ctx, group, b.ID, b.Address)
	case "add-nonvoter":
		res, err = c.RaftAddNonvoter(ctx, group, b.ID, b.Address)
	case "remove":
		res, err = c.RaftRemove(ctx, group, b.ID)
	case "snapshot":
		_, rs, err := c.RaftSnapshot(ctx, group)
		if err != nil {
			return nil, err
		}
		snaps := []map[string]any{}
		for _, x := range rs {
			e := ""
			if x.Err != nil {
				e = x.Err.Error()
			}
			snaps = append(snaps, map[string]any{"addr": x.Addr, "id": x.ID, "lastIndex": x.LastIndex, "error": e})
		}
		return map[string]any{"ok": admin.SnapshotError(rs) == nil, "snapshots": snaps, "summary": p.Summary}, nil
	}
	if err == nil {
		err = res.Err
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "brokerName": group, "node": res.Addr, "summary": p.Summary}, nil
}
