package admin

import (
	"context"
	"fmt"
	"strconv"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// peekGroup is the consumer group the peeking reads below name. They never
// commit an offset (sysFlag carries no commit bit), so the group gains no
// state; it only appears in the broker's pull statistics.
const peekGroup = "rocketraft_console_peek"

// pullSysFlagSubscription is PullSysFlag's "subscription in the request" bit:
// the peek brings its own "*" instead of needing a heartbeat.
const pullSysFlagSubscription = 0x4

// PeekMessages reads up to maxNum messages of one queue from offset on at
// the node addr (PULL_MESSAGE without committing anything). An offset past
// the end gives none, not an error.
func (c *Client) PeekMessages(ctx context.Context, addr, topic string, queueID int32, offset int64, maxNum int) ([]MessageView, error) {
	ext := map[string]string{"consumerGroup": peekGroup, "topic": topic, "queueId": strconv.Itoa(int(queueID)),
		"queueOffset": strconv.FormatInt(offset, 10), "maxMsgNums": strconv.Itoa(maxNum),
		"sysFlag": strconv.Itoa(pullSysFlagSubscription), "subscription": "*", "expressionType": "TAG",
		"commitOffset": "0", "suspendTimeoutMillis": "0"}
	resp, err := c.invoke(ctx, addr, transport.PullMessage, ext, 0)
	if err != nil {
		return nil, err
	}
	switch resp.ResponseCode() {
	case transport.Success:
	case transport.PullNotFound, transport.PullOffsetMoved, transport.PullRetryImmediately:
		return nil, nil
	default:
		return nil, fmt.Errorf("peek topic=%s queue=%d offset=%d broker=%s: %s %s: %w",
			topic, queueID, offset, addr, resp.ResponseCode(), resp.Remark, ErrBrokerResponse)
	}
	ms, err := decodeMessages(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("peek broker=%s: %w", addr, err)
	}
	for i := range ms {
		ms[i].Addr = addr
	}
	return ms, nil
}

// OffsetByTime is SEARCH_OFFSET_BY_TIMESTAMP at addr: the queue offset of the
// first message stored at or after ts (ms).
func (c *Client) OffsetByTime(ctx context.Context, addr, topic string, queueID int32, ts int64) (int64, error) {
	return c.offset(ctx, addr, transport.SearchOffsetByTimestamp,
		map[string]string{"topic": topic, "queueId": strconv.Itoa(int(queueID)), "timestamp": strconv.FormatInt(ts, 10)})
}

// MessageAt asks the node addr for the stored message at CommitLog offset off
// (VIEW_MESSAGE_BY_ID addressed to that node, whatever host the id names):
// how the console checks which replicas hold a message. ErrNotFound when the
// node has nothing there.
func (c *Client) MessageAt(ctx context.Context, addr string, off store.PhysicalOffset) (MessageView, error) {
	resp, err := c.invoke(ctx, addr, transport.ViewMessageByID, map[string]string{"offset": strconv.FormatInt(int64(off), 10)}, 0)
	if err != nil {
		return MessageView{}, err
	}
	if resp.ResponseCode() != transport.Success {
		return MessageView{}, fmt.Errorf("broker=%s offset=%d: %s %s: %w", addr, off, resp.ResponseCode(), resp.Remark, ErrNotFound)
	}
	ms, err := decodeMessages(resp.Body)
	if err != nil {
		return MessageView{}, err
	}
	if len(ms) != 1 || ms[0].PhysOffset != off {
		return MessageView{}, fmt.Errorf("broker=%s offset=%d: no record starts there: %w", addr, off, ErrNotFound)
	}
	ms[0].Addr = addr
	return ms[0], nil
}

// ParseOffsetMsgID splits an offset msgId (store host and CommitLog offset in
// hex) into the host's address and the offset, so callers need not link the
// store. A producer's UNIQ_KEY is 32 hex digits too and parses as well:
// check the host against the nodes you know before dialling it.
func ParseOffsetMsgID(id string) (addr string, off store.PhysicalOffset, err error) {
	host, off, err := store.ParseOffsetMsgID(id)
	if err != nil {
		return "", 0, err
	}
	return host.String(), off, nil
}
