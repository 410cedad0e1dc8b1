package clientapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/transport"
)

// handleHeartbeat serves HEART_BEAT (34): record the client's groups on this
// node (every node tracks heartbeats) and, on the leader, create %RETRY%<group>.
func (a *API) handleHeartbeat(ctx context.Context, req *route.Request) (*transport.Command, error) {
	hb, err := clients.ParseHeartbeat(req.Body)
	if err != nil {
		return nil, err
	}
	for _, g := range a.d.Clients.Heartbeat(req.Conn, hb, a.now()) {
		a.d.Clients.NotifyConsumerIDsChanged(g)
	}
	if a.leading() {
		for _, c := range hb.ConsumerDataSet {
			if c.MessageModel == "BROADCASTING" || route.ValidateGroup(c.GroupName) != nil {
				continue
			}
			a.ensureRetryTopic(ctx, c.GroupName)
		}
	}
	return transport.NewResponse(transport.Success, ""), nil
}

// ensureRetryTopic creates %RETRY%<group> (1 queue) and its subscription group.
func (a *API) ensureRetryTopic(ctx context.Context, group string) {
	name := RetryPrefix + group
	if _, ok := a.d.Replica.Topic(name); ok {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, topicChangeTimeout)
	defer cancel()
	if err := a.d.Replica.UpsertTopic(cctx, fsm.NewTopic(name, 1, fsm.PermRead|fsm.PermWrite)); err != nil {
		a.d.Logger.Warn("create retry topic failed", "topic", name, "error", err)
		return
	}
	if err := a.d.Replica.UpsertSubscriptionGroup(cctx, fsm.DefaultSubscriptionGroup(group)); err != nil {
		a.d.Logger.Warn("create subscription group failed", "group", group, "error", err)
	}
	a.d.TopicsChanged()
}

// handleConsumerList serves GET_CONSUMER_LIST_BY_GROUP (38).
func (a *API) handleConsumerList(_ context.Context, req *route.Request) (*transport.Command, error) {
	group := req.ExtFields["consumerGroup"]
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
	now := a.now()
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
	a.d.Clients.Unlock(a.d.Status().Term, lb.ConsumerGroup, lb.ClientID, lb.MQSet, a.now())
	return route.OK(nil, nil), nil
}
