package transaction

import (
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// scanner turns the half queue and the replicated decisions into one batch of
// ops at a time; it reads only (the Checker records and sends).
type scanner struct {
	cfg Config
	st  Reader
	log hclog.Logger
}

// pendingCheck is a check-back to send once its TxCheck op is recorded.
type pendingCheck struct {
	op    int // index in the batch's ops
	group string
	req   *transport.Command
}

// scan collects up to MaxOps ops from off; more says the batch is full.
func (s *scanner) scan(state replica.TransactionState, off store.QueueOffset, now time.Time) (ops []replica.TransactionOp, checks []pendingCheck, next store.QueueOffset, more bool, err error) {
	for {
		room := s.cfg.MaxOps - len(ops)
		if room <= 0 {
			return ops, checks, off, true, nil
		}
		if end, ok := state.Decided(off); ok {
			off = end
			continue
		}
		if nd, ok := state.NextDecided(off); ok && int64(nd-off) < int64(room) {
			room = int(nd - off)
		}
		res, err := s.st.GetMessages(HalfTopic, 0, off, room, 4<<20, nil)
		if err != nil {
			return nil, nil, off, false, fmt.Errorf("read %s at %d: %w", HalfTopic, off, err)
		}
		switch res.Status {
		case store.Found:
		case store.OffsetTooSmall:
			// Retention removed half messages nobody decided: record that, so the
			// state stays bounded and a new leader does not look for them.
			if res.NextBeginOffset <= off {
				return ops, checks, off, false, nil
			}
			ops = append(ops, replica.TransactionOp{Kind: fsm.TxExpire, HalfOffset: res.NextBeginOffset})
			off = res.NextBeginOffset
			continue
		case store.OffsetFoundNull, store.NoMatchedMessage:
			if res.NextBeginOffset <= off {
				return ops, checks, off, false, nil
			}
			off = res.NextBeginOffset
			continue
		default:
			// Nothing beyond off yet.
			return ops, checks, off, false, nil
		}
		for i, raw := range res.Messages {
			qo := res.QueueOffsets[i]
			if _, ok := state.Decided(qo); ok {
				off = qo + 1
				continue
			}
			if now.UnixMilli()-store.StoreTimestampOf(raw) < s.cfg.Timeout.Milliseconds() {
				// Too young to ask about, but no reason to stop: store order is
				// time order only while the leader's clock never steps back.
				// After a backward step the messages stored later carry older
				// stamps, and stopping here held every check-back until the
				// clock caught up (chaos C4). The undecided tail is short (a
				// Timeout's worth of transactions), so scanning it is cheap.
				off = qo + 1
				continue
			}
			h, err := DecodeHalf(raw)
			if err != nil {
				s.log.Warn("undecodable half message; discarding it", "halfOffset", qo, "error", err)
				ops = append(ops, replica.TransactionOp{Kind: fsm.TxDiscard, HalfOffset: qo})
				off = qo + 1
				continue
			}
			if state.Checks(qo) >= s.cfg.CheckMax {
				rec, err := CheckMaxRecord(h, s.cfg.StoreHost)
				if err != nil {
					s.log.Warn("half message cannot be copied to the check-max topic; discarding it", "halfOffset", qo, "error", err)
				}
				ops = append(ops, replica.TransactionOp{Kind: fsm.TxDiscard, HalfOffset: qo, Record: rec})
			} else {
				req, err := checkRequest(h, qo, s.cfg.BrokerName)
				if err != nil {
					s.log.Warn("half message has no real topic; discarding it", "halfOffset", qo, "error", err)
					ops = append(ops, replica.TransactionOp{Kind: fsm.TxDiscard, HalfOffset: qo})
				} else {
					checks = append(checks, pendingCheck{op: len(ops), group: h.Props[store.PropertyProducerGroup], req: req})
					ops = append(ops, replica.TransactionOp{Kind: fsm.TxCheck, HalfOffset: qo})
				}
			}
			off = qo + 1
		}
		if res.NextBeginOffset > off {
			off = res.NextBeginOffset
		}
		res.Release()
	}
}

// checkRequest builds CHECK_TRANSACTION_STATE for the half message at qo: the
// header Java sends and the message in the stored layout with its real topic and
// queue (Java Broker2Client.checkProducerTransactionState).
func checkRequest(h Half, qo store.QueueOffset, brokerName string) (*transport.Command, error) {
	topic, qid, err := h.RealTopicQueue()
	if err != nil {
		return nil, err
	}
	m := h.Msg
	m.Topic, m.QueueID = topic, qid
	// The half queue offset is the ConsumeQueue's, not the record's: an entry-log
	// CommitLog leaves QUEUEOFFSET 0 on disk (decision 0016).
	m.QueueOffset = qo
	body, err := store.AppendMessage(nil, &m)
	if err != nil {
		return nil, err
	}
	uniq := h.Props[store.PropertyUniqKey]
	ext := map[string]string{
		"tranStateTableOffset": strconv.FormatInt(int64(qo), 10),
		"commitLogOffset":      strconv.FormatInt(int64(m.PhysicalOffset), 10),
		"msgId":                uniq,
		"transactionId":        uniq,
		"offsetMsgId":          store.OffsetMsgID(m.StoreHost, m.PhysicalOffset),
		"topic":                topic,
		"bname":                brokerName,
	}
	return transport.NewRequest(transport.CheckTransactionState, ext, body), nil
}
