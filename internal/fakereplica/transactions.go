package fakereplica

import (
	"context"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

// txState is a map-based TransactionState, applied the way fsm.TransactionOps is.
type txState struct {
	decided map[store.QueueOffset]bool
	checks  map[store.QueueOffset]int32
}

// txView reads a Replica's state under its lock.
type txView struct{ f *Replica }

func (v txView) Decided(o store.QueueOffset) (store.QueueOffset, bool) {
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

func (v txView) NextDecided(o store.QueueOffset) (store.QueueOffset, bool) {
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

func (v txView) FirstUndecided() store.QueueOffset {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	var o store.QueueOffset
	for v.f.tx.decided[o] {
		o++
	}
	return o
}

func (v txView) Checks(o store.QueueOffset) int32 {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	return v.f.tx.checks[o]
}

func (f *Replica) TransactionState() replica.TransactionState { return txView{f} }

func (f *Replica) ApplyTransactionOps(_ context.Context, ops []replica.TransactionOp) ([]replica.TransactionOpResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.leading(); err != nil {
		return nil, err
	}
	if f.tx.decided == nil {
		f.tx.decided, f.tx.checks = map[store.QueueOffset]bool{}, map[store.QueueOffset]int32{}
	}
	out := make([]replica.TransactionOpResult, len(ops))
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
			if f.st == nil {
				return nil, errNoStore
			}
			f.puts++
			res, err := f.st.AppendBatch([][]byte{op.Record}, f.Now().UnixMilli())
			if err != nil {
				return nil, err
			}
			out[i].Put = fsm.MessageResult{AppendResult: res[0]}
		}
		f.tx.decided[op.HalfOffset] = true
		delete(f.tx.checks, op.HalfOffset)
	}
	return out, nil
}
