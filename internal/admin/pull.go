package admin

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// ToolsConsumerGroup is the group mqadmin's printMsg, consumeMessage and
// queryMsgByOffset pull as when none is given (Apache's MixAll.TOOLS_CONSUMER_GROUP).
const ToolsConsumerGroup = "TOOLS_CONSUMER"

// pullBatch is how many messages one PULL asks for: the broker caps an answer
// at 32 messages anyway (Apache's maxTransferCountOnMessageInMemory).
const pullBatch = 32

// pullSysFlag marks the subscription as sent in the request ("*"), so a pull
// needs no heartbeat first; the commit bit stays clear: reading moves nothing.
const pullSysFlag = 0x4

// BodyMessage is a MessageView with its whole body as text (decompressed when
// the producer compressed it), as print and consume show it.
type BodyMessage struct {
	MessageView
	Body string `json:"body"`
}

// pulled is one PULL answer: the messages and where to go on.
type pulled struct {
	status transport.ResponseCode
	msgs   []store.Message
	next   int64
	min    int64
	max    int64
}

// pull reads up to n messages of one queue from offset at addr, as group,
// without a heartbeat (the subscription "*" goes in the request) and without
// committing anything.
func (c *Client) pull(ctx context.Context, addr, group, topic string, queueID int32, offset int64, n int) (pulled, error) {
	ext := map[string]string{"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(int(queueID)),
		"queueOffset": strconv.FormatInt(offset, 10), "maxMsgNums": strconv.Itoa(n), "sysFlag": strconv.Itoa(pullSysFlag),
		"commitOffset": "0", "suspendTimeoutMillis": "0", "subscription": "*", "subVersion": "0", "expressionType": "TAG"}
	resp, err := c.invoke(ctx, addr, transport.PullMessage, ext, 0)
	if err != nil {
		return pulled{}, err
	}
	p := pulled{status: resp.ResponseCode()}
	switch p.status {
	case transport.Success, transport.PullNotFound, transport.PullRetryImmediately, transport.PullOffsetMoved:
	default:
		return p, fmt.Errorf("pull topic=%s queue=%d offset=%d broker=%s: %s %s: %w", topic, queueID, offset, addr, p.status, resp.Remark, ErrBrokerResponse)
	}
	for name, dst := range map[string]*int64{"nextBeginOffset": &p.next, "minOffset": &p.min, "maxOffset": &p.max} {
		v, err := strconv.ParseInt(resp.Field(name), 10, 64)
		if err != nil {
			return p, fmt.Errorf("pull broker=%s %s=%q: %w", addr, name, resp.Field(name), ErrBadAnswer)
		}
		*dst = v
	}
	if p.status != transport.Success {
		return p, nil
	}
	if p.msgs, err = decodeRecords(resp.Body); err != nil {
		return p, fmt.Errorf("pull broker=%s: %w", addr, err)
	}
	return p, nil
}

// decodeRecords splits a body of stored records back to back (PULL,
// QUERY_MESSAGE) and decodes each with CRC checks.
func decodeRecords(body []byte) ([]store.Message, error) {
	var out []store.Message
	for len(body) > 0 {
		size, _, err := store.RecordSize(body)
		if err != nil || size <= 0 || int(size) > len(body) {
			return out, fmt.Errorf("record of size %d with %d bytes left: %v: %w", size, len(body), err, ErrBadAnswer)
		}
		m, err := store.DecodeMessage(body[:size], true)
		if err != nil {
			return out, fmt.Errorf("decode record: %v: %w", err, ErrBadAnswer)
		}
		out = append(out, m)
		body = body[size:]
	}
	return out, nil
}

// withBody renders m with its body. A compressed body (sysFlag bit 0; the Java
// client's zlib default, type bits 0 or 0x300) is inflated; LZ4 and ZSTD
// bodies show as stored.
func withBody(m store.Message, group, addr string) BodyMessage {
	v := viewOf(m)
	v.Group, v.Addr = group, addr
	body := m.Body
	if t := m.SysFlag & 0x700; m.SysFlag&store.SysFlagCompressed != 0 && (t == 0 || t == 0x300) {
		if r, err := zlib.NewReader(bytes.NewReader(body)); err == nil {
			if b, err := io.ReadAll(r); err == nil {
				body = b
			}
		}
	}
	return BodyMessage{MessageView: v, Body: string(body)}
}

// groupAddr is the address of broker group name in topic's route: its leader,
// or any node; with --broker that node.
func (c *Client) groupAddr(ctx context.Context, topic, name string) (string, nameserver.TopicRouteData, error) {
	r, err := c.TopicRoute(ctx, topic)
	if c.cfg.BrokerAddr != "" {
		return c.cfg.BrokerAddr, r, nil
	}
	if err != nil {
		return "", r, err
	}
	addr, ok := routeTargets(r)[name]
	if !ok || addr == "" {
		return "", r, fmt.Errorf("topic %s has no broker group %q in its route: %w", topic, name, ErrNoTarget)
	}
	return addr, r, nil
}

// MessageAt reads the message at offset of one queue (mqadmin queryMsgByOffset):
// a pull of one message from that offset on the group's leader.
func (c *Client) MessageAt(ctx context.Context, topic, brokerName string, queueID int32, offset int64) (BodyMessage, error) {
	addr, _, err := c.groupAddr(ctx, topic, brokerName)
	if err != nil {
		return BodyMessage{}, err
	}
	p, err := c.pull(ctx, addr, ToolsConsumerGroup, topic, queueID, offset, 1)
	if err != nil {
		return BodyMessage{}, err
	}
	if len(p.msgs) == 0 || int64(p.msgs[0].QueueOffset) != offset {
		return BodyMessage{}, fmt.Errorf("topic=%s broker=%s queue=%d offset=%d: %s (queue holds %d..%d): %w",
			topic, brokerName, queueID, offset, p.status, p.min, p.max, ErrNotFound)
	}
	return withBody(p.msgs[0], brokerName, addr), nil
}

// OffsetByTime is SEARCH_OFFSET_BY_TIMESTAMP (29) at addr: the first offset
// of the queue stored at or after ms.
func (c *Client) OffsetByTime(ctx context.Context, addr, topic string, queueID int32, ms int64) (int64, error) {
	return c.offset(ctx, addr, transport.SearchOffsetByTimestamp,
		map[string]string{"topic": topic, "queueId": strconv.Itoa(int(queueID)), "timestamp": strconv.FormatInt(ms, 10)})
}
