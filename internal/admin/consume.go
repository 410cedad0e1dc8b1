package admin

import (
	"context"
	"fmt"
	"strconv"

	"github.com/rocketraft/rocketraft/transport"
)

// ConsumeSpec says what message consume reads (mqadmin consumeMessage, or a
// consumer group's next messages).
type ConsumeSpec struct {
	Topic string
	// Group, when set, reads each queue from the group's committed offset (its
	// min offset when it has none); otherwise from each queue's min offset, as
	// ToolsConsumerGroup.
	Group string
	// Count bounds the messages read in all (queue by queue).
	Count int
	// Commit, with Group, moves the group's offsets past what was read.
	Commit bool
}

// Validate names the first flag that breaks a rule.
func (s ConsumeSpec) Validate() error {
	switch {
	case s.Topic == "":
		return fmt.Errorf("--topic is required")
	case s.Count <= 0:
		return fmt.Errorf("--count=%d: must be 1 or more", s.Count)
	case s.Commit && s.Group == "":
		return fmt.Errorf("--commit needs --group: only a group has offsets to move")
	}
	return nil
}

// committedOffset is QUERY_CONSUMER_OFFSET (14) of group on one queue; false
// when the group has none there.
func (c *Client) committedOffset(ctx context.Context, addr, group, topic string, queueID int32) (int64, bool, error) {
	resp, err := c.invoke(ctx, addr, transport.QueryConsumerOffset,
		map[string]string{"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(int(queueID))}, 0)
	if err != nil {
		return 0, false, err
	}
	switch resp.ResponseCode() {
	case transport.Success:
	case transport.QueryNotFound:
		return 0, false, nil
	default:
		return 0, false, fmt.Errorf("query offset group=%s broker=%s: %s %s: %w", group, addr, resp.ResponseCode(), resp.Remark, ErrBrokerResponse)
	}
	off, err := strconv.ParseInt(resp.Field("offset"), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("query offset broker=%s offset=%q: %w", addr, resp.Field("offset"), ErrBadAnswer)
	}
	return off, true, nil
}

// Consume reads up to s.Count messages of a topic, queue by queue in route
// order, with their bodies.
func (c *Client) Consume(ctx context.Context, s ConsumeSpec) ([]BodyMessage, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("message consume: %w", err)
	}
	qrs, err := c.ranges(ctx, PrintSpec{Topic: s.Topic, QueueID: -1, From: -1, To: -1})
	if err != nil {
		return nil, err
	}
	group := ToolsConsumerGroup
	if s.Group != "" {
		group = s.Group
	}
	out := []BodyMessage{}
	for _, qr := range qrs {
		if len(out) >= s.Count {
			break
		}
		if s.Group != "" {
			off, ok, err := c.committedOffset(ctx, qr.addr, s.Group, s.Topic, qr.queueID)
			if err != nil {
				return out, err
			}
			if ok {
				qr.lo = max(qr.lo, off)
			}
		}
		ms, err := c.readRange(ctx, qr, group, s.Count-len(out), true)
		if err != nil {
			return out, err
		}
		out = append(out, ms...)
		if s.Commit && len(ms) > 0 {
			next := int64(ms[len(ms)-1].QueueOffset) + 1
			ext := map[string]string{"consumerGroup": s.Group, "topic": s.Topic, "queueId": strconv.Itoa(int(qr.queueID)),
				"commitOffset": strconv.FormatInt(next, 10)}
			if _, err := c.call(ctx, qr.addr, transport.UpdateConsumerOffset, ext); err != nil {
				return out, fmt.Errorf("commit group=%s queue=%d offset=%d: %w", s.Group, qr.queueID, next, err)
			}
		}
	}
	return out, nil
}
