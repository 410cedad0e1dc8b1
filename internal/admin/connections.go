package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/rocketraft/rocketraft/transport"
)

// Connection is one client of a consumer or producer group as a broker knows
// it from heartbeats. The JSON names are Java's (Connection.java) plus the
// broker group that reported it.
type Connection struct {
	BrokerGroup string `json:"brokerName"`
	ClientID    string `json:"clientId"`
	ClientAddr  string `json:"clientAddr"`
	Language    string `json:"language"`
	// Version is the client's RocketMQ version code (MQVersion ordinal), as
	// the remoting header carried it.
	Version int32 `json:"version"`
}

// Subscription is one topic a consumer group subscribes to.
type Subscription struct {
	Topic          string   `json:"topic"`
	SubString      string   `json:"subString"`
	ExpressionType string   `json:"expressionType"`
	TagsSet        []string `json:"tagsSet"`
	SubVersion     int64    `json:"subVersion"`
}

// ConsumerConnections is a consumer group's members and what they consume,
// merged over the broker groups asked.
type ConsumerConnections struct {
	Group            string         `json:"consumerGroup"`
	ConsumeType      string         `json:"consumeType"`
	MessageModel     string         `json:"messageModel"`
	ConsumeFromWhere string         `json:"consumeFromWhere"`
	Connections      []Connection   `json:"connections"`
	Subscriptions    []Subscription `json:"subscriptions"`
}

// ConsumerConnections asks the leader of every selected broker group
// (GET_CONSUMER_CONNECTION_LIST) for group's members. Consumers heartbeat
// every broker, so one client appears in each group; it is listed once, under
// the first group that reported it. A broker group where the group is not
// online is skipped; none online at all is ErrNotFound.
func (c *Client) ConsumerConnections(ctx context.Context, group, brokerName string) (ConsumerConnections, error) {
	out := ConsumerConnections{Group: group}
	groups, err := c.selected(ctx, "", brokerName)
	if err != nil {
		return out, err
	}
	seen := map[string]bool{}
	subs := map[string]Subscription{}
	online := false
	for _, g := range groups {
		resp, err := c.invoke(ctx, g.Target(), transport.GetConsumerConnectionList, map[string]string{"consumerGroup": group}, 0)
		if err != nil {
			return out, err
		}
		if resp.ResponseCode() == transport.ConsumerNotOnline {
			continue
		}
		if resp.ResponseCode() != transport.Success {
			return out, fmt.Errorf("%s broker=%s: %s %s: %w", transport.GetConsumerConnectionList, g.Target(),
				resp.ResponseCode(), resp.Remark, ErrBrokerResponse)
		}
		var body struct {
			ConnectionSet     []Connection            `json:"connectionSet"`
			SubscriptionTable map[string]Subscription `json:"subscriptionTable"`
			ConsumeType       string                  `json:"consumeType"`
			MessageModel      string                  `json:"messageModel"`
			ConsumeFromWhere  string                  `json:"consumeFromWhere"`
		}
		if err := json.Unmarshal(resp.Body, &body); err != nil {
			return out, fmt.Errorf("connections consumer broker=%s: %v: %w", g.Target(), err, ErrBadAnswer)
		}
		online = true
		if out.ConsumeType == "" {
			out.ConsumeType, out.MessageModel, out.ConsumeFromWhere = body.ConsumeType, body.MessageModel, body.ConsumeFromWhere
		}
		out.Connections = appendNew(out.Connections, body.ConnectionSet, g.Name, seen)
		for topic, s := range body.SubscriptionTable {
			if _, ok := subs[topic]; !ok {
				subs[topic] = s
			}
		}
	}
	if !online {
		return out, fmt.Errorf("consumer group %q: no member online in any broker group asked: %w", group, ErrNotFound)
	}
	for _, topic := range slices.Sorted(maps.Keys(subs)) {
		out.Subscriptions = append(out.Subscriptions, subs[topic])
	}
	return out, nil
}

// appendNew appends the connections whose clientId is not in seen, tagged
// with the broker group, sorted by clientId.
func appendNew(dst, src []Connection, brokerGroup string, seen map[string]bool) []Connection {
	slices.SortFunc(src, func(a, b Connection) int { return cmpString(a.ClientID, b.ClientID) })
	for _, cn := range src {
		if seen[cn.ClientID] {
			continue
		}
		seen[cn.ClientID] = true
		cn.BrokerGroup = brokerGroup
		dst = append(dst, cn)
	}
	return dst
}

// ConsumerConnectionsTable renders ConsumerConnections like mqadmin
// consumerConnection: one row per member, then the group's consume settings
// and subscriptions.
func ConsumerConnectionsTable(cc ConsumerConnections) Table {
	t := connectionRows(cc.Connections)
	t.Footer = append(t.Footer, fmt.Sprintf("consumer group %s: %d connections, consumeType %s, messageModel %s, consumeFromWhere %s",
		cc.Group, len(cc.Connections), dash(cc.ConsumeType), dash(cc.MessageModel), dash(cc.ConsumeFromWhere)))
	for _, s := range cc.Subscriptions {
		t.Footer = append(t.Footer, fmt.Sprintf("  subscribes %s %s %s", s.Topic, dash(s.ExpressionType), dash(s.SubString)))
	}
	cc.Connections, cc.Subscriptions = rows(cc.Connections), rows(cc.Subscriptions)
	t.Doc = cc
	return t
}

// ProducerConnections asks the leader of every broker group serving topic
// (GET_PRODUCER_CONNECTION_LIST) for group's producers, as mqadmin
// producerConnection does: Java producers heartbeat only the brokers of the
// topics they send to. A broker group that never saw the group is skipped;
// none that did is ErrNotFound.
func (c *Client) ProducerConnections(ctx context.Context, group, topic string) ([]Connection, error) {
	targets, err := c.topicTargets(ctx, topic)
	if err != nil {
		return nil, err
	}
	var out []Connection
	seen := map[string]bool{}
	known := false
	for _, name := range slices.Sorted(maps.Keys(targets)) {
		addr := targets[name]
		resp, err := c.invoke(ctx, addr, transport.GetProducerConnectionList, map[string]string{"producerGroup": group}, 0)
		if err != nil {
			return nil, err
		}
		if resp.ResponseCode() != transport.Success {
			// SYSTEM_ERROR "not exist" is how a broker says it never saw the
			// group (Apache's answer, kept for mqadmin); anything else fails.
			if resp.ResponseCode() == transport.SystemError {
				continue
			}
			return nil, fmt.Errorf("%s broker=%s: %s %s: %w", transport.GetProducerConnectionList, addr,
				resp.ResponseCode(), resp.Remark, ErrBrokerResponse)
		}
		var body struct {
			ConnectionSet []Connection `json:"connectionSet"`
		}
		if err := json.Unmarshal(resp.Body, &body); err != nil {
			return nil, fmt.Errorf("connections producer broker=%s: %v: %w", addr, err, ErrBadAnswer)
		}
		known = true
		out = appendNew(out, body.ConnectionSet, name, seen)
	}
	if !known {
		return nil, fmt.Errorf("producer group %q: not known to any broker group serving topic %q: %w", group, topic, ErrNotFound)
	}
	return out, nil
}

// ProducerConnectionsTable renders ProducerConnections.
func ProducerConnectionsTable(group string, cs []Connection) Table {
	t := connectionRows(cs)
	t.Footer = []string{fmt.Sprintf("producer group %s: %d connections", group, len(cs))}
	t.Doc = struct {
		ProducerGroup string       `json:"producerGroup"`
		Connections   []Connection `json:"connections"`
	}{group, rows(cs)}
	return t
}

func connectionRows(cs []Connection) Table {
	t := Table{Header: []string{"CLIENT-ID", "CLIENT-ADDR", "LANGUAGE", "VERSION", "BROKER-GROUP"}}
	for _, c := range cs {
		t.Rows = append(t.Rows, []string{c.ClientID, c.ClientAddr, c.Language, strconv.Itoa(int(c.Version)), c.BrokerGroup})
	}
	return t
}

// dash prints an unknown setting as "-", as table cells do.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
