package clientapi

import (
	"bytes"
	"context"
	"fmt"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/broker/schedule"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

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

func parseSendBackHeader(req *transport.Command) (SendBackHeader, error) {
	e := route.FieldsOf(req)
	h := SendBackHeader{
		Group:             e.Str("group", true),
		Offset:            store.PhysicalOffset(e.Int64("offset", true, 0)),
		DelayLevel:        e.Int32("delayLevel", false, 0),
		OriginMsgID:       e.Str("originMsgId", false),
		OriginTopic:       e.Str("originTopic", false),
		MaxReconsumeTimes: e.Int32("maxReconsumeTimes", false, defaultMaxReconsumeTimes),
	}
	if e.Err == nil && h.Offset < 0 {
		e.Fail("offset", req.Field("offset"), "must not be negative")
	}
	return h, e.Err
}

// handleSendBack serves CONSUMER_SEND_MSG_BACK (36) on the leader, Java
// AbstractSendMessageProcessor.consumerSendMsgBack: the message at the given
// physical offset is stored again with reconsumeTimes+1, RETRY_TOPIC and
// ORIGIN_MESSAGE_ID, delayed (level 3+reconsumeTimes unless given) on its way to
// %RETRY%<group>, or straight into %DLQ%<group> once reconsumeTimes has reached
// maxReconsumeTimes or the level is negative.
func (a *API) handleSendBack(ctx context.Context, req *route.Request) (*transport.Command, error) {
	h, err := parseSendBackHeader(req.Command)
	if err != nil {
		return nil, err
	}
	if err := route.ValidateGroup(h.Group); err != nil {
		return nil, err
	}
	rec, err := a.sendBackRecord(ctx, h)
	if err != nil {
		return nil, err
	}
	// The proposer bounds the wait (node.DefaultMaxWait), as for a send.
	if _, err := a.d.Replica.PutMessages(ctx, [][]byte{rec}); err != nil {
		return nil, err
	}
	return route.OK(nil, nil), nil
}

// sendBackRecord builds the record to replicate for a send-back.
func (a *API) sendBackRecord(ctx context.Context, h SendBackHeader) ([]byte, error) {
	raw, release, err := a.d.Store.ReadMessageAt(h.Offset)
	if err != nil {
		return nil, fmt.Errorf("%w: group=%s offset=%d: %w", route.ErrMessageLookup, h.Group, h.Offset, err)
	}
	m, err := store.DecodeMessage(raw, false)
	if err != nil {
		release()
		return nil, fmt.Errorf("%w: group=%s offset=%d: %w", route.ErrMessageLookup, h.Group, h.Offset, err)
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
		p, err = a.placeDLQ(ctx, h.Group, encoded)
	} else {
		level := schedule.DelayLevel(h.DelayLevel)
		if level == 0 {
			level = schedule.DelayLevel(3 + m.ReconsumeTimes)
		}
		if err = a.ensureRetryTopic(ctx, h.Group); err == nil {
			p, err = a.placeDelayed(ctx, RetryPrefix+h.Group, 0, encoded, level)
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
		StoreHost:      a.d.StoreHost,
		ReconsumeTimes: m.ReconsumeTimes + 1,
		Body:           m.Body,
		Properties:     p.props,
	}
	if err := route.ValidateMessage(out.Body, out.Properties, a.MaxMessageSize()); err != nil {
		return nil, err
	}
	return store.AppendMessage(nil, &out)
}
