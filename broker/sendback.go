package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// ErrMessageLookup: CONSUMER_SEND_MSG_BACK named a physical offset that holds no
// message here (deleted by retention, or a wrong offset). It maps to SYSTEM_ERROR,
// like Java's "look message by offset failed", and the client falls back to a
// plain SEND to %RETRY%<group>.
var ErrMessageLookup = errors.New("message lookup by offset failed")

// defaultMaxReconsumeTimes is Java's default for concurrent consumers.
const defaultMaxReconsumeTimes = 16

// SendBackHeader is CONSUMER_SEND_MSG_BACK's header.
type SendBackHeader struct {
	Group             string
	Offset            store.PhysicalOffset
	DelayLevel        int32
	OriginMsgID       string
	OriginTopic       string
	MaxReconsumeTimes int32
}

func parseSendBackHeader(fields map[string]string) (SendBackHeader, error) {
	e := &ext{fields: fields}
	h := SendBackHeader{
		Group:             e.str("group", true),
		Offset:            store.PhysicalOffset(e.int64("offset", true, 0)),
		DelayLevel:        e.int32("delayLevel", false, 0),
		OriginMsgID:       e.str("originMsgId", false),
		OriginTopic:       e.str("originTopic", false),
		MaxReconsumeTimes: e.int32("maxReconsumeTimes", false, defaultMaxReconsumeTimes),
	}
	if e.err == nil && h.Offset < 0 {
		e.fail("offset", fields["offset"], "must not be negative")
	}
	return h, e.err
}

// handleSendBack serves CONSUMER_SEND_MSG_BACK (36), Java
// AbstractSendMessageProcessor.consumerSendMsgBack: the message at the given
// physical offset is stored again with reconsumeTimes+1, RETRY_TOPIC and
// ORIGIN_MESSAGE_ID, delayed (level 3+reconsumeTimes unless given) on its way to
// %RETRY%<group>, or straight into %DLQ%<group> once reconsumeTimes has reached
// maxReconsumeTimes or the level is negative. A follower forwards it to the leader.
func (b *Broker) handleSendBack(ctx context.Context, req *transport.Command) *transport.Command {
	if !b.isLeader() {
		return b.forwardToLeader(ctx, req)
	}
	h, err := parseSendBackHeader(req.ExtFields)
	if err != nil {
		return errorResponse(err)
	}
	if err := validateGroup(h.Group); err != nil {
		return errorResponse(err)
	}
	rec, err := b.sendBackRecord(ctx, h)
	if err != nil {
		return errorResponse(err)
	}
	pctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	if _, err := b.replica.PutMessages(pctx, [][]byte{rec}); err != nil {
		if errors.Is(err, ErrNotLeader) {
			return b.forwardToLeader(ctx, req)
		}
		return errorResponse(err)
	}
	return okResponse(nil, nil)
}

// sendBackRecord builds the record to replicate for a send-back.
func (b *Broker) sendBackRecord(ctx context.Context, h SendBackHeader) ([]byte, error) {
	raw, release, err := b.store.ReadMessageAt(h.Offset)
	if err != nil {
		return nil, fmt.Errorf("%w: group=%s offset=%d: %w", ErrMessageLookup, h.Group, h.Offset, err)
	}
	m, err := store.DecodeMessage(raw, false)
	if err != nil {
		release()
		return nil, fmt.Errorf("%w: group=%s offset=%d: %w", ErrMessageLookup, h.Group, h.Offset, err)
	}
	// Body and Properties alias the mapped CommitLog; copy before releasing it.
	m.Body = bytes.Clone(m.Body)
	props := store.ParseProperties(m.Properties)
	release()

	if _, ok := props[store.PropertyRetryTopic]; !ok {
		props[store.PropertyRetryTopic] = m.Topic
	}
	if props[store.PropertyOriginMsgID] == "" {
		origin := props[store.PropertyUniqKey]
		if origin == "" {
			origin = h.OriginMsgID
		}
		if origin == "" {
			origin = store.OffsetMsgID(m.StoreHost, m.PhysicalOffset)
		}
		props[store.PropertyOriginMsgID] = origin
	}
	delete(props, store.PropertyDelayLevel)
	encoded := store.EncodeProperties(props)

	var p placement
	if m.ReconsumeTimes >= h.MaxReconsumeTimes || h.DelayLevel < 0 {
		p, err = b.placeDLQ(ctx, h.Group, encoded)
	} else {
		level := DelayLevel(h.DelayLevel)
		if level == 0 {
			level = DelayLevel(3 + m.ReconsumeTimes)
		}
		retry := retryPrefix + h.Group
		if err = b.ensureTopic(ctx, retry, 1); err == nil {
			p, err = b.placeDelayed(ctx, retry, 0, encoded, level)
		}
	}
	if err != nil {
		return nil, err
	}
	out := store.Message{
		Topic:          p.topic,
		QueueID:        p.queueID,
		Flag:           m.Flag,
		SysFlag:        m.SysFlag &^ store.SysFlagTxMask,
		BornTimestamp:  m.BornTimestamp,
		BornHost:       m.BornHost,
		StoreHost:      b.storeHost,
		ReconsumeTimes: m.ReconsumeTimes + 1,
		Body:           m.Body,
		Properties:     p.props,
	}
	if err := validateMessage(out.Body, out.Properties, b.cfg.MaxMessageSize); err != nil {
		return nil, err
	}
	return store.AppendMessage(nil, &out)
}
