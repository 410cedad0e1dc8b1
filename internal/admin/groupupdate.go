package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/rocketraft/rocketraft/transport"
)

// GroupPatch is what group update changes; nil fields keep the broker's
// value, so `group update G --max-retries 3` does not reset the retry queues
// or the broadcast flag (read-modify-write, as topic update does).
type GroupPatch struct {
	RetryQueueNums *int32
	RetryMaxTimes  *int32
	ConsumeEnable  *bool
	Broadcast      *bool
	Orderly        *bool
}

// groupDefaults are RocketMQ's SubscriptionGroupConfig defaults, the start of
// a group that does not exist yet.
func groupDefaults(name string) map[string]any {
	return map[string]any{"groupName": name, "consumeEnable": true, "consumeFromMinEnable": true, "consumeBroadcastEnable": true,
		"consumeMessageOrderly": false, "retryQueueNums": 1, "retryMaxTimes": 16, "brokerId": 0, "whichBrokerWhenConsumeSlowly": 1,
		"notifyConsumerIdsChangedEnable": true, "groupSysFlag": 0, "consumeTimeoutMinute": 15}
}

// apply sets the given fields on a SubscriptionGroupConfig held as a JSON
// object, keeping every other field, those this client does not know included.
func (p GroupPatch) apply(cfg map[string]any) {
	if p.RetryQueueNums != nil {
		cfg["retryQueueNums"] = *p.RetryQueueNums
	}
	if p.RetryMaxTimes != nil {
		cfg["retryMaxTimes"] = *p.RetryMaxTimes
	}
	if p.ConsumeEnable != nil {
		cfg["consumeEnable"] = *p.ConsumeEnable
	}
	if p.Broadcast != nil {
		cfg["consumeBroadcastEnable"] = *p.Broadcast
	}
	if p.Orderly != nil {
		cfg["consumeMessageOrderly"] = *p.Orderly
	}
}

// GroupChange is group update's outcome on one broker group.
type GroupChange struct {
	BrokerGroup string
	Addr        string
	Created     bool
	After       SubscriptionGroup
	Err         error
}

// GroupUpdate reads group's config from the leader of every selected broker
// group, applies p and writes it back (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP);
// a group not there yet starts from RocketMQ's defaults.
func (c *Client) GroupUpdate(ctx context.Context, group, cluster, brokerName string, p GroupPatch) ([]GroupChange, error) {
	if p.RetryQueueNums != nil && *p.RetryQueueNums < 0 {
		return nil, fmt.Errorf("group update %s: --retry-queues=%d: must be >= 0", group, *p.RetryQueueNums)
	}
	if p.RetryMaxTimes != nil && *p.RetryMaxTimes < -1 {
		return nil, fmt.Errorf("group update %s: --max-retries=%d: must be >= -1", group, *p.RetryMaxTimes)
	}
	groups, err := c.selected(ctx, cluster, brokerName)
	if err != nil {
		return nil, err
	}
	var out []GroupChange
	for _, g := range groups {
		ch := GroupChange{BrokerGroup: g.Name, Addr: g.Target()}
		ch.Created, ch.After, ch.Err = c.updateGroupOn(ctx, ch.Addr, group, p)
		out = append(out, ch)
	}
	return out, nil
}

func (c *Client) updateGroupOn(ctx context.Context, addr, group string, p GroupPatch) (bool, SubscriptionGroup, error) {
	var after SubscriptionGroup
	resp, err := c.call(ctx, addr, transport.GetAllSubscriptionGroupConfig, nil)
	if err != nil {
		return false, after, err
	}
	var body struct {
		Table map[string]map[string]any `json:"subscriptionGroupTable"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		return false, after, fmt.Errorf("group update broker=%s: %v: %w", addr, err, ErrBadAnswer)
	}
	cfg, exists := body.Table[group]
	if !exists {
		cfg = groupDefaults(group)
	}
	p.apply(cfg)
	doc, err := json.Marshal(cfg)
	if err != nil {
		return false, after, err
	}
	if err := json.Unmarshal(doc, &after); err != nil {
		return false, after, err
	}
	if err := c.callBody(ctx, addr, transport.UpdateAndCreateSubscriptionGroup, nil, doc); err != nil {
		return false, after, err
	}
	return !exists, after, nil
}

// callBody sends one request with a body and fails on any code but SUCCESS.
func (c *Client) callBody(ctx context.Context, addr string, code transport.RequestCode, ext map[string]string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, err := c.tc.Invoke(ctx, addr, transport.NewRequest(code, c.cfg.Credentials.SignExt(ext, body), body))
	if err != nil {
		return fmt.Errorf("%s broker=%s: %w", code, addr, err)
	}
	if resp.ResponseCode() != transport.Success {
		return fmt.Errorf("%s broker=%s: %s %s: %w", code, addr, resp.ResponseCode(), resp.Remark, ErrBrokerResponse)
	}
	return nil
}

// GroupUpdateError is the first failure among cs, so the CLI exits non-zero.
func GroupUpdateError(cs []GroupChange) error {
	for _, ch := range cs {
		if ch.Err != nil {
			return fmt.Errorf("group %s: %w", ch.BrokerGroup, ch.Err)
		}
	}
	return nil
}

// GroupUpdateTable renders GroupUpdate: the config written per broker group.
func GroupUpdateTable(group string, cs []GroupChange) Table {
	t := Table{Header: []string{"BROKER-GROUP", "ADDR", "RESULT", "CONSUME", "BROADCAST", "ORDERLY", "RETRY-QUEUES", "RETRY-MAX"}}
	type doc struct {
		BrokerName string            `json:"brokerName"`
		Addr       string            `json:"addr"`
		Result     string            `json:"result"`
		After      SubscriptionGroup `json:"after"`
		Error      string            `json:"error,omitempty"`
	}
	docs := []doc{}
	for _, ch := range cs {
		res := "updated"
		switch {
		case ch.Err != nil:
			res = "FAILED: " + ch.Err.Error()
		case ch.Created:
			res = "created"
		}
		a := ch.After
		a.BrokerGroup = ch.BrokerGroup
		t.Rows = append(t.Rows, []string{ch.BrokerGroup, ch.Addr, res, strconv.FormatBool(a.ConsumeEnable),
			strconv.FormatBool(a.ConsumeBroadcastEnable), strconv.FormatBool(a.ConsumeMessageOrderly), strconv.Itoa(int(a.RetryQueueNums)), strconv.Itoa(int(a.RetryMaxTimes))})
		if ch.Err != nil {
			res = "failed"
		}
		docs = append(docs, doc{BrokerName: ch.BrokerGroup, Addr: ch.Addr, Result: res, After: a, Error: errText(ch.Err)})
	}
	t.Footer = []string{"consumer group " + group}
	t.Doc = docs
	return t
}

// GroupDelete removes group's subscription config from the leader of every
// selected broker group (DELETE_SUBSCRIPTIONGROUP); cleanOffsets drops its
// committed offsets too. A group that is not there succeeds, as in Apache.
func (c *Client) GroupDelete(ctx context.Context, group, cluster, brokerName string, cleanOffsets bool) ([]GroupResult, error) {
	ext := map[string]string{"groupName": group, "cleanOffset": strconv.FormatBool(cleanOffsets),
		"removeOffset": strconv.FormatBool(cleanOffsets)} // 4.9 brokers read removeOffset
	return c.eachGroup(ctx, cluster, brokerName, transport.DeleteSubscriptionGroup, ext)
}
