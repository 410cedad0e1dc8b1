package adminapi

import (
	"context"
	"encoding/json"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// leadershipHistory serves ROCKETRAFT_LEADERSHIP_HISTORY: the leader changes
// this node observed, oldest first. It is Local: each node answers what it
// saw, so a console that asks every node can tell a follower's lost contact
// from the leader's own step-down.
func (a *API) leadershipHistory(context.Context, *route.Request) (*transport.Command, error) {
	events := a.d.Replica.LeadershipHistory()
	if events == nil {
		events = []replica.LeadershipChange{}
	}
	body, err := json.Marshal(map[string]any{
		"brokerName": a.d.BrokerName, "node": a.d.SelfID, "events": events,
	})
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}
