package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

// handleCreateTopic serves UPDATE_AND_CREATE_TOPIC (17). State changes go through
// the leader; only queue numbers and perm are taken from the request (never paths or
// commands: CVE-2023-33246).
func (b *Broker) handleCreateTopic(ctx context.Context, req *transport.Command) *transport.Command {
	if !b.isLeader() {
		return b.forwardToLeader(ctx, req)
	}
	e := &ext{fields: req.ExtFields}
	t := TopicConfig{
		Name:           e.str("topic", true),
		ReadQueueNums:  e.int32("readQueueNums", false, 8),
		WriteQueueNums: e.int32("writeQueueNums", false, 8),
		Perm:           e.int32("perm", false, PermRead|PermWrite),
		TopicSysFlag:   e.int32("topicSysFlag", false, 0),
		Order:          e.bool("order", false),
	}
	if e.err != nil {
		return errorResponse(e.err)
	}
	if err := validateTopic(t.Name); err != nil {
		return errorResponse(err)
	}
	if t.ReadQueueNums <= 0 || t.ReadQueueNums > 1024 || t.WriteQueueNums <= 0 || t.WriteQueueNums > 1024 {
		return errorResponse(fmt.Errorf("%w: readQueueNums=%d writeQueueNums=%d: must be 1..1024", ErrBadHeader, t.ReadQueueNums, t.WriteQueueNums))
	}
	if t.Perm&^(PermInherit|PermRead|PermWrite) != 0 {
		return errorResponse(fmt.Errorf("%w: perm=%d: only bits 1, 2 and 4 are allowed", ErrBadHeader, t.Perm))
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := b.replica.UpsertTopic(cctx, t); err != nil {
		return errorResponse(err)
	}
	b.registerAllAsync()
	return transport.NewResponse(transport.Success, "")
}

// handleDeleteTopic serves DELETE_TOPIC_IN_BROKER (215).
func (b *Broker) handleDeleteTopic(ctx context.Context, req *transport.Command) *transport.Command {
	if !b.isLeader() {
		return b.forwardToLeader(ctx, req)
	}
	topic := req.ExtFields["topic"]
	if err := validateTopic(topic); err != nil {
		return errorResponse(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := b.replica.DeleteTopic(cctx, topic); err != nil {
		return errorResponse(err)
	}
	b.registerAllAsync()
	return transport.NewResponse(transport.Success, "")
}

// subscriptionGroupJSON is Java's SubscriptionGroupConfig shape.
type subscriptionGroupJSON struct {
	GroupName                      string `json:"groupName"`
	ConsumeEnable                  bool   `json:"consumeEnable"`
	ConsumeFromMinEnable           bool   `json:"consumeFromMinEnable"`
	ConsumeBroadcastEnable         bool   `json:"consumeBroadcastEnable"`
	RetryQueueNums                 int32  `json:"retryQueueNums"`
	RetryMaxTimes                  int32  `json:"retryMaxTimes"`
	BrokerID                       int64  `json:"brokerId"`
	WhichBrokerWhenConsumeSlowly   int64  `json:"whichBrokerWhenConsumeSlowly"`
	NotifyConsumerIdsChangedEnable bool   `json:"notifyConsumerIdsChangedEnable"`
}

// handleAllSubscriptionGroups serves GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201).
func (b *Broker) handleAllSubscriptionGroups() *transport.Command {
	table := make(map[string]subscriptionGroupJSON)
	for _, g := range b.replica.SubscriptionGroups() {
		table[g.GroupName] = subscriptionGroupJSON{
			GroupName: g.GroupName, ConsumeEnable: g.ConsumeEnable, ConsumeFromMinEnable: true,
			ConsumeBroadcastEnable: g.ConsumeBroadcastEnable, RetryQueueNums: g.RetryQueueNums,
			RetryMaxTimes: g.RetryMaxTimes, WhichBrokerWhenConsumeSlowly: 1, NotifyConsumerIdsChangedEnable: true,
		}
	}
	body, err := json.Marshal(map[string]any{
		"subscriptionGroupTable": table,
		"dataVersion":            map[string]int64{"timestamp": 0, "counter": b.replica.DataVersion()},
	})
	if err != nil {
		return errorResponse(err)
	}
	return okResponse(nil, body)
}
