package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// offsetFlushTimeout bounds replicating the reset offsets: one raft entry, given
// the same 10 s a replicated send gets (a quorum fsync plus a leader hand-off).
const offsetFlushTimeout = 10 * time.Second

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
		mq, err := json.Marshal(clients.MessageQueue{Topic: e.Topic, BrokerName: e.BrokerName, QueueID: e.QueueID})
		if err != nil {
			panic("adminapi: marshal message queue: " + err.Error())
		}
		buf = append(buf, '[')
		buf = append(buf, mq...)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, e.Offset, 10)
		buf = append(buf, ']')
	}
	return append(buf, "]}"...)
}

// mapOffsetTable encodes ResetOffsetBody as Apache writes it (fastjson):
// {"offsetTable":{<MessageQueue>:offset,...}}, each key the bare queue object
// (marshalBeanKeyed). Java's mqadmin and clients decode only this map; the gson
// array form fails there with "syntax error, expect {, actual [", and 5.5's
// fastjson2 also refuses a string key holding the queue.
func mapOffsetTable(entries []ResetOffsetEntry) []byte {
	table := make(map[string]int64, len(entries))
	for _, e := range entries {
		table[messageQueueKey(e.Topic, e.BrokerName, e.QueueID)] = e.Offset
	}
	body, err := json.Marshal(struct {
		OffsetTable map[string]int64 `json:"offsetTable"`
	}{table})
	if err != nil {
		panic("adminapi: marshal reset offsets: " + err.Error()) // strings and ints: cannot fail
	}
	return transport.BareObjectKeys(body)
}

// resetNotification is the RESET_CONSUMER_CLIENT_OFFSET (220) body for a
// client speaking lang: Java's fastjson form, or the gson form the Go client
// parses (it splits the array form by hand and reads nothing else).
func resetNotification(lang string, entries []ResetOffsetEntry) []byte {
	if lang == "JAVA" {
		return mapOffsetTable(entries)
	}
	return gsonOffsetTable(entries)
}

// resetOffset serves INVOKE_BROKER_TO_RESET_OFFSET (222) from admin tools on the
// leader: ext topic, group, timestamp (ms; -1 = the end), isForce. It computes
// the offsets, replicates them as the group's committed offsets (held against
// the clients' stale commits for offsets.ResetHold), then tells every
// connected client of the group with RESET_CONSUMER_CLIENT_OFFSET (220), which
// makes a push consumer (Go or Java, each sent the body form it parses) drop
// its queues and resume from the new offsets. The answer is Apache's
// ResetOffsetBody (mapOffsetTable). Unlike Apache, which answers
// CONSUMER_NOT_ONLINE when no member is connected (mqadmin then falls back to
// committing each queue itself), the offsets move either way.
func (a *API) resetOffset(ctx context.Context, req *route.Request) (*transport.Command, error) {
	f := route.FieldsOf(req.Command)
	topic, group := f.Str("topic", true), f.Str("group", true)
	ts := f.Int64("timestamp", true, 0)
	force := f.Bool("isForce", true)
	if f.Err != nil {
		return nil, f.Err
	}
	tc, ok := a.d.Replica.Topic(topic)
	if !ok {
		return nil, fmt.Errorf("%w: topic %s", fsm.ErrTopicNotFound, topic)
	}
	st := a.d.Store
	entries := resetOffsets(a.d.BrokerName, topic, tc.ReadQueueNums, ts, force,
		func(q int32, ts int64) store.QueueOffset { return st.SearchOffsetByTimestamp(topic, q, ts) },
		func(q int32) store.QueueOffset { return st.MaxQueueOffset(topic, q) },
		func(q int32) (store.QueueOffset, bool) { return a.consumerOffset(group, topic, q) })
	offs := make([]fsm.OffsetEntry, 0, len(entries))
	for _, en := range entries {
		offs = append(offs, fsm.OffsetEntry{Group: group, Topic: topic, QueueID: en.QueueID, Offset: store.QueueOffset(en.Offset)})
	}
	// Replicated as one reset entry, exactly these offsets: a commit put into
	// the buffer meanwhile can neither replace one of them nor follow it
	// (offsets.Buffer.Reset, which also holds the group's commits of these
	// queues until its clients resume from them; chaos scenario O1).
	cctx, cancel := context.WithTimeout(ctx, offsetFlushTimeout)
	defer cancel()
	if err := a.d.Offsets.Reset(cctx, offs); err != nil {
		return nil, fmt.Errorf("reset offsets group=%s topic=%s: replicate: %w", group, topic, err)
	}
	ext := map[string]string{
		"topic": topic, "group": group, "timestamp": strconv.FormatInt(ts, 10), "isForce": strconv.FormatBool(force),
	}
	conns := a.d.Clients.ConsumerConns(group)
	for _, c := range conns {
		lang, _, _ := c.Peer()
		notify := transport.NewRequest(transport.ResetConsumerClientOffset, ext, resetNotification(lang, entries))
		if err := c.InvokeOneway(notify); err != nil {
			a.log.Warn("reset offset notification failed", "group", group, "remote", c.RemoteAddr(), "error", err)
		}
	}
	a.log.Info("consumer offsets reset", "group", group, "topic", topic, "timestamp", ts, "force", force,
		"queues", len(entries), "clientsNotified", len(conns))
	return route.OK(nil, mapOffsetTable(entries)), nil
}
