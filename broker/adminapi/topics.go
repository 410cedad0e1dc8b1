package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/transport"
)

// configChangeTimeout bounds one replicated topic change: a single small raft
// entry commits in milliseconds, so 5 s leaves room for a leader election (1–2 s
// with broker/node's default 1 s heartbeat and election timeouts) before the
// admin tool is told the outcome is unknown.
const configChangeTimeout = 5 * time.Second

// maxQueueNums is the most read or write queues UPDATE_AND_CREATE_TOPIC accepts.
const maxQueueNums = 1024

// createTopic serves UPDATE_AND_CREATE_TOPIC (17) on the leader. Only queue
// numbers, perm, sys flag and order are taken from the request (never paths or
// commands: CVE-2023-33246).
func (a *API) createTopic(ctx context.Context, req *route.Request) (*transport.Command, error) {
	f := route.FieldsOf(req.Command)
	t := fsm.NewTopic(f.Str("topic", true), 0, 0)
	t.ReadQueueNums = f.Int32("readQueueNums", false, 8)
	t.WriteQueueNums = f.Int32("writeQueueNums", false, 8)
	t.Perm = f.Int32("perm", false, fsm.PermRead|fsm.PermWrite)
	t.TopicSysFlag = f.Int32("topicSysFlag", false, 0)
	t.Order = f.Bool("order", false)
	if f.Err != nil {
		return nil, f.Err
	}
	if err := route.ValidateTopic(t.Name); err != nil {
		return nil, err
	}
	if t.ReadQueueNums <= 0 || t.ReadQueueNums > maxQueueNums || t.WriteQueueNums <= 0 || t.WriteQueueNums > maxQueueNums {
		return nil, fmt.Errorf("%w: readQueueNums=%d writeQueueNums=%d: must be 1..%d", route.ErrBadHeader, t.ReadQueueNums, t.WriteQueueNums, maxQueueNums)
	}
	if t.Perm&^(fsm.PermInherit|fsm.PermRead|fsm.PermWrite) != 0 {
		return nil, fmt.Errorf("%w: perm=%d: only bits 1, 2 and 4 are allowed", route.ErrBadHeader, t.Perm)
	}
	cctx, cancel := context.WithTimeout(ctx, configChangeTimeout)
	defer cancel()
	if err := a.d.Replica.UpsertTopic(cctx, t); err != nil {
		return nil, err
	}
	a.topicsChanged()
	return transport.NewResponse(transport.Success, ""), nil
}

// deleteTopic serves DELETE_TOPIC_IN_BROKER (215) on the leader.
func (a *API) deleteTopic(ctx context.Context, req *route.Request) (*transport.Command, error) {
	topic := req.Field("topic")
	if err := route.ValidateTopic(topic); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, configChangeTimeout)
	defer cancel()
	if err := a.d.Replica.DeleteTopic(cctx, topic); err != nil {
		return nil, err
	}
	a.topicsChanged()
	return transport.NewResponse(transport.Success, ""), nil
}

// topicConfig serves GET_TOPIC_CONFIG (351, RocketMQ 5.x): the topic's stored
// config with RocketMQ's field names (Apache wraps it in TopicConfigAndQueueMapping;
// without static topics its mappingDetail is absent, so the body is the plain
// TopicConfig). `admin topic update` reads it, changes only the fields given and
// writes it back; it is registered Leader so that read sees the config the write
// replaces, not a follower's lagging copy. A missing topic is TOPIC_NOT_EXIST.
func (a *API) topicConfig(_ context.Context, req *route.Request) (*transport.Command, error) {
	topic := req.Field("topic")
	if err := route.ValidateTopic(topic); err != nil {
		return nil, err
	}
	t, ok := a.d.Replica.Topic(topic)
	if !ok {
		return nil, fmt.Errorf("topic %s on broker %s: %w", topic, a.d.BrokerName, fsm.ErrTopicNotFound)
	}
	if t.TopicFilterType == "" {
		t.TopicFilterType = fsm.TopicFilterSingleTag
	}
	// attributes is always an object: the dashboard's "send message" reads
	// attributes["message.type"] from it and fails on null.
	attrs := t.Attributes
	if attrs == nil {
		attrs = map[string]string{}
	}
	body, err := json.Marshal(struct {
		fsm.TopicConfig
		Attributes map[string]string `json:"attributes"`
	}{t, attrs})
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}

// allSubscriptionGroups serves GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201): Java's
// SubscriptionGroupWrapper, whose group entries are fsm.SubscriptionGroupConfig
// as stored (its JSON names are Java's).
func (a *API) allSubscriptionGroups(context.Context, *route.Request) (*transport.Command, error) {
	table := make(map[string]fsm.SubscriptionGroupConfig)
	for _, g := range a.d.Replica.SubscriptionGroups() {
		table[g.GroupName] = g
	}
	body, err := json.Marshal(map[string]any{
		"subscriptionGroupTable": table,
		"dataVersion":            map[string]int64{"timestamp": 0, "counter": a.d.Replica.DataVersion()},
	})
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}

// allTopicConfigs serves GET_ALL_TOPIC_CONFIG (21): every topic's stored config,
// as Apache's TopicConfigSerializeWrapper. The dashboard's topic page classifies
// topics by it (attributes["message.type"]), so attributes is always an object,
// as in topicConfig.
func (a *API) allTopicConfigs(context.Context, *route.Request) (*transport.Command, error) {
	type withAttributes struct {
		fsm.TopicConfig
		Attributes map[string]string `json:"attributes"`
	}
	table := make(map[string]withAttributes)
	for _, t := range a.d.Replica.Topics() {
		if t.TopicFilterType == "" {
			t.TopicFilterType = fsm.TopicFilterSingleTag
		}
		attrs := t.Attributes
		if attrs == nil {
			attrs = map[string]string{}
		}
		table[t.Name] = withAttributes{t, attrs}
	}
	body, err := json.Marshal(map[string]any{
		"topicConfigTable": table,
		"dataVersion":      map[string]int64{"timestamp": 0, "counter": a.d.Replica.DataVersion()},
	})
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}
