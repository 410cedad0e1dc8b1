package clientapi

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// propertyReplyToClient is the property a request/reply requester sets
// (rocketmq-protocol.md §2.1); the properties the broker adds are below.
const propertyReplyToClient = "REPLY_TO_CLIENT"

// Properties Apache's broker stamps on what it stores and answers each send
// with (MessageConst PROPERTY_CLUSTER, PROPERTY_MSG_REGION, PROPERTY_TRACE_SWITCH).
const (
	propertyCluster   = "CLUSTER"
	propertyMsgRegion = "MSG_REGION"
	propertyTraceOn   = "TRACE_ON"
)

// DefaultRegionID is Apache's regionId default (MixAll.DEFAULT_TRACE_REGION_ID).
const DefaultRegionID = "DefaultRegion"

// stamp adds the broker's properties to one message about to be stored:
// CLUSTER (a responder builds its reply topic from it), MSG_REGION and
// TRACE_ON (trace clients record the region, and skip a message whose TRACE_ON
// is false). Apache stamps them in SendMessageProcessor and
// AbstractSendMessageProcessor.buildMsgContext; 4.9 and 5.x up to 5.3.2 also
// append a batch's stamped properties to each of its messages, so batches get
// them too.
//
// A property the producer set is kept. Apache 5.x overwrites it (Map.put), and
// 4.9 stamps MSG_REGION and TRACE_ON only when a send hook is registered; here
// a message that carries its own values (a message moved from another cluster,
// a producer that opts out of tracing) keeps them.
func (a *API) stamp(props string) string {
	// One pass notes which of the three the producer set; one allocation
	// appends the rest. This runs for every stored message.
	var hasCluster, hasRegion, hasTrace bool
	for rest := props; rest != ""; {
		item := rest
		if i := strings.IndexByte(rest, '\x02'); i >= 0 {
			item, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		switch name, _, ok := strings.Cut(item, "\x01"); {
		case !ok:
		case name == propertyCluster:
			hasCluster = true
		case name == propertyMsgRegion:
			hasRegion = true
		case name == propertyTraceOn:
			hasTrace = true
		}
	}
	cluster := a.d.ClusterName
	if hasCluster {
		cluster = ""
	}
	if cluster == "" && hasRegion && hasTrace {
		return props // nothing to add: the producer's bytes are stored as sent
	}
	trace := "true"
	if a.d.TraceOff {
		trace = "false"
	}
	var b strings.Builder
	b.Grow(len(props) + 1 + len(propertyCluster) + len(cluster) + len(propertyMsgRegion) + len(a.d.RegionID) +
		len(DefaultRegionID) + len(propertyTraceOn) + len(trace) + 9)
	b.WriteString(props)
	if props != "" && props[len(props)-1] != '\x02' {
		b.WriteByte('\x02') // Java writes no separator after its last property
	}
	if cluster != "" {
		writeProperty(&b, propertyCluster, cluster)
	}
	if !hasRegion {
		writeProperty(&b, propertyMsgRegion, a.regionID())
	}
	if !hasTrace {
		writeProperty(&b, propertyTraceOn, trace)
	}
	return b.String()
}

// regionID is MSG_REGION's value: the configured regionId, else Apache's default.
func (a *API) regionID() string {
	if a.d.RegionID == "" {
		return DefaultRegionID
	}
	return a.d.RegionID
}

// writeProperty writes one name=value pair in RocketMQ's encoding.
func writeProperty(b *strings.Builder, name, value string) {
	b.WriteString(name)
	b.WriteByte('\x01')
	b.WriteString(value)
	b.WriteByte('\x02')
}

// handleSend serves SEND_MESSAGE (10), SEND_MESSAGE_V2 (310) and
// SEND_BATCH_MESSAGE (320) on the leader: validate, encode each message once,
// replicate through raft (group commit), answer after a quorum has fsynced.
func (a *API) handleSend(ctx context.Context, req *route.Request) (*transport.Command, error) {
	resp, _, err := a.send(ctx, req)
	return resp, err
}

// send stores the message(s) of a send request and returns the response and
// the queue they went to.
func (a *API) send(ctx context.Context, req *route.Request) (*transport.Command, int32, error) {
	h, err := parseSendHeader(req.Command)
	if err != nil {
		return nil, 0, err
	}
	if err := a.d.DiskFull(); err != nil {
		return nil, 0, err
	}
	if err := route.ValidateSendTopic(h.Topic); err != nil {
		return nil, 0, err
	}
	batch := req.RequestCode() == transport.SendBatchMessage || h.Batch
	prepared := h.SysFlag&store.SysFlagTxPrepared != 0
	if prepared && batch {
		return nil, 0, fmt.Errorf("%w: batch messages cannot be transactional", route.ErrNoPermission)
	}
	topic, err := a.topicForSend(ctx, h)
	if err != nil {
		return nil, 0, err
	}
	queueID := h.QueueID
	if queueID < 0 {
		queueID = int32(a.now().UnixNano() % int64(topic.WriteQueueNums))
	}
	if queueID >= max(topic.WriteQueueNums, topic.ReadQueueNums) {
		return nil, 0, fmt.Errorf("%w: queueId=%d, topic %s has %d write queues", fsm.ErrQueueIDInvalid, queueID, h.Topic, topic.WriteQueueNums)
	}
	born := bornHost(req.Conn)
	var recs [][]byte
	var sentProps []string // per record of a batch, the properties the producer sent (metrics)
	var uniqKey string
	if batch {
		elems, err := decodeBatch(req.Body)
		if err != nil {
			return nil, 0, err
		}
		for i, e := range elems {
			// RocketMQ does not delay batch messages (MessageBatch refuses DELAY);
			// storing them at once would silently ignore what the producer asked for.
			if v, ok := store.Property(e.Properties, store.PropertyDelayLevel); ok && v != "" && v != "0" {
				return nil, 0, fmt.Errorf("%w: batch element %d has DELAY=%s; batch messages cannot be delayed", store.ErrMessageIllegal, i, v)
			}
			rec, err := a.encodeForStore(h, queueID, e.Flag, e.Body, a.stamp(e.Properties), born)
			if err != nil {
				return nil, 0, err
			}
			recs = append(recs, rec)
			sentProps = append(sentProps, e.Properties)
		}
	} else {
		// Delayed, retry-past-max and timed messages are stored elsewhere (placement.go).
		place := a.placeSend
		forwarded := route.Forwarded(req.Command) // then req.Conn is the follower's
		if prepared {
			// A prepared message waits as a half message (transaction.go), stored
			// with the transaction type cleared so it gets a queue offset.
			place = a.placeHalf
			h.SysFlag &^= store.SysFlagTxMask
			if !forwarded {
				a.d.Clients.SawProducer(req.Conn, h.ProducerGroup, a.mono())
			}
		}
		p, err := place(ctx, placeArgs{Topic: h.Topic, QueueID: queueID, ProducerGroup: h.ProducerGroup,
			ReconsumeTimes: h.ReconsumeTimes, MaxReconsumeTimes: h.MaxReconsumeTimes,
			MaxReconsumeSet: maxReconsumeSet(req.Command)}, h.Properties)
		if err != nil {
			return nil, 0, err
		}
		uniqKey, _ = store.Property(p.props, store.PropertyUniqKey)
		p.props = a.stamp(p.props)
		code := req.RequestCode()
		if replyTo, ok := store.Property(p.props, propertyReplyToClient); ok && !forwarded &&
			code != transport.SendReplyMessage && code != transport.SendReplyMessageV2 {
			a.d.Clients.SawRequester(req.Conn, replyTo, a.mono())
		}
		ph := h
		ph.Topic = p.topic
		rec, err := a.encodeForStore(ph, p.queueID, h.Flag, req.Body, p.props, born)
		if err != nil {
			return nil, 0, err
		}
		recs = append(recs, rec) // sentProps stays nil: the one message's are h.Properties
	}
	// No context.WithTimeout here: the proposer bounds the wait itself
	// (node.DefaultMaxWait, the send timeout) with one sweep per proposer.
	results, err := a.d.Replica.PutMessages(ctx, recs)
	if err != nil {
		return nil, 0, err // replica.ErrNotLeader: the forwarding stage relays it
	}
	if len(results) != len(recs) {
		return nil, 0, fmt.Errorf("%w: %d results for %d messages", replica.ErrUnknownOutcome, len(results), len(recs))
	}
	if a.d.Sent != nil {
		for i, rec := range recs {
			props := h.Properties
			if sentProps != nil {
				props = sentProps[i]
			}
			a.d.Sent(h.Topic, props, prepared, len(rec))
		}
	}
	return a.sendResponse(req.Serialize, results, queueID, uniqKey), queueID, nil
}

// sendResponse is SendMessageResponseHeader (msgId: the offset message IDs,
// comma-separated for a batch; queueId; queueOffset of the first message;
// transactionId: the UNIQ_KEY; MSG_REGION; TRACE_ON), its extFields encoded
// in st, the request's header encoding, directly rather than through a map:
// a map, its hashing and the encoder's key sort cost every send ~2 % of the
// leader's CPU. The keys go in sorted order, as a map's JSON encoding has them.
func (a *API) sendResponse(st transport.SerializeType, results []fsm.MessageResult, queueID int32, uniqKey string) *transport.Command {
	w := transport.NewExtWriter(st, 160+len(results)*33+len(uniqKey))
	w.Add("MSG_REGION", a.regionID())
	w.Add("TRACE_ON", strconv.FormatBool(!a.d.TraceOff))
	if len(results) == 1 {
		w.Add("msgId", results[0].OffsetMsgID)
	} else {
		ids := make([]string, len(results))
		for i, r := range results {
			ids[i] = r.OffsetMsgID
		}
		w.Add("msgId", strings.Join(ids, ","))
	}
	w.AddInt("queueId", int64(queueID))
	w.AddInt("queueOffset", int64(results[0].QueueOffset))
	w.Add("transactionId", uniqKey)
	r := route.OK(nil, nil)
	r.Ext = w.Ext()
	return r
}

// encodeForStore validates one message and encodes it in the stored layout; the
// FSM patches offsets and the store timestamp when it applies the entry.
func (a *API) encodeForStore(h SendHeader, queueID, flag int32, body []byte, props string, born netip.AddrPort) ([]byte, error) {
	if err := route.ValidateMessage(body, props, a.MaxMessageSize()); err != nil {
		return nil, err
	}
	m := store.Message{
		Topic:          h.Topic,
		QueueID:        queueID,
		Flag:           flag,
		SysFlag:        h.SysFlag,
		BornTimestamp:  h.BornTimestamp,
		BornHost:       born,
		StoreHost:      a.d.StoreHost,
		ReconsumeTimes: h.ReconsumeTimes,
		Body:           body,
		Properties:     props,
	}
	return store.AppendMessage(nil, &m)
}

// topicForSend returns the topic, creating it from TBW102 when auto-create is on
// (AbstractSendMessageProcessor.msgCheck).
func (a *API) topicForSend(ctx context.Context, h SendHeader) (fsm.TopicConfig, error) {
	if t, ok := a.d.Replica.Topic(h.Topic); ok {
		if t.Perm&fsm.PermWrite == 0 {
			return t, fmt.Errorf("%w: topic %s is not writable (perm %d)", route.ErrNoPermission, h.Topic, t.Perm)
		}
		return t, nil
	}
	retry := strings.HasPrefix(h.Topic, RetryPrefix)
	if !a.d.AutoCreateTopicEnable && !retry {
		return fsm.TopicConfig{}, fmt.Errorf("%w: topic %s (autoCreateTopicEnable=false)", fsm.ErrTopicNotFound, h.Topic)
	}
	queues := h.DefaultTopicQueueNums
	if queues <= 0 || queues > a.d.DefaultTopicQueueNums {
		queues = a.d.DefaultTopicQueueNums
	}
	if retry {
		queues = 1
	}
	t := fsm.NewTopic(h.Topic, queues, fsm.PermRead|fsm.PermWrite)
	if err := a.d.Replica.UpsertTopic(ctx, t); err != nil {
		return fsm.TopicConfig{}, fmt.Errorf("auto-create topic %s: %w", h.Topic, err)
	}
	a.d.TopicsChanged()
	if got, ok := a.d.Replica.Topic(h.Topic); ok {
		return got, nil
	}
	return t, nil
}

func bornHost(conn *transport.Conn) netip.AddrPort {
	if conn == nil {
		return netip.AddrPort{}
	}
	return conn.RemoteAddrPort()
}

// SendHeader is SEND_MESSAGE's header (V1 keys), also decoded from
// SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE's single-letter keys.
type SendHeader struct {
	ProducerGroup         string
	Topic                 string
	DefaultTopic          string
	DefaultTopicQueueNums int32
	QueueID               int32
	SysFlag               int32
	BornTimestamp         int64
	Flag                  int32
	Properties            string
	ReconsumeTimes        int32
	UnitMode              bool
	Batch                 bool
	MaxReconsumeTimes     int32
	BrokerName            string
}

// BatchElement is one inner message of a SEND_BATCH_MESSAGE body.
type BatchElement struct {
	Flag       int32
	Body       []byte
	Properties string
}

// decodeBatch splits a SEND_BATCH_MESSAGE body (Java MessageDecoder.encodeMessage
// layout): TOTALSIZE int32, MAGIC int32, BODYCRC int32, FLAG int32, BODYLEN int32
// + body, PROPLEN int16 + properties. Every length is checked against what remains.
func decodeBatch(b []byte) ([]BatchElement, error) {
	var out []BatchElement
	for pos := 0; pos < len(b); {
		if len(b)-pos < 20 {
			return nil, fmt.Errorf("%w: %d trailing bytes at %d", route.ErrBatchMalformed, len(b)-pos, pos)
		}
		total := int(int32(binary.BigEndian.Uint32(b[pos:])))
		if total < 22 || total > len(b)-pos {
			return nil, fmt.Errorf("%w: element at %d claims %d bytes, %d remain", route.ErrBatchMalformed, pos, total, len(b)-pos)
		}
		el := b[pos : pos+total]
		flag := int32(binary.BigEndian.Uint32(el[12:]))
		bodyLen := int(int32(binary.BigEndian.Uint32(el[16:])))
		if bodyLen < 0 || 20+bodyLen+2 > total {
			return nil, fmt.Errorf("%w: element at %d body length %d exceeds element", route.ErrBatchMalformed, pos, bodyLen)
		}
		body := el[20 : 20+bodyLen]
		propLen := int(binary.BigEndian.Uint16(el[20+bodyLen:]))
		if 22+bodyLen+propLen != total {
			return nil, fmt.Errorf("%w: element at %d lengths add to %d, total says %d", route.ErrBatchMalformed, pos, 22+bodyLen+propLen, total)
		}
		props := string(el[22+bodyLen:])
		out = append(out, BatchElement{Flag: flag, Body: body, Properties: props})
		pos += total
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty batch", route.ErrBatchMalformed)
	}
	return out, nil
}

// EncodeBatch is the inverse of decodeBatch (our clients and tests).
func EncodeBatch(elems []BatchElement) []byte {
	var b []byte
	for _, e := range elems {
		total := 22 + len(e.Body) + len(e.Properties)
		var hdr [20]byte
		binary.BigEndian.PutUint32(hdr[0:], uint32(total))
		binary.BigEndian.PutUint32(hdr[12:], uint32(e.Flag))
		binary.BigEndian.PutUint32(hdr[16:], uint32(len(e.Body)))
		b = append(b, hdr[:]...)
		b = append(b, e.Body...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(e.Properties)))
		b = append(b, e.Properties...)
	}
	return b
}
