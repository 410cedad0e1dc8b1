package broker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

const (
	autoCreateTopic = "TBW102"
	retryPrefix     = "%RETRY%"
	dlqPrefix       = "%DLQ%"
	// sendTimeout bounds one replicated write; past it the outcome is unknown.
	sendTimeout = 10 * time.Second
)

// handleSend serves SEND_MESSAGE (10), SEND_MESSAGE_V2 (310) and SEND_BATCH_MESSAGE
// (320): validate, encode each message once, replicate through raft (group commit),
// answer after a quorum has fsynced. A follower forwards the request to the leader.
func (b *Broker) handleSend(ctx context.Context, conn *transport.Conn, req *transport.Command) *transport.Command {
	if !b.isLeader() {
		return b.forwardToLeader(ctx, req)
	}
	h, err := parseSendHeader(req.ExtFields)
	if err != nil {
		return errorResponse(err)
	}
	if err := b.errDiskFull(); err != nil {
		return errorResponse(err)
	}
	if err := validateSendTopic(h.Topic); err != nil {
		return errorResponse(err)
	}
	prepared := h.SysFlag&store.SysFlagTxPrepared != 0
	if prepared && (req.RequestCode() == transport.SendBatchMessage || h.Batch) {
		return errorResponse(fmt.Errorf("%w: batch messages cannot be transactional", ErrNoPermission))
	}
	topic, err := b.topicForSend(ctx, h)
	if err != nil {
		return errorResponse(err)
	}
	queueID := h.QueueID
	if queueID < 0 {
		queueID = int32(time.Now().UnixNano() % int64(topic.WriteQueueNums))
	}
	if queueID >= max(topic.WriteQueueNums, topic.ReadQueueNums) {
		return errorResponse(fmt.Errorf("%w: queueId=%d, topic %s has %d write queues", ErrQueueIDInvalid, queueID, h.Topic, topic.WriteQueueNums))
	}
	born := bornHost(conn)
	batch := req.RequestCode() == transport.SendBatchMessage || h.Batch
	var recs [][]byte
	var uniqKey string
	if batch {
		elems, err := decodeBatch(req.Body)
		if err != nil {
			return errorResponse(err)
		}
		for i, e := range elems {
			// RocketMQ does not delay batch messages (MessageBatch refuses DELAY);
			// storing them at once would silently ignore what the producer asked for.
			if v, ok := store.Property(e.Properties, store.PropertyDelayLevel); ok && v != "" && v != "0" {
				return errorResponse(fmt.Errorf("%w: batch element %d has DELAY=%s; batch messages cannot be delayed", store.ErrMessageIllegal, i, v))
			}
			rec, err := b.encodeForStore(h, queueID, e.Flag, e.Body, e.Properties, born)
			if err != nil {
				return errorResponse(err)
			}
			recs = append(recs, rec)
		}
	} else {
		// Delayed, retry-past-max and timed messages are stored elsewhere (schedule_send.go).
		place := b.placeSend
		if prepared {
			// A prepared message waits as a half message (transaction.go), stored
			// with the transaction type cleared so it gets a queue offset.
			place = b.placeHalf
			h.SysFlag &^= store.SysFlagTxMask
			if req.ExtFields[extForwarded] == "" { // a forwarded send's conn is the follower's
				b.clients.sawProducer(conn, h.ProducerGroup, time.Now())
			}
		}
		p, err := place(ctx, h, queueID, h.Properties, maxReconsumeSet(req.ExtFields))
		if err != nil {
			return errorResponse(err)
		}
		uniqKey, _ = store.Property(p.props, store.PropertyUniqKey)
		p.props = withCluster(p.props, b.cfg.ClusterName)
		if replyTo, ok := store.Property(p.props, propertyReplyToClient); ok && req.ExtFields[extForwarded] == "" &&
			req.RequestCode() != transport.SendReplyMessage && req.RequestCode() != transport.SendReplyMessageV2 {
			b.clients.sawRequester(conn, replyTo, time.Now())
		}
		ph := h
		ph.Topic = p.topic
		rec, err := b.encodeForStore(ph, p.queueID, h.Flag, req.Body, p.props, born)
		if err != nil {
			return errorResponse(err)
		}
		recs = append(recs, rec)
	}
	pctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	results, err := b.replica.PutMessages(pctx, recs)
	if errors.Is(err, ErrNotLeader) {
		return b.forwardToLeader(ctx, req)
	}
	if err != nil {
		return errorResponse(err)
	}
	if len(results) != len(recs) {
		return errorResponse(fmt.Errorf("%w: %d results for %d messages", ErrUnknownOutcome, len(results), len(recs)))
	}
	ids := make([]string, len(results))
	for i, r := range results {
		ids[i] = r.OffsetMsgID
	}
	ext := map[string]string{
		"msgId":         strings.Join(ids, ","),
		"queueId":       strconv.Itoa(int(queueID)),
		"queueOffset":   strconv.FormatInt(int64(results[0].QueueOffset), 10),
		"transactionId": uniqKey,
		"MSG_REGION":    "DefaultRegion",
		"TRACE_ON":      "true",
	}
	return okResponse(ext, nil)
}

// encodeForStore validates one message and encodes it in the stored layout; the
// FSM patches offsets and the store timestamp when it applies the entry.
func (b *Broker) encodeForStore(h SendHeader, queueID, flag int32, body []byte, props string, born netip.AddrPort) ([]byte, error) {
	if err := validateMessage(body, props, b.cfg.MaxMessageSize); err != nil {
		return nil, err
	}
	m := store.Message{
		Topic:          h.Topic,
		QueueID:        queueID,
		Flag:           flag,
		SysFlag:        h.SysFlag,
		BornTimestamp:  h.BornTimestamp,
		BornHost:       born,
		StoreHost:      b.storeHost,
		ReconsumeTimes: h.ReconsumeTimes,
		Body:           body,
		Properties:     props,
	}
	return store.AppendMessage(nil, &m)
}

// topicForSend returns the topic, creating it from TBW102 when auto-create is on
// (AbstractSendMessageProcessor.msgCheck).
func (b *Broker) topicForSend(ctx context.Context, h SendHeader) (TopicConfig, error) {
	if t, ok := b.replica.Topic(h.Topic); ok {
		if t.Perm&PermWrite == 0 {
			return t, fmt.Errorf("%w: topic %s is not writable (perm %d)", ErrNoPermission, h.Topic, t.Perm)
		}
		return t, nil
	}
	retry := strings.HasPrefix(h.Topic, retryPrefix)
	if !b.cfg.AutoCreateTopicEnable && !retry {
		return TopicConfig{}, fmt.Errorf("%w: topic %s (autoCreateTopicEnable=false)", ErrTopicNotExist, h.Topic)
	}
	queues := h.DefaultTopicQueueNums
	if queues <= 0 || queues > b.cfg.DefaultTopicQueueNums {
		queues = b.cfg.DefaultTopicQueueNums
	}
	if retry {
		queues = 1
	}
	t := TopicConfig{Name: h.Topic, ReadQueueNums: queues, WriteQueueNums: queues, Perm: PermRead | PermWrite}
	if err := b.replica.UpsertTopic(ctx, t); err != nil {
		return TopicConfig{}, fmt.Errorf("auto-create topic %s: %w", h.Topic, err)
	}
	b.registerAllAsync()
	if got, ok := b.replica.Topic(h.Topic); ok {
		return got, nil
	}
	return t, nil
}

func bornHost(conn *transport.Conn) netip.AddrPort {
	if conn == nil {
		return netip.AddrPort{}
	}
	ap, err := netip.ParseAddrPort(conn.RemoteAddr())
	if err != nil {
		return netip.AddrPort{}
	}
	return ap
}
