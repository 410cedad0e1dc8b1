package adminapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// subscriptionData is SubscriptionData.java as connection lists carry it.
type subscriptionData struct {
	ClassFilterMode bool     `json:"classFilterMode"`
	Topic           string   `json:"topic"`
	SubString       string   `json:"subString"`
	TagsSet         []string `json:"tagsSet"`
	CodeSet         []int32  `json:"codeSet"`
	SubVersion      int64    `json:"subVersion"`
	ExpressionType  string   `json:"expressionType"`
}

func subscriptionDataOf(s clients.Subscription) subscriptionData {
	d := subscriptionData{Topic: s.Topic, SubString: s.SubString, TagsSet: s.TagsSet, CodeSet: s.CodeSet(),
		SubVersion: s.SubVersion, ExpressionType: s.ExpressionType}
	if d.TagsSet == nil {
		d.TagsSet = []string{}
	}
	if d.ExpressionType == "" {
		d.ExpressionType = clients.ExpressionTag
	}
	return d
}

// ConsumerConnection is GET_CONSUMER_CONNECTION_LIST's body
// (ConsumerConnection.java).
type ConsumerConnection struct {
	ConnectionSet     []clients.Connection        `json:"connectionSet"`
	SubscriptionTable map[string]subscriptionData `json:"subscriptionTable"`
	ConsumeType       string                      `json:"consumeType,omitempty"`
	MessageModel      string                      `json:"messageModel,omitempty"`
	ConsumeFromWhere  string                      `json:"consumeFromWhere,omitempty"`
}

// consumerConnections serves GET_CONSUMER_CONNECTION_LIST (203, mqadmin
// consumerConnection and consumerProgress, the dashboard) from the heartbeats
// this node received: clients heartbeat every node, so any node answers. A
// group with no member connected is CONSUMER_NOT_ONLINE, as in Apache.
func (a *API) consumerConnections(_ context.Context, req *route.Request) (*transport.Command, error) {
	f := route.FieldsOf(req.Command)
	group := f.Str("consumerGroup", true)
	if f.Err != nil {
		return nil, f.Err
	}
	info, ok := a.d.Clients.ConsumerGroup(group)
	if !ok {
		return nil, fmt.Errorf("the consumer group[%s] not online on broker %s: %w", group, a.d.BrokerName, route.ErrConsumerNotOnline)
	}
	cc := ConsumerConnection{ConnectionSet: info.Connections, SubscriptionTable: make(map[string]subscriptionData, len(info.Subscriptions)),
		ConsumeType: info.ConsumeType, MessageModel: info.MessageModel, ConsumeFromWhere: info.ConsumeFromWhere}
	for _, s := range info.Subscriptions {
		cc.SubscriptionTable[s.Topic] = subscriptionDataOf(s)
	}
	body, err := json.Marshal(cc)
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}

// producerConnections serves GET_PRODUCER_CONNECTION_LIST (204, mqadmin
// producerConnection, the dashboard): the connections of a producer group,
// known from heartbeats (Java producers heartbeat the leader only) and sends.
// A group this node never saw is SYSTEM_ERROR "not exist", as in Apache.
func (a *API) producerConnections(_ context.Context, req *route.Request) (*transport.Command, error) {
	f := route.FieldsOf(req.Command)
	group := f.Str("producerGroup", true)
	if f.Err != nil {
		return nil, f.Err
	}
	conns, ok := a.d.Clients.ProducerConnections(group)
	if !ok {
		return nil, fmt.Errorf("the producer group[%s] on broker %s: %w", group, a.d.BrokerName, route.ErrProducerNotExist)
	}
	body, err := json.Marshal(struct {
		ConnectionSet []clients.Connection `json:"connectionSet"`
	}{conns})
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}

// allProducers serves GET_ALL_PRODUCER_INFO (328, the exporter's
// rocketmq_producer_count): every producer group this node knows, each with its
// connections, as Apache's ProducerTableInfo {"data":{group:[ProducerInfo]}}.
// Java producers heartbeat the leader only, so the exporter asks brokerId 0.
func (a *API) allProducers(context.Context, *route.Request) (*transport.Command, error) {
	body, err := json.Marshal(struct {
		Data map[string][]clients.ProducerInfo `json:"data"`
	}{a.d.Clients.AllProducers()})
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}
