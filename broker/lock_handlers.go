package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

// lockBatchBody is LOCK_BATCH_MQ's and UNLOCK_BATCH_MQ's body (rocketmq-protocol.md
// §2.4.6); onlyThisBroker (Java 5.x) is accepted and has no effect: a group has
// one leader.
type lockBatchBody struct {
	ConsumerGroup  string         `json:"consumerGroup"`
	ClientID       string         `json:"clientId"`
	MQSet          []MessageQueue `json:"mqSet"`
	OnlyThisBroker bool           `json:"onlyThisBroker,omitempty"`
}

func parseLockBatchBody(body []byte) (lockBatchBody, error) {
	var lb lockBatchBody
	if err := json.Unmarshal(body, &lb); err != nil {
		return lb, fmt.Errorf("%w: lock body: %v", ErrBadHeader, err)
	}
	if lb.ConsumerGroup == "" || lb.ClientID == "" {
		return lb, fmt.Errorf("%w: lock body consumerGroup=%q clientId=%q: both required", ErrBadHeader, lb.ConsumerGroup, lb.ClientID)
	}
	return lb, nil
}

// handleLockBatch serves LOCK_BATCH_MQ (41) on the leader; a follower forwards it.
// The answer lists the queues the client holds now.
func (b *Broker) handleLockBatch(ctx context.Context, req *transport.Command) *transport.Command {
	if !b.isLeader() {
		return b.forwardToLeader(ctx, req)
	}
	lb, err := parseLockBatchBody(req.Body)
	if err != nil {
		return errorResponse(err)
	}
	now := time.Now()
	term := b.currentStatus().Term
	granted := b.clients.locks.lock(term, lb.ConsumerGroup, lb.ClientID, lb.MQSet, b.clients.lockView(lb.ConsumerGroup, now), now)
	if len(granted) < len(lb.MQSet) {
		b.log.Debug("queue locks refused", "group", lb.ConsumerGroup, "client", lb.ClientID,
			"asked", len(lb.MQSet), "granted", len(granted), "term", term)
	}
	body, err := json.Marshal(struct {
		LockOKMQSet []MessageQueue `json:"lockOKMQSet"`
	}{granted})
	if err != nil {
		panic("broker: marshal lock answer: " + err.Error())
	}
	return okResponse(nil, body)
}

// handleUnlockBatch serves UNLOCK_BATCH_MQ (42) on the leader; a follower forwards it.
func (b *Broker) handleUnlockBatch(ctx context.Context, req *transport.Command) *transport.Command {
	if !b.isLeader() {
		return b.forwardToLeader(ctx, req)
	}
	lb, err := parseLockBatchBody(req.Body)
	if err != nil {
		return errorResponse(err)
	}
	b.clients.locks.unlock(b.currentStatus().Term, lb.ConsumerGroup, lb.ClientID, lb.MQSet, time.Now())
	return okResponse(nil, nil)
}
