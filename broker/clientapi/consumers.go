package clientapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// handleHeartbeat serves HEART_BEAT (34): record the client's groups on this
// node (every node tracks heartbeats) and, on the leader, give every consumer
// group its subscription config and %RETRY%<group>, as Apache's
// ClientManageProcessor.heartBeat does for every consumer group it is sent
// (broadcasting ones included: mqadmin finds a group through that topic). The
// answer carries this side's version (≥ 232, which Java requires before it
// pulls with SQL92) and never IS_SUPPORT_HEART_BEAT_V2: the registry keeps no
// subscriptions for a v2 client's withoutSub heartbeats.
func (a *API) handleHeartbeat(ctx context.Context, req *route.Request) (*transport.Command, error) {
	hb, err := clients.ParseHeartbeat(req.Body)
	if err != nil {
		return nil, err
	}
	for _, g := range a.d.Clients.Heartbeat(req.Conn, hb, a.mono()) {
		a.d.Clients.NotifyConsumerIDsChanged(g)
	}
	if a.leading() {
		for _, c := range hb.ConsumerDataSet {
			if route.ValidateGroup(c.GroupName) != nil {
				continue
			}
			if err := a.ensureRetryTopic(ctx, c.GroupName); err != nil {
				a.d.Logger.Warn("create retry topic failed", "group", c.GroupName, "error", err)
			}
		}
	}
	return transport.NewResponse(transport.Success, ""), nil
}

// handleConsumerList serves GET_CONSUMER_LIST_BY_GROUP (38).
func (a *API) handleConsumerList(_ context.Context, req *route.Request) (*transport.Command, error) {
	group := req.Field("consumerGroup")
	ids := a.d.Clients.ConsumerIDs(group)
	if ids == nil {
		ids = []string{}
	}
	body, err := json.Marshal(struct {
		ConsumerIDList []string `json:"consumerIdList"`
	}{ids})
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		r := transport.NewResponse(transport.SystemError, "no consumer of group "+group+" is connected")
		r.Body = body
		return r, nil
	}
	return route.OK(nil, body), nil
}

// lockBatchBody is LOCK_BATCH_MQ's and UNLOCK_BATCH_MQ's body
// (rocketmq-protocol.md §2.4.6); onlyThisBroker (Java 5.x) is accepted and has
// no effect: a group has one leader.
type lockBatchBody struct {
	ConsumerGroup  string                 `json:"consumerGroup"`
	ClientID       string                 `json:"clientId"`
	MQSet          []clients.MessageQueue `json:"mqSet"`
	OnlyThisBroker bool                   `json:"onlyThisBroker,omitempty"`
}

func parseLockBatchBody(body []byte) (lockBatchBody, error) {
	var lb lockBatchBody
	if err := json.Unmarshal(body, &lb); err != nil {
		return lb, fmt.Errorf("%w: lock body: %v", route.ErrBadHeader, err)
	}
	if lb.ConsumerGroup == "" || lb.ClientID == "" {
		return lb, fmt.Errorf("%w: lock body consumerGroup=%q clientId=%q: both required", route.ErrBadHeader, lb.ConsumerGroup, lb.ClientID)
	}
	return lb, nil
}

// handleLockBatch serves LOCK_BATCH_MQ (41) on the leader. The answer lists the
// queues the client holds now.
func (a *API) handleLockBatch(_ context.Context, req *route.Request) (*transport.Command, error) {
	lb, err := parseLockBatchBody(req.Body)
	if err != nil {
		return nil, err
	}
	now := a.mono() // a lease on this node: a wall-clock jump must not end it (chaos C1)
	term := a.d.Status().Term
	granted := a.d.Clients.Lock(term, lb.ConsumerGroup, lb.ClientID, lb.MQSet, now)
	if len(granted) < len(lb.MQSet) {
		a.d.Logger.Debug("queue locks refused", "group", lb.ConsumerGroup, "client", lb.ClientID,
			"asked", len(lb.MQSet), "granted", len(granted), "term", term)
	}
	body, err := json.Marshal(struct {
		LockOKMQSet []clients.MessageQueue `json:"lockOKMQSet"`
	}{granted})
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}

// handleUnlockBatch serves UNLOCK_BATCH_MQ (42) on the leader.
func (a *API) handleUnlockBatch(_ context.Context, req *route.Request) (*transport.Command, error) {
	lb, err := parseLockBatchBody(req.Body)
	if err != nil {
		return nil, err
	}
	a.d.Clients.Unlock(a.d.Status().Term, lb.ConsumerGroup, lb.ClientID, lb.MQSet, a.mono())
	return route.OK(nil, nil), nil
}
