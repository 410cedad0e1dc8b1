package admin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// bodyPreviewLen bounds the body shown: enough to recognise a payload, short
// enough for a terminal line.
const bodyPreviewLen = 64

// MessageView is one decoded stored message; -o json prints it with these
// names (RocketMQ's MessageExt where it has one), times in UTC.
type MessageView struct {
	Group       string               `json:"brokerName"` // broker group it was read from
	Addr        string               `json:"addr"`
	Topic       string               `json:"topic"`
	QueueID     int32                `json:"queueId"`
	QueueOffset store.QueueOffset    `json:"queueOffset"`
	PhysOffset  store.PhysicalOffset `json:"commitLogOffset"`
	// OffsetMsgID is the id VIEW_MESSAGE_BY_ID understands; MsgID is the
	// producer's UNIQ_KEY.
	OffsetMsgID    string            `json:"offsetMsgId"`
	MsgID          string            `json:"msgId"`
	Tags           string            `json:"tags"`
	Keys           []string          `json:"keys"`
	Properties     map[string]string `json:"properties"`
	BodySize       int               `json:"bodySize"`
	BodyPreview    string            `json:"bodyPreview"`
	BornHost       string            `json:"bornHost"`
	StoreHost      string            `json:"storeHost"`
	BornTime       time.Time         `json:"bornTime"`
	StoreTime      time.Time         `json:"storeTime"`
	ReconsumeTimes int32             `json:"reconsumeTimes"`
	// Body is the whole body (the console shows it); -o json keeps to the preview.
	Body []byte `json:"-"`
}

// decodeMessages splits a QUERY_MESSAGE or VIEW_MESSAGE_BY_ID body (stored
// records back to back) and decodes each with CRC checks.
func decodeMessages(body []byte) ([]MessageView, error) {
	var out []MessageView
	for len(body) > 0 {
		size, _, err := store.RecordSize(body)
		if err != nil || size <= 0 || int(size) > len(body) {
			return out, fmt.Errorf("record at byte %d: size %d of %d left: %v: %w", len(body), size, len(body), err, ErrBadAnswer)
		}
		m, err := store.DecodeMessage(body[:size], true)
		if err != nil {
			return out, fmt.Errorf("decode record: %v: %w", err, ErrBadAnswer)
		}
		out = append(out, viewOf(m))
		body = body[size:]
	}
	return out, nil
}

func viewOf(m store.Message) MessageView {
	props := store.ParseProperties(m.Properties)
	v := MessageView{
		Topic: m.Topic, QueueID: m.QueueID, QueueOffset: m.QueueOffset, PhysOffset: m.PhysicalOffset,
		OffsetMsgID: store.OffsetMsgID(m.StoreHost, m.PhysicalOffset),
		MsgID:       props[store.PropertyUniqKey], Tags: props[store.PropertyTags],
		Keys: store.Keys(m.Properties), Properties: props, BodySize: len(m.Body),
		BodyPreview: preview(m.Body), BornHost: m.BornHost.String(), StoreHost: m.StoreHost.String(),
		BornTime: time.UnixMilli(m.BornTimestamp).UTC(), StoreTime: time.UnixMilli(m.StoreTimestamp).UTC(),
		ReconsumeTimes: m.ReconsumeTimes, Body: m.Body,
	}
	return v
}

// preview shows the start of a body as text when it is UTF-8, else as hex.
func preview(b []byte) string {
	cut := b[:min(len(b), bodyPreviewLen)]
	suffix := ""
	if len(cut) < len(b) {
		suffix = "…"
	}
	if utf8.Valid(cut) || utf8.Valid(cut[:max(len(cut)-3, 0)]) {
		return strconv.Quote(strings.ToValidUTF8(string(cut), "")) + suffix
	}
	return fmt.Sprintf("0x%x%s", cut, suffix)
}

// MessageByKey asks every group serving topic (QUERY_MESSAGE) for messages whose
// KEYS or UNIQ_KEY equal key. The index matches hashes, so each answer is
// re-checked against the key, as RocketMQ's client does.
func (c *Client) MessageByKey(ctx context.Context, topic, key string, maxNum int) ([]MessageView, error) {
	var out []MessageView
	err := c.queryByKey(ctx, topic, key, maxNum, func(g, addr string, body []byte) error {
		ms, err := decodeMessages(body)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.Topic == topic && (m.MsgID == key || slices.Contains(m.Keys, key)) {
				m.Group, m.Addr = g, addr
				out = append(out, m)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("topic=%s key=%s: %w", topic, key, ErrNotFound)
	}
	return out, nil
}

// queryByKey sends QUERY_MESSAGE (topic, key, at most maxNum, any time) to
// every group serving topic, in group order, and hands each answer's records
// to each with the group and address; a group with no match is skipped.
func (c *Client) queryByKey(ctx context.Context, topic, key string, maxNum int, each func(group, addr string, body []byte) error) error {
	targets, err := c.topicTargets(ctx, topic)
	if err != nil {
		return err
	}
	ext := map[string]string{"topic": topic, "key": key, "maxNum": strconv.Itoa(maxNum),
		"beginTimestamp": "0", "endTimestamp": strconv.FormatInt(1<<62, 10)}
	for _, g := range slices.Sorted(maps.Keys(targets)) {
		addr := targets[g]
		resp, err := c.invoke(ctx, addr, transport.QueryMessage, ext, 0)
		if err != nil {
			return err
		}
		switch resp.ResponseCode() {
		case transport.Success:
		case transport.QueryNotFound:
			continue
		default:
			return fmt.Errorf("query topic=%s key=%s broker=%s: %s %s: %w", topic, key, addr, resp.ResponseCode(), resp.Remark, ErrBrokerResponse)
		}
		if err := each(g, addr, resp.Body); err != nil {
			return fmt.Errorf("query topic=%s key=%s broker=%s: %w", topic, key, addr, err)
		}
	}
	return nil
}

// topicTargets maps each group serving topic to its leader (or any node); with
// --broker it is that node alone.
func (c *Client) topicTargets(ctx context.Context, topic string) (map[string]string, error) {
	if c.cfg.BrokerAddr != "" {
		return map[string]string{"": c.cfg.BrokerAddr}, nil
	}
	r, err := c.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	return routeTargets(r), nil
}

// MessageByID finds a message by offset msgId (store host + physical offset,
// answered by that host with VIEW_MESSAGE_BY_ID) or, when the id is not an
// offset id of a known node and topic is given, by the producer's msgId
// (UNIQ_KEY, through the key index).
func (c *Client) MessageByID(ctx context.Context, id, topic string) ([]MessageView, error) {
	host, off, perr := store.ParseOffsetMsgID(id)
	if perr == nil {
		addr := host.String()
		if c.cfg.BrokerAddr != "" {
			addr = c.cfg.BrokerAddr // e.g. behind NAT or in a container
		}
		resp, err := c.invoke(ctx, addr, transport.ViewMessageByID, map[string]string{"offset": strconv.FormatInt(int64(off), 10)}, 0)
		if err == nil && resp.ResponseCode() == transport.Success {
			ms, err := decodeMessages(resp.Body)
			if err != nil {
				return nil, err
			}
			if len(ms) == 1 && ms[0].PhysOffset == off {
				ms[0].Addr, ms[0].Group = addr, c.groupOf(ctx, addr)
				return ms, nil
			}
		}
		if topic == "" {
			if err == nil {
				err = fmt.Errorf("%s %s: %w", resp.ResponseCode(), resp.Remark, ErrNotFound)
			}
			return nil, fmt.Errorf("message id=%s at %s offset %d: %w", id, addr, off, err)
		}
	}
	if topic == "" {
		return nil, fmt.Errorf("message id=%s is not an offset msgId (%v): give --topic to look it up as a producer msgId: %w", id, perr, ErrNotFound)
	}
	ms, err := c.MessageByKey(ctx, topic, id, 32)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("message id=%s topic=%s: %w", id, topic, ErrNotFound)
	}
	return ms, err
}

// groupOf names the broker group a node belongs to, "" when no group lists
// it (the id names a node the nameserver does not know, or it is down).
func (c *Client) groupOf(ctx context.Context, addr string) string {
	groups, err := c.Groups(ctx)
	if err != nil {
		return ""
	}
	for _, g := range groups {
		if slices.Contains(g.Nodes(), addr) {
			return g.Name
		}
	}
	return ""
}

// MessagesText renders messages as blocks of "name: value" lines (a message
// has too many fields for one table row).
func MessagesText(ms []MessageView) Table {
	t := Table{Header: []string{"FIELD", "VALUE"}}
	for i, m := range ms {
		if i > 0 {
			t.Rows = append(t.Rows, []string{"", ""})
		}
		props := make([]string, 0, len(m.Properties))
		for _, k := range slices.Sorted(maps.Keys(m.Properties)) {
			props = append(props, k+"="+m.Properties[k])
		}
		t.Rows = append(t.Rows,
			[]string{"Topic", m.Topic},
			[]string{"Group", m.Group},
			[]string{"QueueId", strconv.Itoa(int(m.QueueID))},
			[]string{"QueueOffset", strconv.FormatInt(int64(m.QueueOffset), 10)},
			[]string{"CommitLogOffset", strconv.FormatInt(int64(m.PhysOffset), 10)},
			[]string{"OffsetMsgId", m.OffsetMsgID},
			[]string{"MsgId", m.MsgID},
			[]string{"Tags", m.Tags},
			[]string{"Keys", strings.Join(m.Keys, " ")},
			[]string{"Properties", strings.Join(props, " ")},
			[]string{"BornHost", m.BornHost},
			[]string{"StoreHost", m.StoreHost},
			[]string{"BornTime", m.BornTime.UTC().Format(time.RFC3339Nano)},
			[]string{"StoreTime", m.StoreTime.UTC().Format(time.RFC3339Nano)},
			[]string{"ReconsumeTimes", strconv.Itoa(int(m.ReconsumeTimes))},
			[]string{"BodySize", strconv.Itoa(m.BodySize)},
			[]string{"Body", m.BodyPreview},
		)
	}
	t.Doc = rows(ms)
	return t
}
