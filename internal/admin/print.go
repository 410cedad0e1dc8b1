package admin

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

// PrintSpec says which messages of a topic print reads (mqadmin printMsg,
// printMsgByQueue): every read queue of every group, or one group and queue;
// an offset range and a time range narrow each queue, both may be given.
type PrintSpec struct {
	Topic      string
	BrokerName string // "" every group of the route
	QueueID    int32  // -1 every read queue
	// From and To are queue offsets, To exclusive; -1 leaves that end open.
	From, To int64
	// Begin and End are store times in Unix ms: a queue is read from its first
	// message stored at or after Begin up to (not including) its first one
	// stored at or after End; 0 leaves that end open.
	Begin, End int64
	// Max bounds the messages printed in all; 0 is no bound.
	Max int
}

// Validate names the first flag that breaks a rule.
func (s PrintSpec) Validate() error {
	switch {
	case s.Topic == "":
		return fmt.Errorf("--topic is required")
	case s.QueueID >= 0 && s.BrokerName == "":
		return fmt.Errorf("--queue=%d needs --broker-name: queue ids are per group", s.QueueID)
	case s.From < -1 || s.To < -1:
		return fmt.Errorf("--from=%d --to=%d: offsets are 0 or more", s.From, s.To)
	case s.From >= 0 && s.To >= 0 && s.To < s.From:
		return fmt.Errorf("--to=%d is below --from=%d", s.To, s.From)
	case s.Begin < 0 || s.End < 0:
		return fmt.Errorf("--begin=%d --end=%d: times are Unix ms", s.Begin, s.End)
	case s.Begin > 0 && s.End > 0 && s.End < s.Begin:
		return fmt.Errorf("--end=%d is before --begin=%d", s.End, s.Begin)
	case s.Max < 0:
		return fmt.Errorf("--max=%d: must be 0 (no bound) or more", s.Max)
	}
	return nil
}

// queueRange is one queue print reads: [lo, hi).
type queueRange struct {
	topic, group, addr string
	queueID            int32
	lo, hi             int64
}

// ranges resolves s to the queues and offsets it covers.
func (c *Client) ranges(ctx context.Context, s PrintSpec) ([]queueRange, error) {
	r, err := c.TopicRoute(ctx, s.Topic)
	// With --broker a route is needed only to list queues: -B and --queue name one.
	if err != nil && (c.cfg.BrokerAddr == "" || s.BrokerName == "" || s.QueueID < 0) {
		return nil, err
	}
	targets := routeTargets(r)
	queues := map[string]int32{}
	for _, qd := range r.QueueDatas {
		queues[qd.BrokerName] = qd.ReadQueueNums
	}
	if c.cfg.BrokerAddr != "" && s.BrokerName != "" {
		targets = map[string]string{s.BrokerName: c.cfg.BrokerAddr}
	}
	if s.BrokerName != "" {
		if _, ok := targets[s.BrokerName]; !ok {
			return nil, fmt.Errorf("topic %s has no broker group %q in its route: %w", s.Topic, s.BrokerName, ErrNoTarget)
		}
	}
	var out []queueRange
	for _, g := range slices.Sorted(maps.Keys(targets)) {
		if s.BrokerName != "" && g != s.BrokerName {
			continue
		}
		addr := targets[g]
		ids := []int32{s.QueueID}
		if s.QueueID < 0 {
			ids = nil
			for q := range queues[g] {
				ids = append(ids, q)
			}
		} else if n, ok := queues[g]; ok && s.QueueID >= n {
			return nil, fmt.Errorf("--queue=%d: group %s has read queues 0..%d of %s: %w", s.QueueID, g, n-1, s.Topic, ErrNotFound)
		}
		for _, q := range ids {
			ext := map[string]string{"topic": s.Topic, "queueId": strconv.Itoa(int(q))}
			lo, err := c.offset(ctx, addr, transport.GetMinOffset, ext)
			if err != nil {
				return nil, err
			}
			hi, err := c.offset(ctx, addr, transport.GetMaxOffset, ext)
			if err != nil {
				return nil, err
			}
			if s.Begin > 0 {
				at, err := c.searchOffset(ctx, addr, s.Topic, q, s.Begin)
				if err != nil {
					return nil, err
				}
				lo = max(lo, at)
			}
			if s.End > 0 {
				at, err := c.searchOffset(ctx, addr, s.Topic, q, s.End)
				if err != nil {
					return nil, err
				}
				// 29 answers the max offset when nothing is that late; an
				// end in the future keeps the whole queue.
				hi = min(hi, at)
			}
			if s.From >= 0 {
				lo = max(lo, s.From)
			}
			if s.To >= 0 {
				hi = min(hi, s.To)
			}
			out = append(out, queueRange{topic: s.Topic, group: g, addr: addr, queueID: q, lo: lo, hi: hi})
		}
	}
	return out, nil
}

// PrintMessages reads the messages s covers, queue by queue in order, with
// their bodies (as ToolsConsumerGroup, committing nothing).
func (c *Client) PrintMessages(ctx context.Context, s PrintSpec) ([]BodyMessage, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("message print: %w", err)
	}
	qrs, err := c.ranges(ctx, s)
	if err != nil {
		return nil, err
	}
	out := []BodyMessage{}
	for _, qr := range qrs {
		ms, err := c.readRange(ctx, qr, ToolsConsumerGroup, s.Max-len(out), s.Max > 0)
		if err != nil {
			return out, err
		}
		out = append(out, ms...)
		if s.Max > 0 && len(out) >= s.Max {
			break
		}
	}
	return out, nil
}

// readRange pulls [qr.lo, qr.hi) of one queue, at most limit messages when
// bounded.
func (c *Client) readRange(ctx context.Context, qr queueRange, group string, limit int, bounded bool) ([]BodyMessage, error) {
	var out []BodyMessage
	for off := qr.lo; off < qr.hi && (!bounded || len(out) < limit); {
		n := int(min(int64(pullBatch), qr.hi-off))
		if bounded {
			n = min(n, limit-len(out))
		}
		p, err := c.pull(ctx, qr.addr, group, qr.topic, qr.queueID, off, n)
		if err != nil {
			return out, err
		}
		for _, m := range p.msgs {
			if int64(m.QueueOffset) >= qr.hi || (bounded && len(out) >= limit) {
				break
			}
			out = append(out, withBody(m, qr.group, qr.addr))
		}
		if p.next <= off { // nothing further (a queue cut by retention meanwhile)
			break
		}
		off = p.next
	}
	return out, nil
}

// MessagesBodyText renders printed or consumed messages one per line: where
// each lives, its ids, tags, keys and store time, and the body.
func MessagesBodyText(ms []BodyMessage) Table {
	t := Table{Header: []string{"GROUP", "QUEUE", "OFFSET", "MSGID", "TAGS", "KEYS", "STORE-TIME", "BODY"}}
	for _, m := range ms {
		t.Rows = append(t.Rows, []string{m.Group, strconv.Itoa(int(m.QueueID)), strconv.FormatInt(int64(m.QueueOffset), 10),
			m.MsgID, m.Tags, strings.Join(m.Keys, " "), m.StoreTime.UTC().Format(time.RFC3339Nano), strconv.Quote(m.Body)})
	}
	t.Footer = []string{fmt.Sprintf("%d messages", len(ms))}
	t.Doc = rows(ms)
	return t
}

// MessageBodyText renders one message as MessagesText does, plus its whole body.
func MessageBodyText(m BodyMessage) Table {
	t := MessagesText([]MessageView{m.MessageView})
	t.Rows = append(t.Rows, []string{"BodyText", strconv.Quote(m.Body)})
	t.Doc = m
	return t
}
