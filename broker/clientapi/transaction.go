package clientapi

import (
	"context"
	"fmt"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/broker/transaction"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

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

func parseEndTransactionHeader(req *transport.Command) (EndTransactionHeader, error) {
	e := route.FieldsOf(req)
	h := EndTransactionHeader{
		ProducerGroup:        e.Str("producerGroup", true),
		TranStateTableOffset: store.QueueOffset(e.Int64("tranStateTableOffset", true, 0)),
		CommitLogOffset:      store.PhysicalOffset(e.Int64("commitLogOffset", true, 0)),
		CommitOrRollback:     e.Int32("commitOrRollback", true, 0),
		FromTransactionCheck: e.Bool("fromTransactionCheck", false),
		MsgID:                e.Str("msgId", false),
		TransactionID:        e.Str("transactionId", false),
	}
	if e.Err == nil {
		switch {
		case h.TranStateTableOffset < 0:
			e.Fail("tranStateTableOffset", req.Field("tranStateTableOffset"), "must not be negative")
		case h.CommitLogOffset < 0:
			e.Fail("commitLogOffset", req.Field("commitLogOffset"), "must not be negative")
		case h.CommitOrRollback != transaction.NotType && h.CommitOrRollback != transaction.CommitType &&
			h.CommitOrRollback != transaction.RollbackType:
			e.Fail("commitOrRollback", req.Field("commitOrRollback"), "must be 0, 8 or 12")
		}
	}
	return h, e.Err
}

// handleEndTransaction serves END_TRANSACTION (37) on the leader: commit re-puts
// the half message into its real topic and records the decision in the same
// raft entry; rollback records the decision only; unknown (0) is ignored and
// left to the check-back. A decision for a half message already decided is
// answered SUCCESS and stores nothing.
func (a *API) handleEndTransaction(ctx context.Context, req *route.Request) (*transport.Command, error) {
	h, err := parseEndTransactionHeader(req.Command)
	if err != nil {
		return nil, err
	}
	log := a.d.Logger
	if h.CommitOrRollback == transaction.NotType {
		log.Debug("END_TRANSACTION with unknown state; the check-back will ask again",
			"group", h.ProducerGroup, "halfOffset", h.TranStateTableOffset, "msgId", h.MsgID, "remark", req.Remark)
		return nil, nil
	}
	if _, done := a.d.Replica.TransactionState().Decided(h.TranStateTableOffset); done {
		return route.OK(nil, nil), nil
	}
	hm, err := transaction.ReadHalf(a.d.Store, h.CommitLogOffset, h.TranStateTableOffset, h.ProducerGroup)
	if err != nil {
		log.Warn("END_TRANSACTION refused", "group", h.ProducerGroup, "msgId", h.MsgID, "error", err)
		return nil, err
	}
	op := replica.TransactionOp{Kind: fsm.TxRollback, HalfOffset: h.TranStateTableOffset}
	if h.CommitOrRollback == transaction.CommitType {
		op.Kind = fsm.TxCommit
		if op.Record, err = transaction.CommitRecord(hm, a.d.StoreHost); err != nil {
			return nil, err
		}
	}
	pctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	res, err := a.d.Replica.ApplyTransactionOps(pctx, []replica.TransactionOp{op})
	if err != nil {
		return nil, err
	}
	if len(res) != 1 {
		return nil, fmt.Errorf("%w: %d results for one transaction op", replica.ErrUnknownOutcome, len(res))
	}
	if res[0].Err != nil {
		log.Warn("committed transaction message refused by its real topic; decision recorded",
			"group", h.ProducerGroup, "halfOffset", h.TranStateTableOffset, "error", res[0].Err)
		return nil, res[0].Err
	}
	return route.OK(nil, nil), nil
}
