package broker

import (
	"context"
	"time"

	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

// fakeTxState is a map-based TransactionState, applied the way fsm.TransactionOps is.
type fakeTxState struct {
	decided map[store.QueueOffset]bool
	checks  map[store.QueueOffset]int32
	entries int // ApplyTransactionOps calls that reached the state
}

// fakeTxView reads a fakeReplica's state under its lock.
type fakeTxView struct{ f *fakeReplica }

func (v fakeTxView) Decided(o store.QueueOffset) (store.QueueOffset, bool) {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	if !v.f.tx.decided[o] {
		return 0, false
	}
	for v.f.tx.decided[o] {
		o++
	}
	return o, true
}

func (v fakeTxView) NextDecided(o store.QueueOffset) (store.QueueOffset, bool) {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	var best store.QueueOffset = -1
	for d := range v.f.tx.decided {
		if d >= o && (best < 0 || d < best) {
			best = d
		}
	}
	return best, best >= 0
}

func (v fakeTxView) FirstUndecided() store.QueueOffset {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	var o store.QueueOffset
	for v.f.tx.decided[o] {
		o++
	}
	return o
}

func (v fakeTxView) Checks(o store.QueueOffset) int32 {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	return v.f.tx.checks[o]
}

func (f *fakeReplica) TransactionState() TransactionState { return fakeTxView{f} }

func (f *fakeReplica) ApplyTransactionOps(_ context.Context, ops []TransactionOp) ([]TransactionOpResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status.Role != RoleLeader {
		return nil, ErrNotLeader
	}
	if f.tx.decided == nil {
		f.tx.decided, f.tx.checks = map[store.QueueOffset]bool{}, map[store.QueueOffset]int32{}
	}
	f.tx.entries++
	out := make([]TransactionOpResult, len(ops))
	for i, op := range ops {
		if op.Kind == fsm.TxExpire {
			for o := store.QueueOffset(0); o < op.HalfOffset; o++ {
				f.tx.decided[o] = true
				delete(f.tx.checks, o)
			}
			continue
		}
		if f.tx.decided[op.HalfOffset] {
			out[i].Decided = true
			continue
		}
		if op.Kind == fsm.TxCheck {
			f.tx.checks[op.HalfOffset]++
			continue
		}
		if op.Record != nil {
			f.puts++
			res, err := f.st.AppendBatch([][]byte{op.Record}, time.Now().UnixMilli())
			if err != nil {
				return nil, err
			}
			out[i].Put = PutResult{QueueID: res[0].QueueID, QueueOffset: res[0].QueueOffset, PhysicalOffset: res[0].PhysicalOffset}
		}
		f.tx.decided[op.HalfOffset] = true
		delete(f.tx.checks, op.HalfOffset)
	}
	return out, nil
}

// adminFake never leads.
func (f *adminFake) TransactionState() TransactionState { return (&fakeReplica{}).TransactionState() }

func (f *adminFake) ApplyTransactionOps(context.Context, []TransactionOp) ([]TransactionOpResult, error) {
	return nil, ErrNotLeader
}
