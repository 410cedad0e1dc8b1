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

// handleHeartbeat serves HEART_BEAT (34): record the client's groups on this node
// (every node tracks heartbeats) and, on the leader, create %RETRY%<group>.
func (b *Broker) handleHeartbeat(ctx context.Context, conn *transport.Conn, req *transport.Command) *transport.Command {
	hb, err := parseHeartbeat(req.Body)
	if err != nil {
		return errorResponse(err)
	}
	for _, g := range b.clients.heartbeat(conn, hb, time.Now()) {
		b.notifyConsumerIDsChanged(g)
	}
	if b.isLeader() {
		for _, c := range hb.ConsumerDataSet {
			if c.MessageModel == "BROADCASTING" || validateGroup(c.GroupName) != nil {
				continue
			}
			b.ensureRetryTopic(ctx, c.GroupName)
		}
	}
	return transport.NewResponse(transport.Success, "")
}

// ensureRetryTopic creates %RETRY%<group> (1 queue) and its subscription group.
func (b *Broker) ensureRetryTopic(ctx context.Context, group string) {
	name := retryPrefix + group
	if _, ok := b.replica.Topic(name); ok {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	t := TopicConfig{Name: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: PermRead | PermWrite}
	if err := b.replica.UpsertTopic(cctx, t); err != nil {
		b.log.Warn("create retry topic failed", "topic", name, "error", err)
		return
	}
	g := SubscriptionGroup{GroupName: group, ConsumeEnable: true, ConsumeBroadcastEnable: true, RetryQueueNums: 1, RetryMaxTimes: 16}
	if err := b.replica.UpsertSubscriptionGroup(cctx, g); err != nil {
		b.log.Warn("create subscription group failed", "group", group, "error", err)
	}
	b.registerAllAsync()
}

// handleConsumerList serves GET_CONSUMER_LIST_BY_GROUP (38).
func (b *Broker) handleConsumerList(req *transport.Command) *transport.Command {
	group := req.ExtFields["consumerGroup"]
	ids := b.clients.consumerIDs(group)
	if ids == nil {
		ids = []string{}
	}
	body, _ := json.Marshal(struct {
		ConsumerIDList []string `json:"consumerIdList"`
	}{ids})
	if len(ids) == 0 {
		r := transport.NewResponse(transport.SystemError, "no consumer of group "+group+" is connected")
		r.Body = body
		return r
	}
	return okResponse(nil, body)
}

func (b *Broker) queueArgs(req *transport.Command) (string, int32, *ext) {
	e := &ext{fields: req.ExtFields}
	topic, queueID := e.str("topic", true), e.int32("queueId", true, 0)
	return topic, queueID, e
}

// handleMaxOffset serves GET_MAX_OFFSET (30): the next offset to be written.
func (b *Broker) handleMaxOffset(req *transport.Command) *transport.Command {
	topic, queueID, e := b.queueArgs(req)
	if e.err != nil {
		return errorResponse(e.err)
	}
	return okResponse(map[string]string{"offset": strconv.FormatInt(int64(b.store.MaxQueueOffset(topic, queueID)), 10)}, nil)
}

// handleMinOffset serves GET_MIN_OFFSET (31).
func (b *Broker) handleMinOffset(req *transport.Command) *transport.Command {
	topic, queueID, e := b.queueArgs(req)
	if e.err != nil {
		return errorResponse(e.err)
	}
	return okResponse(map[string]string{"offset": strconv.FormatInt(int64(b.store.MinQueueOffset(topic, queueID)), 10)}, nil)
}

// handleSearchOffset serves SEARCH_OFFSET_BY_TIMESTAMP (29).
func (b *Broker) handleSearchOffset(req *transport.Command) *transport.Command {
	topic, queueID, e := b.queueArgs(req)
	ts := e.int64("timestamp", true, 0)
	if e.err != nil {
		return errorResponse(e.err)
	}
	off := b.store.SearchOffsetByTimestamp(topic, queueID, ts)
	return okResponse(map[string]string{"offset": strconv.FormatInt(int64(off), 10)}, nil)
}

// handleQueryMessage serves QUERY_MESSAGE (12): messages whose KEYS or UNIQ_KEY
// equal key, newest index files first.
func (b *Broker) handleQueryMessage(req *transport.Command) *transport.Command {
	e := &ext{fields: req.ExtFields}
	topic, key := e.str("topic", true), e.str("key", true)
	maxNum := int(e.int32("maxNum", false, 32))
	begin, end := e.int64("beginTimestamp", false, 0), e.int64("endTimestamp", false, 1<<62)
	if e.err != nil {
		return errorResponse(e.err)
	}
	offs, err := b.store.QueryByKey(topic, key, maxNum, begin, end)
	if err != nil {
		return errorResponse(err)
	}
	var parts [][]byte
	var releases []func()
	for _, off := range offs {
		msg, release, err := b.store.ReadMessageAt(off)
		if err != nil {
			continue // removed by retention meanwhile
		}
		parts = append(parts, msg)
		releases = append(releases, release)
	}
	if len(parts) == 0 {
		return transport.NewResponse(transport.QueryNotFound, fmt.Sprintf("no message with key %s in %s", key, topic))
	}
	r := okResponse(map[string]string{
		"indexLastUpdateTimestamp": "0",
		"indexLastUpdatePhyoffset": strconv.FormatInt(int64(b.store.MaxPhysicalOffset()), 10),
	}, nil)
	r.BodyParts = parts
	r.OnWritten = func() {
		for _, f := range releases {
			f()
		}
	}
	return r
}

// handleViewMessage serves VIEW_MESSAGE_BY_ID (33): one message by physical offset.
func (b *Broker) handleViewMessage(req *transport.Command) *transport.Command {
	e := &ext{fields: req.ExtFields}
	off := e.int64("offset", true, 0)
	if e.err != nil {
		return errorResponse(e.err)
	}
	msg, release, err := b.store.ReadMessageAt(store.PhysicalOffset(off))
	if err != nil {
		return transport.NewResponse(transport.SystemError, fmt.Sprintf("no message at offset %d: %v", off, err))
	}
	r := okResponse(nil, nil)
	r.BodyParts = [][]byte{msg}
	r.OnWritten = release
	return r
}
