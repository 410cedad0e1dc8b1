package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// relayTimeout bounds a request the broker relays to a client (307); Java uses 5 s.
const relayTimeout = 5 * time.Second

// consumerConn returns the connection a client of group heartbeats on.
func (r *clientRegistry) consumerConn(group, clientID string) *transport.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.consumers[group]
	if g == nil {
		return nil
	}
	for _, c := range g.clients {
		if c.clientID == clientID {
			return c.conn
		}
	}
	return nil
}

// handleConsumerRunningInfo serves GET_CONSUMER_RUNNING_INFO (307) from admin
// tools: ext consumerGroup, clientId, jstackEnable. The request is relayed to the
// client's own connection and its answer (a ConsumerRunningInfo body, which the Go
// client writes with object keys, so not strict JSON) is returned unchanged. Every
// node can relay: clients heartbeat every node.
func (b *Broker) handleConsumerRunningInfo(ctx context.Context, req *transport.Command) *transport.Command {
	e := &ext{fields: req.ExtFields}
	group, clientID := e.str("consumerGroup", true), e.str("clientId", true)
	if e.err != nil {
		return errorResponse(e.err)
	}
	conn := b.clients.consumerConn(group, clientID)
	if conn == nil {
		return transport.NewResponse(transport.SystemError,
			fmt.Sprintf("consumer %s of group %s is not connected to %s", clientID, group, b.cfg.SelfID))
	}
	rctx, cancel := context.WithTimeout(ctx, relayTimeout)
	defer cancel()
	fwd := transport.NewRequest(transport.GetConsumerRunningInfo, map[string]string{
		"consumerGroup": group, "clientId": clientID, "jstackEnable": req.ExtFields["jstackEnable"],
	}, nil)
	resp, err := conn.Invoke(rctx, fwd)
	if err != nil {
		return transport.NewResponse(transport.SystemError,
			fmt.Sprintf("relay GET_CONSUMER_RUNNING_INFO to %s (%s): %v", clientID, conn.RemoteAddr(), err))
	}
	out := transport.NewResponse(resp.ResponseCode(), resp.Remark)
	out.Body = resp.Body
	return out
}

// ResetOffsetEntry is one queue of a reset-offset answer.
type ResetOffsetEntry struct {
	Topic      string `json:"topic"`
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
	Offset     int64  `json:"offset"`
}

// resetOffsets computes a group's new offset per queue: the first message stored
// at or after timestamp (ms), or the max offset for timestamp -1. Without force a
// queue is only moved backwards (Java's isForce=false). current returns the
// group's committed offset.
func resetOffsets(brokerName, topic string, queues int32, timestamp int64, force bool,
	search func(q int32, ts int64) store.QueueOffset, maxOffset func(q int32) store.QueueOffset,
	current func(q int32) (store.QueueOffset, bool)) []ResetOffsetEntry {
	out := make([]ResetOffsetEntry, 0, queues)
	for q := range queues {
		var off store.QueueOffset
		if timestamp < 0 {
			off = maxOffset(q)
		} else {
			off = search(q, timestamp)
		}
		if cur, ok := current(q); ok && !force && cur < off {
			off = cur
		}
		out = append(out, ResetOffsetEntry{Topic: topic, BrokerName: brokerName, QueueID: q, Offset: int64(off)})
	}
	return out
}

// gsonOffsetTable encodes ResetOffsetBody in gson's map-as-array form
// {"offsetTable":[[{mq},offset],...]}, which the Go client parses by splitting
// on "],[" and "},": compact JSON with the queue object's fields in this order.
func gsonOffsetTable(entries []ResetOffsetEntry) []byte {
	buf := []byte(`{"offsetTable":[`)
	for i, e := range entries {
		if i > 0 {
			buf = append(buf, ',')
		}
		mq, err := json.Marshal(MessageQueue{Topic: e.Topic, BrokerName: e.BrokerName, QueueID: e.QueueID})
		if err != nil {
			panic("broker: marshal message queue: " + err.Error())
		}
		buf = append(buf, '[')
		buf = append(buf, mq...)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, e.Offset, 10)
		buf = append(buf, ']')
	}
	return append(buf, "]}"...)
}

// handleResetOffset serves INVOKE_BROKER_TO_RESET_OFFSET (222) from admin tools:
// ext topic, group, timestamp (ms; -1 = the end), isForce. The leader computes the
// offsets, replicates them as the group's committed offsets, then tells every
// connected client of the group with RESET_CONSUMER_CLIENT_OFFSET (220), which
// makes a Go push consumer drop its queues and resume from the new offsets. The
// answer body is {"offsetTable":[ResetOffsetEntry...]}.
func (b *Broker) handleResetOffset(ctx context.Context, req *transport.Command) *transport.Command {
	if !b.isLeader() {
		return b.forwardToLeader(ctx, req)
	}
	e := &ext{fields: req.ExtFields}
	topic, group := e.str("topic", true), e.str("group", true)
	ts := e.int64("timestamp", true, 0)
	force := e.bool("isForce", true)
	if e.err != nil {
		return errorResponse(e.err)
	}
	tc, ok := b.replica.Topic(topic)
	if !ok {
		return errorResponse(fmt.Errorf("%w: topic %s", ErrTopicNotExist, topic))
	}
	entries := resetOffsets(b.cfg.BrokerName, topic, tc.ReadQueueNums, ts, force,
		func(q int32, ts int64) store.QueueOffset { return b.store.SearchOffsetByTimestamp(topic, q, ts) },
		func(q int32) store.QueueOffset { return b.store.MaxQueueOffset(topic, q) },
		func(q int32) (store.QueueOffset, bool) { return b.consumerOffset(group, topic, q) })
	for _, en := range entries {
		b.offsets.put(offsetKey{group, topic, en.QueueID}, store.QueueOffset(en.Offset))
	}
	cctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	if err := b.flushOffsets(cctx); err != nil {
		return errorResponse(fmt.Errorf("reset offsets group=%s topic=%s: replicate: %w", group, topic, err))
	}
	notify := transport.NewRequest(transport.ResetConsumerClientOffset, map[string]string{
		"topic": topic, "group": group, "timestamp": strconv.FormatInt(ts, 10), "isForce": strconv.FormatBool(force),
	}, gsonOffsetTable(entries))
	conns := b.clients.consumerConns(group)
	for _, c := range conns {
		if err := c.InvokeOneway(notify); err != nil {
			b.log.Warn("reset offset notification failed", "group", group, "remote", c.RemoteAddr(), "error", err)
		}
	}
	b.log.Info("consumer offsets reset", "group", group, "topic", topic, "timestamp", ts, "force", force,
		"queues", len(entries), "clientsNotified", len(conns))
	body, err := json.Marshal(struct {
		OffsetTable []ResetOffsetEntry `json:"offsetTable"`
	}{entries})
	if err != nil {
		panic("broker: marshal reset answer: " + err.Error())
	}
	return okResponse(nil, body)
}
