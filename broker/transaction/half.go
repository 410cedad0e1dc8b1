package transaction

import (
	"bytes"
	"fmt"
	"maps"
	"net/netip"
	"strconv"

	"github.com/rocketraft/rocketraft/broker/schedule"
	"github.com/rocketraft/rocketraft/store"
)

// Half is a decoded half message with its properties, copied out of the
// CommitLog mapping (it stays valid after the read is released).
type Half struct {
	Msg   store.Message
	Props map[string]string
}

// DecodeHalf decodes a stored half message and copies it out of raw.
func DecodeHalf(raw []byte) (Half, error) {
	m, err := store.DecodeMessage(raw, false)
	if err != nil {
		return Half{}, err
	}
	m.Body = bytes.Clone(m.Body)
	m.Properties = string([]byte(m.Properties))
	return Half{Msg: m, Props: store.ParseProperties(m.Properties)}, nil
}

// RealTopicQueue returns REAL_TOPIC and REAL_QID; a missing or bad one is
// store.ErrMessageIllegal.
func (h Half) RealTopicQueue() (string, int32, error) {
	topic := h.Props[store.PropertyRealTopic]
	qid, err := strconv.ParseInt(h.Props[store.PropertyRealQueueID], 10, 32)
	if topic == "" || err != nil || qid < 0 {
		return "", 0, fmt.Errorf("%w: half message at %d: REAL_TOPIC=%q REAL_QID=%q", store.ErrMessageIllegal,
			h.Msg.PhysicalOffset, topic, h.Props[store.PropertyRealQueueID])
	}
	return topic, int32(qid), nil
}

// HalfProperties rewrites a prepared message's properties for the half queue
// (Java TransactionalMessageBridge.parseHalfMessageInner): DELAY and the timers
// are dropped, as the Java producer does for transactional sends; PGROUP
// defaults to producerGroup (the check-back goes to a producer of this group;
// the Go client always sets it); REAL_TOPIC and REAL_QID name (topic, queueID).
// The message is stored in HalfTopic queue 0 with the transaction type cleared
// from its sysFlag, so it gets its queue offset like any other.
func HalfProperties(props, producerGroup, topic string, queueID int32) string {
	m := store.ParseProperties(props)
	for _, k := range []string{store.PropertyDelayLevel, store.PropertyTimerDeliverMS, schedule.PropTimerDelaySec, schedule.PropTimerDelayMS} {
		delete(m, k)
	}
	if m[store.PropertyProducerGroup] == "" {
		m[store.PropertyProducerGroup] = producerGroup
	}
	m[store.PropertyRealTopic] = topic
	m[store.PropertyRealQueueID] = strconv.Itoa(int(queueID))
	return store.EncodeProperties(m)
}

// CommitRecord is the half message re-put into its real topic and queue: REAL_*
// and TRAN_MSG go, the transaction type is cleared, UNIQ_KEY (so the MsgId) and
// PGROUP stay (Java EndTransactionProcessor.endMessageTransaction).
func CommitRecord(h Half, storeHost netip.AddrPort) ([]byte, error) {
	topic, qid, err := h.RealTopicQueue()
	if err != nil {
		return nil, err
	}
	props := maps.Clone(h.Props)
	delete(props, store.PropertyRealTopic)
	delete(props, store.PropertyRealQueueID)
	delete(props, store.PropertyTransaction)
	m := h.Msg
	out := store.Message{
		Topic: topic, QueueID: qid, Flag: m.Flag, SysFlag: m.SysFlag &^ store.SysFlagTxMask,
		BornTimestamp: m.BornTimestamp, BornHost: m.BornHost, StoreHost: storeHost,
		ReconsumeTimes: m.ReconsumeTimes, PreparedTransactionOffset: int64(m.PhysicalOffset),
		Body: m.Body, Properties: store.EncodeProperties(props),
	}
	return store.AppendMessage(nil, &out)
}

// CheckMaxRecord is the half message as stored in CheckMaxTopic queue 0
// (REAL_TOPIC kept, so an operator can still find where it was going).
func CheckMaxRecord(h Half, storeHost netip.AddrPort) ([]byte, error) {
	m := h.Msg
	out := store.Message{
		Topic: CheckMaxTopic, QueueID: 0, Flag: m.Flag, SysFlag: m.SysFlag &^ store.SysFlagTxMask,
		BornTimestamp: m.BornTimestamp, BornHost: m.BornHost, StoreHost: storeHost,
		ReconsumeTimes: m.ReconsumeTimes, Body: m.Body, Properties: m.Properties,
	}
	return store.AppendMessage(nil, &out)
}
