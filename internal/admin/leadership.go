package admin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/sign"
)

// LeadershipChange is one leader change as a node observed it (the broker's
// replica.LeadershipChange, mirrored here because a client never links the
// broker). Cause is restart, election_timeout, leadership_transfer,
// lost_contact or step_down.
type LeadershipChange struct {
	TimeMs         int64  `json:"time"`
	Term           uint64 `json:"term"`
	Leader         string `json:"leader"`
	PreviousLeader string `json:"previousLeader"`
	Cause          string `json:"cause"`
	Detail         string `json:"detail"`
}

// NodeLeadership is one node's answer to ROCKETRAFT_LEADERSHIP_HISTORY.
type NodeLeadership struct {
	BrokerName string             `json:"brokerName"`
	Node       string             `json:"node"`
	Events     []LeadershipChange `json:"events"`
}

// LeadershipHistory asks the node at addr for the leader changes it observed,
// oldest first.
func (c *Client) LeadershipHistory(ctx context.Context, addr string) (NodeLeadership, error) {
	var out NodeLeadership
	resp, err := c.call(ctx, addr, transport.LeadershipHistory, nil)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		return out, fmt.Errorf("leadership history broker=%s: %v: %w", addr, err, ErrBadAnswer)
	}
	return out, nil
}

// WithCredentials is a client that signs with cr instead and shares c's
// connections: the console runs each user's changes under that user's
// account. Close only c, never the copy.
func (c *Client) WithCredentials(cr sign.Credentials) *Client {
	cp := *c
	cp.cfg.Credentials = cr
	cp.ns = c.ns.WithCredentials(cr)
	return &cp
}

// Probe sends one signed request of code (no fields) to addr and returns the
// broker's answer code and remark: a broker with aclEnable answers
// NO_PERMISSION to a wrong key pair, or to a non-admin on an admin-only code.
// err is set only when no answer came.
func (c *Client) Probe(ctx context.Context, addr string, code transport.RequestCode) (transport.ResponseCode, string, error) {
	resp, err := c.invoke(ctx, addr, code, nil, 0)
	if err != nil {
		return 0, "", err
	}
	return resp.ResponseCode(), resp.Remark, nil
}
