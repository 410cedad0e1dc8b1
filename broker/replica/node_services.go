package replica

import (
	"context"
	"errors"
	"fmt"

	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

// ScheduleProgress returns each delay level's delivered offset in SCHEDULE_TOPIC_XXXX.
func (r *nodeReplica) ScheduleProgress() map[int32]store.QueueOffset {
	return r.meta.ScheduleProgress()
}

// DeliverScheduled replicates the re-puts and the advances as one
// fsm.DeliverScheduled entry. dropped[i] is set for a message the FSM refused on
// its own (its level still advanced past it).
func (r *nodeReplica) DeliverScheduled(ctx context.Context, recs [][]byte, advances []fsm.ScheduleAdvance) ([]error, error) {
	// The store host is already encoded in every record (zero host: keep it); the
	// store timestamp is the leader's clock, like every PutMessages entry.
	cmd := &fsm.DeliverScheduled{
		Advances: advances,
		Put:      fsm.PutMessages{StoreTimestamp: r.Now().UnixMilli(), Messages: recs},
	}
	resp, err := r.n.Apply(ctx, cmd)
	if err != nil {
		return nil, mapNodeError(err)
	}
	res, ok := resp.(*fsm.PutResult)
	if !ok {
		return nil, fmt.Errorf("%w: DeliverScheduled answered %T", ErrUnknownOutcome, resp)
	}
	if res.Err != nil {
		return nil, res.Err
	}
	dropped := make([]error, len(res.Results))
	for i, m := range res.Results {
		dropped[i] = m.Err
	}
	return dropped, nil
}

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
		// the store timestamp is the leader's clock, like every PutMessages entry.
		Put: fsm.PutMessages{StoreTimestamp: r.Now().UnixMilli()},
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
			out[i].Put = o.Message
		}
	}
	return out, nil
}

// EnsureTopic creates topic t through raft unless a topic of that name with at
// least t's queue counts exists; created says whether it proposed the change
// (the caller then re-registers with the nameservers).
func EnsureTopic(ctx context.Context, m Metadata, t fsm.TopicConfig) (created bool, err error) {
	if cur, ok := m.Topic(t.Name); ok && cur.WriteQueueNums >= t.WriteQueueNums && cur.ReadQueueNums >= t.ReadQueueNums {
		return false, nil
	}
	if err := m.UpsertTopic(ctx, t); err != nil {
		return false, fmt.Errorf("create topic %s: %w", t.Name, err)
	}
	return true, nil
}
