package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"strconv"
	"time"

	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Transaction topics (Java TopicValidator): prepared messages wait in the half
// queue (queue 0); those that never get an answer after transactionCheckMax
// check-backs are moved to the check-max topic.
const (
	transHalfTopic     = "RMQ_SYS_TRANS_HALF_TOPIC"
	transCheckMaxTopic = "TRANS_CHECK_MAX_TIME_TOPIC"
)

// END_TRANSACTION commitOrRollback values (Java MessageSysFlag TRANSACTION_*_TYPE).
const (
	txNotType      = 0
	txCommitType   = int32(store.SysFlagTxCommit)
	txRollbackType = int32(store.SysFlagTxRollback)
)

// ErrHalfMessage: END_TRANSACTION named a half message that is not there or does
// not match (wrong offset, wrong producer group). It maps to SYSTEM_ERROR, like
// Java's EndTransactionProcessor.checkPrepareMessage.
var ErrHalfMessage = errors.New("half message check failed")

// TransactionState reads the replicated transaction decisions, keyed by half queue
// offset (fsm.TransactionView implements it).
type TransactionState interface {
	// Decided reports whether the half message at o is decided and, if so, the
	// first offset after its decided run.
	Decided(o store.QueueOffset) (next store.QueueOffset, ok bool)
	// NextDecided returns the first decided offset ≥ o, if any.
	NextDecided(o store.QueueOffset) (store.QueueOffset, bool)
	FirstUndecided() store.QueueOffset
	// Checks is how many check-backs the undecided half message at o has had.
	Checks(o store.QueueOffset) int32
}

// TransactionOp is one decision or check on the half message at HalfOffset.
// Record is the message the op stores (commit: the real message; discard: the copy
// for TRANS_CHECK_MAX_TIME_TOPIC), nil for none.
type TransactionOp struct {
	Kind       fsm.TransactionOpKind
	HalfOffset store.QueueOffset
	Record     []byte
}

// TransactionOpResult is the outcome of one op. Decided: the half message was
// decided before (a duplicate); nothing was stored. Err: the op's record was
// refused on its own (its topic or queue is gone) although the decision stands.
type TransactionOpResult struct {
	Decided bool
	Put     PutResult
	Err     error
}

// EndTransactionHeader is END_TRANSACTION's header (rocketmq-protocol.md §2.4.1).
type EndTransactionHeader struct {
	ProducerGroup        string
	TranStateTableOffset store.QueueOffset
	CommitLogOffset      store.PhysicalOffset
	CommitOrRollback     int32
	FromTransactionCheck bool
	MsgID                string
	TransactionID        string
}

func parseEndTransactionHeader(fields map[string]string) (EndTransactionHeader, error) {
	e := &ext{fields: fields}
	h := EndTransactionHeader{
		ProducerGroup:        e.str("producerGroup", true),
		TranStateTableOffset: store.QueueOffset(e.int64("tranStateTableOffset", true, 0)),
		CommitLogOffset:      store.PhysicalOffset(e.int64("commitLogOffset", true, 0)),
		CommitOrRollback:     e.int32("commitOrRollback", true, 0),
		FromTransactionCheck: e.bool("fromTransactionCheck", false),
		MsgID:                e.str("msgId", false),
		TransactionID:        e.str("transactionId", false),
	}
	if e.err == nil {
		switch {
		case h.TranStateTableOffset < 0:
			e.fail("tranStateTableOffset", fields["tranStateTableOffset"], "must not be negative")
		case h.CommitLogOffset < 0:
			e.fail("commitLogOffset", fields["commitLogOffset"], "must not be negative")
		case h.CommitOrRollback != txNotType && h.CommitOrRollback != txCommitType && h.CommitOrRollback != txRollbackType:
			e.fail("commitOrRollback", fields["commitOrRollback"], "must be 0, 8 or 12")
		}
	}
	return h, e.err
}

// placeHalf stores a prepared message as a half message: RMQ_SYS_TRANS_HALF_TOPIC
// queue 0 with REAL_TOPIC and REAL_QID (Java TransactionalMessageBridge
// parseHalfMessageInner). The caller clears the transaction type from sysFlag, so
// the record gets its queue offset like any other. DELAY and timers are dropped, as
// the Java producer does for transactional sends. Its signature is placeSend's.
func (b *Broker) placeHalf(ctx context.Context, h SendHeader, queueID int32, props string, _ bool) (placement, error) {
	if err := b.ensureTopic(ctx, transHalfTopic, 1); err != nil {
		return placement{}, err
	}
	m := store.ParseProperties(props)
	for _, k := range []string{store.PropertyDelayLevel, store.PropertyTimerDeliverMS, propTimerDelaySec, propTimerDelayMS} {
		delete(m, k)
	}
	if m[store.PropertyProducerGroup] == "" {
		// The check-back goes to a producer of this group; the Go client always sets it.
		m[store.PropertyProducerGroup] = h.ProducerGroup
	}
	m[store.PropertyRealTopic] = h.Topic
	m[store.PropertyRealQueueID] = strconv.Itoa(int(queueID))
	return placement{topic: transHalfTopic, queueID: 0, props: store.EncodeProperties(m)}, nil
}

// sawProducer records conn as a producer of group before its first heartbeat
// (the Go producer heartbeats only every 30 s), so a check-back can reach it.
func (r *clientRegistry) sawProducer(conn *transport.Conn, group string, now time.Time) {
	if conn == nil || group == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.producers[group]
	if m == nil {
		m = make(map[uint64]*producerClient)
		r.producers[group] = m
	}
	if p, ok := m[conn.ID()]; ok {
		p.lastUpdate = now
		return
	}
	m[conn.ID()] = &producerClient{clientID: conn.RemoteAddr(), conn: conn, lastUpdate: now}
}

// halfMessage is a decoded half message with its properties, copied out of the
// CommitLog mapping.
type halfMessage struct {
	msg   store.Message
	props map[string]string
}

func decodeHalf(raw []byte) (halfMessage, error) {
	m, err := store.DecodeMessage(raw, false)
	if err != nil {
		return halfMessage{}, err
	}
	m.Body = bytes.Clone(m.Body)
	m.Properties = string([]byte(m.Properties))
	return halfMessage{msg: m, props: store.ParseProperties(m.Properties)}, nil
}

// realTopicQueue returns REAL_TOPIC and REAL_QID.
func (h halfMessage) realTopicQueue() (string, int32, error) {
	topic := h.props[store.PropertyRealTopic]
	qid, err := strconv.ParseInt(h.props[store.PropertyRealQueueID], 10, 32)
	if topic == "" || err != nil || qid < 0 {
		return "", 0, fmt.Errorf("%w: half message at %d: REAL_TOPIC=%q REAL_QID=%q", store.ErrMessageIllegal,
			h.msg.PhysicalOffset, topic, h.props[store.PropertyRealQueueID])
	}
	return topic, int32(qid), nil
}

// readHalf reads and checks the half message END_TRANSACTION names.
func (b *Broker) readHalf(h EndTransactionHeader) (halfMessage, error) {
	raw, release, err := b.store.ReadMessageAt(h.CommitLogOffset)
	if err != nil {
		return halfMessage{}, fmt.Errorf("%w: commitLogOffset=%d: %w", ErrHalfMessage, h.CommitLogOffset, err)
	}
	hm, err := decodeHalf(raw)
	release()
	if err != nil {
		return halfMessage{}, fmt.Errorf("%w: commitLogOffset=%d: %w", ErrHalfMessage, h.CommitLogOffset, err)
	}
	switch {
	case hm.msg.Topic != transHalfTopic:
		return hm, fmt.Errorf("%w: commitLogOffset=%d holds a message of topic %s", ErrHalfMessage, h.CommitLogOffset, hm.msg.Topic)
	case hm.msg.QueueOffset != h.TranStateTableOffset:
		return hm, fmt.Errorf("%w: commitLogOffset=%d is half offset %d, tranStateTableOffset=%d", ErrHalfMessage,
			h.CommitLogOffset, hm.msg.QueueOffset, h.TranStateTableOffset)
	case hm.props[store.PropertyProducerGroup] != h.ProducerGroup:
		return hm, fmt.Errorf("%w: commitLogOffset=%d belongs to producer group %q, not %q", ErrHalfMessage,
			h.CommitLogOffset, hm.props[store.PropertyProducerGroup], h.ProducerGroup)
	}
	return hm, nil
}

// commitRecord is the half message re-put into its real topic and queue: REAL_*
// and TRAN_MSG go, the transaction type is cleared, UNIQ_KEY (so the MsgId) and
// PGROUP stay (Java EndTransactionProcessor.endMessageTransaction).
func (b *Broker) commitRecord(hm halfMessage) ([]byte, error) {
	topic, qid, err := hm.realTopicQueue()
	if err != nil {
		return nil, err
	}
	props := maps.Clone(hm.props)
	delete(props, store.PropertyRealTopic)
	delete(props, store.PropertyRealQueueID)
	delete(props, store.PropertyTransaction)
	m := hm.msg
	out := store.Message{
		Topic: topic, QueueID: qid, Flag: m.Flag, SysFlag: m.SysFlag &^ store.SysFlagTxMask,
		BornTimestamp: m.BornTimestamp, BornHost: m.BornHost, StoreHost: b.storeHost,
		ReconsumeTimes: m.ReconsumeTimes, PreparedTransactionOffset: int64(m.PhysicalOffset),
		Body: m.Body, Properties: store.EncodeProperties(props),
	}
	return store.AppendMessage(nil, &out)
}

// checkMaxRecord is the half message as stored in TRANS_CHECK_MAX_TIME_TOPIC
// queue 0 (REAL_TOPIC kept, so an operator can still find where it was going).
func checkMaxRecord(hm halfMessage, host netip.AddrPort) ([]byte, error) {
	m := hm.msg
	out := store.Message{
		Topic: transCheckMaxTopic, QueueID: 0, Flag: m.Flag, SysFlag: m.SysFlag &^ store.SysFlagTxMask,
		BornTimestamp: m.BornTimestamp, BornHost: m.BornHost, StoreHost: host,
		ReconsumeTimes: m.ReconsumeTimes, Body: m.Body, Properties: m.Properties,
	}
	return store.AppendMessage(nil, &out)
}

// handleEndTransaction serves END_TRANSACTION (37): commit re-puts the half
// message into its real topic and records the decision in the same raft entry;
// rollback records the decision only; unknown (0) is ignored and left to the
// check-back. A decision for a half message already decided is answered SUCCESS
// and stores nothing. A follower forwards it to the leader.
func (b *Broker) handleEndTransaction(ctx context.Context, req *transport.Command) *transport.Command {
	if !b.isLeader() {
		return b.forwardToLeader(ctx, req)
	}
	h, err := parseEndTransactionHeader(req.ExtFields)
	if err != nil {
		return errorResponse(err)
	}
	if h.CommitOrRollback == txNotType {
		b.log.Debug("END_TRANSACTION with unknown state; the check-back will ask again",
			"group", h.ProducerGroup, "halfOffset", h.TranStateTableOffset, "msgId", h.MsgID, "remark", req.Remark)
		return nil
	}
	if _, done := b.replica.TransactionState().Decided(h.TranStateTableOffset); done {
		return okResponse(nil, nil)
	}
	hm, err := b.readHalf(h)
	if err != nil {
		b.log.Warn("END_TRANSACTION refused", "group", h.ProducerGroup, "msgId", h.MsgID, "error", err)
		return errorResponse(err)
	}
	op := TransactionOp{Kind: fsm.TxRollback, HalfOffset: h.TranStateTableOffset}
	if h.CommitOrRollback == txCommitType {
		op.Kind = fsm.TxCommit
		if op.Record, err = b.commitRecord(hm); err != nil {
			return errorResponse(err)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	res, err := b.replica.ApplyTransactionOps(pctx, []TransactionOp{op})
	if errors.Is(err, ErrNotLeader) {
		return b.forwardToLeader(ctx, req)
	}
	if err != nil {
		return errorResponse(err)
	}
	if len(res) != 1 {
		return errorResponse(fmt.Errorf("%w: %d results for one transaction op", ErrUnknownOutcome, len(res)))
	}
	if res[0].Err != nil {
		b.log.Warn("committed transaction message refused by its real topic; decision recorded",
			"group", h.ProducerGroup, "halfOffset", h.TranStateTableOffset, "error", res[0].Err)
		return errorResponse(res[0].Err)
	}
	return okResponse(nil, nil)
}
