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

// SubscriptionGroup is one row of group list.
// The JSON names are Java's (SubscriptionGroupConfig) and serve both the
// broker's answer and -o json.
type SubscriptionGroup struct {
	BrokerGroup            string `json:"brokerName"`
	Name                   string `json:"groupName"`
	ConsumeEnable          bool   `json:"consumeEnable"`
	ConsumeBroadcastEnable bool   `json:"consumeBroadcastEnable"`
	ConsumeMessageOrderly  bool   `json:"consumeMessageOrderly"`
	RetryQueueNums         int32  `json:"retryQueueNums"`
	RetryMaxTimes          int32  `json:"retryMaxTimes"`
}

// GroupList reads every group's subscription group table
// (GET_ALL_SUBSCRIPTIONGROUP_CONFIG) from the selected broker groups.
func (c *Client) GroupList(ctx context.Context, cluster, brokerGroup string) ([]SubscriptionGroup, error) {
	all, err := c.Groups(ctx)
	if err != nil {
		return nil, err
	}
	groups, err := selectGroups(all, cluster, brokerGroup)
	if err != nil {
		return nil, err
	}
	var out []SubscriptionGroup
	for _, g := range groups {
		resp, err := c.call(ctx, g.Target(), transport.GetAllSubscriptionGroupConfig, nil)
		if err != nil {
			return nil, err
		}
		var body struct {
			Table map[string]SubscriptionGroup `json:"subscriptionGroupTable"`
		}
		if err := json.Unmarshal(resp.Body, &body); err != nil {
			return nil, fmt.Errorf("group list broker=%s: %v: %w", g.Target(), err, ErrBadAnswer)
		}
		for _, name := range slices.Sorted(maps.Keys(body.Table)) {
			sg := body.Table[name]
			sg.BrokerGroup = g.Name
			out = append(out, sg)
		}
	}
	return out, nil
}

// GroupListTable renders GroupList.
func GroupListTable(gs []SubscriptionGroup) Table {
	t := Table{Header: []string{"CONSUMER-GROUP", "BROKER-GROUP", "CONSUME", "BROADCAST", "RETRY-QUEUES", "RETRY-MAX"}}
	for _, g := range gs {
		t.Rows = append(t.Rows, []string{g.Name, g.BrokerGroup, strconv.FormatBool(g.ConsumeEnable),
			strconv.FormatBool(g.ConsumeBroadcastEnable), strconv.Itoa(int(g.RetryQueueNums)), strconv.Itoa(int(g.RetryMaxTimes))})
	}
	t.Doc = rows(gs)
	return t
}

// QueueProgress is one queue of a consumer group's progress, as the broker's
// ConsumerProgress code answers it (broker.QueueProgress); -o json prints
// it with the same names.
type QueueProgress struct {
	BrokerGroup    string `json:"brokerName"`
	Topic          string `json:"topic"`
	QueueID        int32  `json:"queueId"`
	BrokerOffset   int64  `json:"brokerOffset"`
	ConsumerOffset int64  `json:"consumerOffset"` // -1: none committed
	Lag            int64  `json:"lag"`
}

// GroupProgress asks every selected broker group's leader for the group's
// per-queue offsets and lag (topic "" = every topic it has offsets on).
func (c *Client) GroupProgress(ctx context.Context, group, topic, brokerGroup string) ([]QueueProgress, error) {
	all, err := c.Groups(ctx)
	if err != nil {
		return nil, err
	}
	groups, err := selectGroups(all, "", brokerGroup)
	if err != nil {
		return nil, err
	}
	ext := map[string]string{"consumerGroup": group}
	if topic != "" {
		ext["topic"] = topic
	}
	var out []QueueProgress
	for _, g := range groups {
		resp, err := c.call(ctx, g.Target(), transport.ConsumerProgress, ext)
		if err != nil {
			return nil, err
		}
		var body struct {
			BrokerName string          `json:"brokerName"`
			Queues     []QueueProgress `json:"queues"`
		}
		if err := json.Unmarshal(resp.Body, &body); err != nil {
			return nil, fmt.Errorf("group progress broker=%s: %v: %w", g.Target(), err, ErrBadAnswer)
		}
		for _, q := range body.Queues {
			q.BrokerGroup = body.BrokerName
			out = append(out, q)
		}
	}
	return out, nil
}

// GroupProgressTable renders GroupProgress with the total lag, like mqadmin
// consumerProgress.
func GroupProgressTable(group string, qs []QueueProgress) Table {
	t := Table{Header: []string{"TOPIC", "BROKER-GROUP", "QUEUE", "BROKER-OFFSET", "CONSUMER-OFFSET", "LAG"}}
	var lag int64
	for _, q := range qs {
		co := strconv.FormatInt(q.ConsumerOffset, 10)
		if q.ConsumerOffset < 0 {
			co = "" // printed as "-": nothing committed
		}
		lag += q.Lag
		t.Rows = append(t.Rows, []string{q.Topic, q.BrokerGroup, strconv.Itoa(int(q.QueueID)),
			strconv.FormatInt(q.BrokerOffset, 10), co, strconv.FormatInt(q.Lag, 10)})
	}
	t.Footer = []string{fmt.Sprintf("consumer group %s: total lag %d over %d queues", group, lag, len(qs))}
	t.Doc = struct {
		ConsumerGroup string          `json:"consumerGroup"`
		TotalLag      int64           `json:"totalLag"`
		Queues        []QueueProgress `json:"queues"`
	}{group, lag, rows(qs)}
	return t
}
