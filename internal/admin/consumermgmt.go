package admin

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/rocketraft/rocketraft/transport"
)

// ResetOffset is one queue whose consumer offset a reset moved.
type ResetOffset struct {
	BrokerGroup string `json:"brokerName"`
	Topic       string `json:"topic"`
	QueueID     int32  `json:"queueId"`
	Offset      int64  `json:"offset"`
}

// GroupResetOffset moves consumer group's offsets on topic to the first message
// stored at or after timestamp (ms; -1 = the end of each queue) on every selected
// broker group that has the topic (INVOKE_BROKER_TO_RESET_OFFSET, 222). The
// leader replicates the offsets and tells the group's connected clients, which
// resume from them. Without force a queue only moves backwards.
func (c *Client) GroupResetOffset(ctx context.Context, group, topic string, timestamp int64, force bool, brokerGroup string) ([]ResetOffset, error) {
	all, err := c.Groups(ctx)
	if err != nil {
		return nil, err
	}
	groups, err := selectGroups(all, "", brokerGroup)
	if err != nil {
		return nil, err
	}
	ext := map[string]string{"group": group, "topic": topic,
		"timestamp": strconv.FormatInt(timestamp, 10), "isForce": strconv.FormatBool(force)}
	var out []ResetOffset
	found := false
	for _, g := range groups {
		resp, err := c.invoke(ctx, g.Target(), transport.InvokeBrokerToResetOffset, ext, 0)
		if err != nil {
			return out, err
		}
		switch resp.ResponseCode() {
		case transport.Success:
		case transport.TopicNotExist:
			continue // the topic lives on other broker groups
		default:
			return out, fmt.Errorf("reset offset broker=%s: %s %s: %w", g.Target(), resp.ResponseCode(), resp.Remark, ErrBrokerResponse)
		}
		found = true
		rs, err := decodeResetBody(resp.Body)
		if err != nil {
			return out, fmt.Errorf("reset offset broker=%s: %v: %w", g.Target(), err, ErrBadAnswer)
		}
		for _, r := range rs {
			r.BrokerGroup = g.Name
			out = append(out, r)
		}
	}
	if !found {
		return nil, fmt.Errorf("reset offset: topic %s on %d broker groups: %w", topic, len(groups), ErrNotFound)
	}
	return out, nil
}

// decodeResetBody reads Apache's ResetOffsetBody, {"offsetTable":{<MessageQueue>:
// offset}} with each key the bare queue object (fastjson's form, which the
// broker writes) or a string holding it, sorted by topic and queue.
func decodeResetBody(body []byte) ([]ResetOffset, error) {
	body, err := transport.QuoteObjectKeys(body)
	if err != nil {
		return nil, err
	}
	var b struct {
		OffsetTable map[string]int64 `json:"offsetTable"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, err
	}
	out := make([]ResetOffset, 0, len(b.OffsetTable))
	for k, off := range b.OffsetTable {
		var mq struct {
			Topic   string `json:"topic"`
			QueueID int32  `json:"queueId"`
		}
		if err := json.Unmarshal([]byte(k), &mq); err != nil {
			return nil, fmt.Errorf("offsetTable key %q is not a MessageQueue: %v", k, err)
		}
		out = append(out, ResetOffset{Topic: mq.Topic, QueueID: mq.QueueID, Offset: off})
	}
	slices.SortFunc(out, func(a, b ResetOffset) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.QueueID, b.QueueID))
	})
	return out, nil
}

// ResetOffsetTable renders GroupResetOffset.
func ResetOffsetTable(group string, rs []ResetOffset) Table {
	t := Table{Header: []string{"TOPIC", "BROKER-GROUP", "QUEUE", "NEW-OFFSET"}}
	for _, r := range rs {
		t.Rows = append(t.Rows, []string{r.Topic, r.BrokerGroup, strconv.Itoa(int(r.QueueID)), strconv.FormatInt(r.Offset, 10)})
	}
	t.Footer = []string{fmt.Sprintf("consumer group %s: %d queues reset; connected clients were told to resume from these offsets", group, len(rs))}
	t.Doc = struct {
		ConsumerGroup string        `json:"consumerGroup"`
		Queues        []ResetOffset `json:"queues"`
	}{group, rows(rs)}
	return t
}

// RunningInfo is what one consumer client reports about itself
// (GET_CONSUMER_RUNNING_INFO, 307, relayed by a broker).
type RunningInfo struct {
	ClientID      string                `json:"clientId"`
	Properties    map[string]string     `json:"properties"`
	Subscriptions []RunningSubscription `json:"subscriptions"`
	// Raw is the client's answer as sent: the Go client writes mqTable with
	// object keys, so it is not strict JSON and only its valid parts are
	// decoded. -o json gives only its length (answerBytes).
	Raw []byte `json:"-"`
	// Remark is the client's remark, the only explanation when it sent no body
	// (the pinned Go client answers "json marshal error: … NaN" for a while
	// after it starts keeping statistics).
	Remark string `json:"remark,omitempty"`
}

// RunningSubscription is one subscription of a running consumer.
type RunningSubscription struct {
	Topic          string `json:"topic"`
	SubString      string `json:"subString"`
	ExpressionType string `json:"expressionType"`
}

// GroupRunningInfo asks each client of a consumer group (or only clientID) for its
// running info, through the leader of the broker group (the first one when
// brokerGroup is empty) that the clients heartbeat to.
func (c *Client) GroupRunningInfo(ctx context.Context, group, clientID, brokerGroup string) ([]RunningInfo, error) {
	g, err := c.group(ctx, brokerGroup)
	if err != nil && brokerGroup == "" {
		all, aerr := c.Groups(ctx)
		if aerr != nil || len(all) == 0 {
			return nil, err
		}
		g, err = all[0], nil
	}
	if err != nil {
		return nil, err
	}
	ids := []string{clientID}
	if clientID == "" {
		resp, err := c.invoke(ctx, g.Target(), transport.GetConsumerListByGroup, map[string]string{"consumerGroup": group}, 0)
		if err != nil {
			return nil, err
		}
		var body struct {
			IDs []string `json:"consumerIdList"`
		}
		_ = json.Unmarshal(resp.Body, &body)
		if len(body.IDs) == 0 {
			return nil, fmt.Errorf("running info: consumer group %s has no client connected to broker group %s: %w", group, g.Name, ErrNotFound)
		}
		ids = body.IDs
	}
	var out []RunningInfo
	for _, id := range ids {
		resp, err := c.call(ctx, g.Target(), transport.GetConsumerRunningInfo,
			map[string]string{"consumerGroup": group, "clientId": id, "jstackEnable": "false"})
		if err != nil {
			return out, err
		}
		ri := parseRunningInfo(id, resp.Body)
		ri.Remark = resp.Remark
		out = append(out, ri)
	}
	return out, nil
}

// parseRunningInfo decodes the parts of a ConsumerRunningInfo body that are valid
// JSON on their own.
func parseRunningInfo(clientID string, body []byte) RunningInfo {
	ri := RunningInfo{ClientID: clientID, Raw: body}
	if v := topLevelValue(body, "properties"); v != nil {
		_ = json.Unmarshal(v, &ri.Properties)
	}
	if v := topLevelValue(body, "subscriptionSet"); v != nil {
		_ = json.Unmarshal(v, &ri.Subscriptions)
	}
	return ri
}

// topLevelValue returns the raw value of key in a JSON-like object, found by
// scanning with bracket depth and string escapes, so the rest of the document
// need not be valid JSON.
func topLevelValue(doc []byte, key string) []byte {
	needle := []byte(strconv.Quote(key))
	depth, inString := 0, false
	for i := 0; i < len(doc); i++ {
		ch := doc[i]
		if inString {
			if ch == '\\' {
				i++
			} else if ch == '"' {
				inString = false
			}
			continue
		}
		switch ch {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			if depth == 1 && bytes.HasPrefix(doc[i:], needle) {
				rest := bytes.TrimLeft(doc[i+len(needle):], " \t\r\n")
				if len(rest) > 0 && rest[0] == ':' {
					return valueAt(bytes.TrimLeft(rest[1:], " \t\r\n"))
				}
			}
			inString = true
		}
	}
	return nil
}

// valueAt returns the JSON value at the start of b (object, array or scalar).
func valueAt(b []byte) []byte {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if inString {
			if ch == '\\' {
				i++
			} else if ch == '"' {
				inString = false
				if depth == 0 {
					return b[:i+1]
				}
			}
			continue
		}
		switch ch {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return b[:i+1]
			}
			if depth < 0 {
				return b[:i]
			}
		case ',':
			if depth == 0 {
				return b[:i]
			}
		}
	}
	return nil
}

// RunningInfoTable renders GroupRunningInfo: each client's properties and
// subscriptions.
func RunningInfoTable(group string, infos []RunningInfo) Table {
	type clientDoc struct {
		RunningInfo
		AnswerBytes int `json:"answerBytes"`
	}
	t := Table{Header: []string{"CLIENT", "ITEM", "VALUE"}}
	docs := []clientDoc{}
	for _, ri := range infos {
		docs = append(docs, clientDoc{ri, len(ri.Raw)})
		for _, k := range slices.Sorted(maps.Keys(ri.Properties)) {
			t.Rows = append(t.Rows, []string{ri.ClientID, k, ri.Properties[k]})
		}
		for _, s := range ri.Subscriptions {
			t.Rows = append(t.Rows, []string{ri.ClientID, "subscription " + s.Topic, s.ExpressionType + " " + s.SubString})
		}
		t.Rows = append(t.Rows, []string{ri.ClientID, "answer bytes", strconv.Itoa(len(ri.Raw))})
		if len(ri.Raw) == 0 && ri.Remark != "" {
			t.Rows = append(t.Rows, []string{ri.ClientID, "client remark", ri.Remark})
		}
	}
	t.Footer = []string{fmt.Sprintf("consumer group %s: %d clients", group, len(infos))}
	t.Doc = struct {
		ConsumerGroup string      `json:"consumerGroup"`
		Clients       []clientDoc `json:"clients"`
	}{group, docs}
	return t
}
