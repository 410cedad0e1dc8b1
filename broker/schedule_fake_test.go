package broker

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

// ScheduleProgress and DeliverScheduled make fakeReplica a Replica: the advances
// are a compare-and-set on its progress map, as fsm.DeliverScheduled applies them.
func (f *fakeReplica) ScheduleProgress() map[int32]store.QueueOffset {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.schedule)
}

func (f *fakeReplica) DeliverScheduled(_ context.Context, recs [][]byte, advances []ScheduleAdvance) ([]error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status.Role != RoleLeader {
		return nil, ErrNotLeader
	}
	if f.schedule == nil {
		f.schedule = map[int32]store.QueueOffset{}
	}
	for _, a := range advances {
		if f.schedule[int32(a.Level)] != a.From {
			return nil, fmt.Errorf("%w: level %d at %d, want %d", ErrScheduleConflict, a.Level, f.schedule[int32(a.Level)], a.From)
		}
	}
	f.puts++
	if len(recs) > 0 {
		if _, err := f.st.AppendBatch(recs, time.Now().UnixMilli()); err != nil {
			return nil, err
		}
	}
	for _, a := range advances {
		f.schedule[int32(a.Level)] = a.To
	}
	return make([]error, len(recs)), nil
}

// adminFake never leads, so it never delivers.
func (f *adminFake) ScheduleProgress() map[int32]store.QueueOffset { return nil }

func (f *adminFake) DeliverScheduled(context.Context, [][]byte, []ScheduleAdvance) ([]error, error) {
	return nil, ErrNotLeader
}

// putCount reads puts under the lock (handlers write it on server goroutines).
func (f *fakeReplica) putCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.puts
}
