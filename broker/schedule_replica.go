package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

// ScheduleProgress returns each delay level's delivered offset in SCHEDULE_TOPIC_XXXX.
func (r *nodeReplica) ScheduleProgress() map[int32]store.QueueOffset {
	return r.meta.ScheduleProgress()
}

// DeliverScheduled replicates the re-puts and the advances as one
// fsm.DeliverScheduled entry. dropped[i] is set for a message the FSM refused on its
// own (its level still advanced past it).
func (r *nodeReplica) DeliverScheduled(ctx context.Context, recs [][]byte, advances []ScheduleAdvance) ([]error, error) {
	// The store host is already encoded in every record (zero host: keep it); the
	// store timestamp is this leader's clock, like every PutMessages entry.
	cmd := &fsm.DeliverScheduled{
		Advances: fsmAdvances(advances),
		Put:      fsm.PutMessages{StoreTimestamp: time.Now().UnixMilli(), Messages: recs},
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
		if errors.Is(res.Err, fsm.ErrScheduleConflict) {
			return nil, fmt.Errorf("%w: %w", ErrScheduleConflict, res.Err)
		}
		return nil, res.Err
	}
	dropped := make([]error, len(res.Results))
	for i, m := range res.Results {
		dropped[i] = m.Err
	}
	return dropped, nil
}
