package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rocketraft/rocketraft/fsm"
)

// TransactionState returns a live view of the replicated transaction decisions.
func (r *nodeReplica) TransactionState() TransactionState {
	return r.meta.Transactions()
}

// ApplyTransactionOps replicates the ops and their records as one
// fsm.TransactionOps entry.
func (r *nodeReplica) ApplyTransactionOps(ctx context.Context, ops []TransactionOp) ([]TransactionOpResult, error) {
	cmd := &fsm.TransactionOps{
		Ops: make([]fsm.TransactionOp, len(ops)),
		// The store host is already encoded in every record (zero host: keep it);
		// the store timestamp is this leader's clock, like every PutMessages entry.
		Put: fsm.PutMessages{StoreTimestamp: time.Now().UnixMilli()},
	}
	for i, op := range ops {
		cmd.Ops[i] = fsm.TransactionOp{Kind: op.Kind, HalfOffset: op.HalfOffset, Record: fsm.NoRecord}
		if op.Record != nil {
			cmd.Ops[i].Record = int32(len(cmd.Put.Messages))
			cmd.Put.Messages = append(cmd.Put.Messages, op.Record)
		}
	}
	resp, err := r.n.Apply(ctx, cmd)
	if err != nil {
		return nil, mapNodeError(err)
	}
	res, ok := resp.(*fsm.TransactionResult)
	if !ok {
		return nil, fmt.Errorf("%w: TransactionOps answered %T", ErrUnknownOutcome, resp)
	}
	if res.Err != nil {
		return nil, res.Err
	}
	out := make([]TransactionOpResult, len(res.Ops))
	for i, o := range res.Ops {
		switch {
		case errors.Is(o.Err, fsm.ErrTransactionDecided):
			out[i].Decided = true
		case o.Err != nil:
			out[i].Err = o.Err
		case o.Message.Err != nil:
			out[i].Err = o.Message.Err
		default:
			m := o.Message
			out[i].Put = PutResult{QueueID: m.QueueID, QueueOffset: m.QueueOffset, PhysicalOffset: m.PhysicalOffset, OffsetMsgID: m.OffsetMsgID}
		}
	}
	return out, nil
}
