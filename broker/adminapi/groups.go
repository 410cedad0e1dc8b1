package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/transport"
)

// updateSubscriptionGroup serves UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200,
// mqadmin updateSubGroup, the dashboard) on the leader: the body is a whole
// SubscriptionGroupConfig, which replaces the group's through raft (Java
// fields this side does not keep, such as groupRetryPolicy, are ignored). An
// empty body changes nothing and succeeds, as in Apache; a bad group name is
// INVALID_PARAMETER. Nothing here enforces consumeEnable or
// consumeBroadcastEnable (updateSubGroup writes both false by default).
func (a *API) updateSubscriptionGroup(ctx context.Context, req *route.Request) (*transport.Command, error) {
	if len(req.Body) == 0 || string(req.Body) == "null" {
		return route.OK(nil, nil), nil
	}
	var g fsm.SubscriptionGroupConfig
	if err := json.Unmarshal(req.Body, &g); err != nil {
		return nil, fmt.Errorf("%w: SubscriptionGroupConfig body: %v", route.ErrBadHeader, err)
	}
	if err := route.ValidateGroup(g.GroupName); err != nil {
		return nil, err
	}
	if g.RetryQueueNums < 0 || g.RetryQueueNums > maxQueueNums {
		return nil, fmt.Errorf("%w: group %s retryQueueNums=%d: must be 0..%d", route.ErrBadHeader, g.GroupName, g.RetryQueueNums, maxQueueNums)
	}
	cctx, cancel := context.WithTimeout(ctx, configChangeTimeout)
	defer cancel()
	if err := a.d.Replica.UpsertSubscriptionGroup(cctx, g); err != nil {
		return nil, err
	}
	a.log.Info("subscription group updated", "group", g.GroupName, "retryQueueNums", g.RetryQueueNums, "retryMaxTimes", g.RetryMaxTimes)
	return route.OK(nil, nil), nil
}

// deleteSubscriptionGroup serves DELETE_SUBSCRIPTIONGROUP (207, mqadmin
// deleteSubGroup) on the leader: ext groupName, and cleanOffset (5.x; 4.9 calls
// it removeOffset; default false) to drop the group's committed offsets too,
// those pending on this leader included. A group that is not there is SUCCESS, as in Apache (deleteSubGroup
// -c asks every broker group, whether it has the group or not).
func (a *API) deleteSubscriptionGroup(ctx context.Context, req *route.Request) (*transport.Command, error) {
	f := route.FieldsOf(req.Command)
	group := f.Str("groupName", true)
	clean := f.Bool("cleanOffset", false) || f.Bool("removeOffset", false) // 5.x's name, 4.9's
	if f.Err != nil {
		return nil, f.Err
	}
	if err := route.ValidateGroup(group); err != nil {
		return nil, err
	}
	if clean {
		a.d.Offsets.Forget(group)
	}
	cctx, cancel := context.WithTimeout(ctx, configChangeTimeout)
	defer cancel()
	err := a.d.Replica.DeleteSubscriptionGroup(cctx, group, clean)
	if err != nil && !errors.Is(err, fsm.ErrGroupNotFound) {
		return nil, err
	}
	a.log.Info("subscription group deleted", "group", group, "cleanOffset", clean, "existed", err == nil)
	return route.OK(nil, nil), nil
}
