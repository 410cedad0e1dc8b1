package clientapi

import (
	"context"
	"encoding/binary"
	"errors"
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
//
// The write is answered through a callback when the replica can do so: the
// request is deferred (route.Request.Defer), and the answer is built and sent
// on the replica's completion goroutine, so no goroutine is parked per send
// and none is woken per message when its raft entry is applied.
//
// Sends run on the connection's reader goroutine (routes.go: HandleInline), so
// nothing here may block there: a send that has to create a topic or group
// first (errWouldBlock) starts over on a goroutine.
func (a *API) handleSend(ctx context.Context, req *route.Request) (*transport.Command, error) {
	plan, err := a.planSend(ctx, req)
	switch {
	case errors.Is(err, errWouldBlock):
		resp, derr := req.Defer() // before the answer may come
		go func() {
			resp, _, err := a.send(transport.Blocking(ctx), req)
			req.Answer(resp, err)
		}()
		return resp, derr
	case err != nil:
		return nil, err
	case !req.CanDefer():
		return a.write(ctx, &plan)
	}
	resp, err := req.Defer() // before the answer may come
	a.async.PutMessagesAsync(ctx, plan.recs, func(results []fsm.MessageResult, err error) {
		req.Answer(a.sendOutcome(&plan, results, err))
	})
	return resp, err
}

// send stores the message(s) of a send request and returns the response and
// the queue they went to.
func (a *API) send(ctx context.Context, req *route.Request) (*transport.Command, int32, error) {
	plan, err := a.planSend(ctx, req)
	if err != nil {
		return nil, 0, err
	}
	resp, err := a.write(ctx, &plan)
	return resp, plan.queueID, err
}

// write replicates a planned send, waiting for the outcome, and answers it.
func (a *API) write(ctx context.Context, p *sendPlan) (*transport.Command, error) {
	results, err := a.d.Replica.PutMessages(ctx, p.recs)
	return a.sendOutcome(p, results, err)
}

// sendPlan is a send request validated and encoded for the store: what goes
// to the replica, and what the answer is built from once it is written.
type sendPlan struct {
	h         SendHeader
	recs      [][]byte
	sentProps []string // per record of a batch, the properties the producer sent (metrics)
	prepared  bool
	queueID   int32
	uniqKey   string
	serialize transport.SerializeType
}

// planSend validates a send request and encodes its message(s).
func (a *API) planSend(ctx context.Context, req *route.Request) (sendPlan, error) {
	h, err := parseSendHeader(req.Command)
	if err != nil {
		return sendPlan{}, err
	}
	if err := a.d.DiskFull(); err != nil {
		return sendPlan{}, err
	}
	if err := route.ValidateSendTopic(h.Topic); err != nil {
		return sendPlan{}, err
	}
	batch := req.RequestCode() == transport.SendBatchMessage || h.Batch
	prepared := h.SysFlag&store.SysFlagTxPrepared != 0
	if prepared && batch {
		return sendPlan{}, fmt.Errorf("%w: batch messages cannot be transactional", route.ErrNoPermission)
	}
	topic, err := a.topicForSend(ctx, h)
	if err != nil {
		return sendPlan{}, err
	}
	queueID := h.QueueID
	if queueID < 0 {
		queueID = int32(a.now().UnixNano() % int64(topic.WriteQueueNums))
	}
	if queueID >= max(topic.WriteQueueNums, topic.ReadQueueNums) {
		return sendPlan{}, fmt.Errorf("%w: queueId=%d, topic %s has %d write queues", fsm.ErrQueueIDInvalid, queueID, h.Topic, topic.WriteQueueNums)
	}
	born := bornHost(req.Conn)
	var recs [][]byte
	var sentProps []string
	var uniqKey string
	if batch {
		elems, err := decodeBatch(req.Body)
		if err != nil {
			return sendPlan{}, err
		}
		for i, e := range elems {
			// RocketMQ does not delay batch messages (MessageBatch refuses DELAY);
			// storing them at once would silently ignore what the producer asked for.
			if v, ok := store.Property(e.Properties, store.PropertyDelayLevel); ok && v != "" && v != "0" {
				return sendPlan{}, fmt.Errorf("%w: batch element %d has DELAY=%s; batch messages cannot be delayed", store.ErrMessageIllegal, i, v)
			}
			rec, err := a.encodeForStore(h, queueID, e.Flag, e.Body, a.stamp(e.Properties), born)
			if err != nil {
				return sendPlan{}, err
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
			return sendPlan{}, err
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
			return sendPlan{}, err
		}
		recs = append(recs, rec) // sentProps stays nil: the one message's are h.Properties
	}
	// No context.WithTimeout for the write: the proposer bounds the wait
	// itself (node.DefaultMaxWait, the send timeout) with one sweep per proposer.
	return sendPlan{h: h, recs: recs, sentProps: sentProps, prepared: prepared, queueID: queueID,
		uniqKey: uniqKey, serialize: req.Serialize}, nil
}

// sendOutcome is the answer to a send once the replica has written its
// records (or failed to).
func (a *API) sendOutcome(p *sendPlan, results []fsm.MessageResult, err error) (*transport.Command, error) {
	if err != nil {
		return nil, err // replica.ErrNotLeader: the forwarding stage relays it
	}
	if len(results) != len(p.recs) {
		return nil, fmt.Errorf("%w: %d results for %d messages", replica.ErrUnknownOutcome, len(results), len(p.recs))
	}
	if a.d.Sent != nil {
		for i, rec := range p.recs {
			props := p.h.Properties
			if p.sentProps != nil {
				props = p.sentProps[i]
			}
			a.d.Sent(p.h.Topic, props, p.prepared, len(rec))
		}
	}
	return a.sendResponse(p.serialize, results, p.queueID, p.uniqKey), nil
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
	if err := a.metadataFor(ctx).UpsertTopic(ctx, t); err != nil {
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

// sendKey is the slot of one SendHeader field in sendFields.
type sendKey uint8

const (
	keyProducerGroup sendKey = iota
	keyTopic
	keyDefaultTopic
	keyDefaultTopicQueueNums
	keyQueueID
	keySysFlag
	keyBornTimestamp
	keyFlag
	keyProperties
	keyReconsumeTimes
	keyUnitMode
	keyBatch
	keyMaxReconsumeTimes
	keyBname      // "bname", which V2 does not shorten
	keyBrokerName // "brokerName", V2's "n"
	numSendKeys
	noSendKey = numSendKeys
)

// v1SendKey is the slot of a V1 (long) key, noSendKey for any other key.
func v1SendKey(k string) sendKey {
	switch k {
	case "producerGroup":
		return keyProducerGroup
	case "topic":
		return keyTopic
	case "defaultTopic":
		return keyDefaultTopic
	case "defaultTopicQueueNums":
		return keyDefaultTopicQueueNums
	case "queueId":
		return keyQueueID
	case "sysFlag":
		return keySysFlag
	case "bornTimestamp":
		return keyBornTimestamp
	case "flag":
		return keyFlag
	case "properties":
		return keyProperties
	case "reconsumeTimes":
		return keyReconsumeTimes
	case "unitMode":
		return keyUnitMode
	case "batch":
		return keyBatch
	case "maxReconsumeTimes":
		return keyMaxReconsumeTimes
	case "bname":
		return keyBname
	case "brokerName":
		return keyBrokerName
	}
	return noSendKey
}

// v2SendKey is the slot of SendMessageRequestHeaderV2's single-letter key,
// noSendKey for any other key.
func v2SendKey(k string) sendKey {
	if len(k) != 1 {
		return noSendKey
	}
	switch k[0] {
	case 'a':
		return keyProducerGroup
	case 'b':
		return keyTopic
	case 'c':
		return keyDefaultTopic
	case 'd':
		return keyDefaultTopicQueueNums
	case 'e':
		return keyQueueID
	case 'f':
		return keySysFlag
	case 'g':
		return keyBornTimestamp
	case 'h':
		return keyFlag
	case 'i':
		return keyProperties
	case 'j':
		return keyReconsumeTimes
	case 'k':
		return keyUnitMode
	case 'l':
		return keyMaxReconsumeTimes
	case 'm':
		return keyBatch
	case 'n':
		return keyBrokerName
	}
	return noSendKey
}

// sendFields holds a send header's values, found in one pass over the
// request's extFields: fifteen lookups, each a scan of fourteen pairs (and of
// them again through a V2 alias), cost the leader ~5 % of its CPU per send.
type sendFields struct {
	long, short     [numSendKeys]string
	hasLong, hasV2s uint32 // bit per sendKey
}

// fill reads req's extFields once. V2 keys count only when "b" (V2's topic) is
// among them, and then a V2 key wins over its V1 name, as Apache's
// SendMessageRequestHeaderV2 decoding has it.
func (f *sendFields) fill(req *transport.Command) (v2 bool) {
	for _, p := range req.FieldPairs() {
		if k := v1SendKey(p.Key); k != noSendKey {
			f.long[k], f.hasLong = p.Value, f.hasLong|1<<k
		} else if k := v2SendKey(p.Key); k != noSendKey {
			f.short[k], f.hasV2s = p.Value, f.hasV2s|1<<k
		}
	}
	return f.hasV2s&(1<<keyTopic) != 0
}

// get returns the value of slot k, through its V2 alias when v2.
func (f *sendFields) get(k sendKey, v2 bool) (string, bool) {
	if v2 && f.hasV2s&(1<<k) != 0 {
		return f.short[k], true
	}
	return f.long[k], f.hasLong&(1<<k) != 0
}

// parseSendHeader decodes the header of codes 10, 310 and 320. V2
// (single-letter) keys are recognised by the presence of "b" (topic) and read
// as their V1 names (problems name those).
func parseSendHeader(req *transport.Command) (SendHeader, error) {
	var sf sendFields
	v2 := sf.fill(req)
	var e route.Fields
	str := func(k sendKey, name string, required bool) string {
		v, ok := sf.get(k, v2)
		return e.StrOf(name, v, ok, required)
	}
	i32 := func(k sendKey, name string, required bool, def int32) int32 {
		v, ok := sf.get(k, v2)
		return e.Int32Of(name, v, ok, required, def)
	}
	boolean := func(k sendKey, name string) bool {
		v, _ := sf.get(k, v2)
		return e.BoolOf(name, v, false)
	}
	born, bornOK := sf.get(keyBornTimestamp, v2)
	h := SendHeader{
		ProducerGroup:         str(keyProducerGroup, "producerGroup", false),
		Topic:                 str(keyTopic, "topic", true),
		DefaultTopic:          str(keyDefaultTopic, "defaultTopic", false),
		DefaultTopicQueueNums: i32(keyDefaultTopicQueueNums, "defaultTopicQueueNums", false, 4),
		QueueID:               i32(keyQueueID, "queueId", true, 0),
		SysFlag:               i32(keySysFlag, "sysFlag", false, 0),
		BornTimestamp:         e.Int64Of("bornTimestamp", born, bornOK, false, 0),
		Flag:                  i32(keyFlag, "flag", false, 0),
		Properties:            str(keyProperties, "properties", false),
		ReconsumeTimes:        i32(keyReconsumeTimes, "reconsumeTimes", false, 0),
		UnitMode:              boolean(keyUnitMode, "unitMode"),
		Batch:                 boolean(keyBatch, "batch"),
		MaxReconsumeTimes:     i32(keyMaxReconsumeTimes, "maxReconsumeTimes", false, 0),
		BrokerName:            sf.long[keyBname], // "bname": V2 has no alias for it
	}
	if h.BrokerName == "" {
		h.BrokerName, _ = sf.get(keyBrokerName, v2)
	}
	return h, e.Err
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
