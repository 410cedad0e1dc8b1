package fsm

import (
	"cmp"
	"slices"
	"sort"

	"github.com/rocketraft/rocketraft/store"
)

// QueueRange is the half-open range [From, To) of queue offsets.
type QueueRange struct {
	From store.QueueOffset `json:"from"`
	To   store.QueueOffset `json:"to"`
}

// TransactionCheckCount is how many check-backs one undecided half message has had.
type TransactionCheckCount struct {
	HalfOffset store.QueueOffset `json:"halfOffset"`
	Checks     int32             `json:"checks"`
}

// txState is the replicated transaction bookkeeping over the half queue
// (RMQ_SYS_TRANS_HALF_TOPIC queue 0), keyed by half queue offset. It plays the part
// of Java's op queue (RMQ_SYS_TRANS_OP_HALF_TOPIC) and of the check counter Java
// keeps in a property of re-put half messages.
//
// Decided offsets are kept as ranges because decisions arrive almost in half-queue
// order: a busy group with one long-undecided half message holds a handful of
// ranges, not one entry per committed message. It lives inside Metadata and is
// guarded by Metadata.mu.
type txState struct {
	// Invariant: sorted by From, disjoint and non-adjacent (touching ranges are
	// merged), every range non-empty.
	decided []QueueRange
	// Invariant: no key lies in a decided range; every value is > 0.
	checks map[store.QueueOffset]int32
}

func newTxState() *txState {
	return &txState{checks: map[store.QueueOffset]int32{}}
}

// find returns the index of the first range whose To is above o.
func (s *txState) find(o store.QueueOffset) int {
	return sort.Search(len(s.decided), func(i int) bool { return s.decided[i].To > o })
}

// isDecided reports whether o is decided and, if so, the end of its decided run.
func (s *txState) isDecided(o store.QueueOffset) (store.QueueOffset, bool) {
	i := s.find(o)
	if i < len(s.decided) && s.decided[i].From <= o {
		return s.decided[i].To, true
	}
	return 0, false
}

// nextDecided returns the start of the first decided range above o.
func (s *txState) nextDecided(o store.QueueOffset) (store.QueueOffset, bool) {
	i := s.find(o)
	if i < len(s.decided) {
		return max(s.decided[i].From, o), true
	}
	return 0, false
}

// firstUndecided is the lowest offset not decided (half queue offsets start at 0).
func (s *txState) firstUndecided() store.QueueOffset {
	if len(s.decided) > 0 && s.decided[0].From == 0 {
		return s.decided[0].To
	}
	return 0
}

// decide marks [from, to) decided, merging ranges, and drops their check counts.
func (s *txState) decide(from, to store.QueueOffset) {
	if to <= from {
		return
	}
	// Ranges that overlap or touch [from, to) are [lo, hi).
	lo := sort.Search(len(s.decided), func(i int) bool { return s.decided[i].To >= from })
	hi := lo
	for hi < len(s.decided) && s.decided[hi].From <= to {
		hi++
	}
	if lo < hi {
		from = min(from, s.decided[lo].From)
		to = max(to, s.decided[hi-1].To)
	}
	s.decided = slices.Replace(s.decided, lo, hi, QueueRange{From: from, To: to})
	if to-from == 1 {
		delete(s.checks, from)
		return
	}
	for o := range s.checks {
		if o >= from && o < to {
			delete(s.checks, o)
		}
	}
}

// transactionImage is txState in checkpoints and snapshots (sorted, so equal states
// serialize to equal bytes).
type transactionImage struct {
	Decided []QueueRange            `json:"decided"`
	Checks  []TransactionCheckCount `json:"checks"`
}

// image returns nil for an empty state, so metadata images of groups that never
// used transactions are unchanged byte for byte.
func (s *txState) image() *transactionImage {
	if len(s.decided) == 0 && len(s.checks) == 0 {
		return nil
	}
	img := &transactionImage{Decided: slices.Clone(s.decided), Checks: make([]TransactionCheckCount, 0, len(s.checks))}
	for o, n := range s.checks {
		img.Checks = append(img.Checks, TransactionCheckCount{HalfOffset: o, Checks: n})
	}
	slices.SortFunc(img.Checks, func(a, b TransactionCheckCount) int { return cmp.Compare(a.HalfOffset, b.HalfOffset) })
	return img
}

func txStateFromImage(img *transactionImage) *txState {
	s := newTxState()
	if img == nil {
		return s
	}
	for _, r := range img.Decided {
		s.decide(r.From, r.To)
	}
	for _, c := range img.Checks {
		if _, done := s.isDecided(c.HalfOffset); !done && c.Checks > 0 {
			s.checks[c.HalfOffset] = c.Checks
		}
	}
	return s
}

// TransactionView reads the replicated transaction state; every call takes the
// metadata read lock, so a view is safe on any goroutine and always current.
type TransactionView struct{ m *Metadata }

// Transactions returns a live view of the transaction state.
func (m *Metadata) Transactions() TransactionView { return TransactionView{m: m} }

// Decided reports whether the half message at o is decided (committed, rolled back,
// discarded after the check limit, or expired) and, if so, the first offset after
// its decided run.
func (v TransactionView) Decided(o store.QueueOffset) (next store.QueueOffset, ok bool) {
	v.m.mu.RLock()
	defer v.m.mu.RUnlock()
	return v.m.trans.isDecided(o)
}

// NextDecided returns the first decided offset ≥ o, if any.
func (v TransactionView) NextDecided(o store.QueueOffset) (store.QueueOffset, bool) {
	v.m.mu.RLock()
	defer v.m.mu.RUnlock()
	return v.m.trans.nextDecided(o)
}

// FirstUndecided returns the lowest half offset not decided yet.
func (v TransactionView) FirstUndecided() store.QueueOffset {
	v.m.mu.RLock()
	defer v.m.mu.RUnlock()
	return v.m.trans.firstUndecided()
}

// Checks returns how many check-backs the undecided half message at o has had.
func (v TransactionView) Checks(o store.QueueOffset) int32 {
	v.m.mu.RLock()
	defer v.m.mu.RUnlock()
	return v.m.trans.checks[o]
}

// DecidedRanges returns a copy of the decided ranges (tests, admin).
func (v TransactionView) DecidedRanges() []QueueRange {
	v.m.mu.RLock()
	defer v.m.mu.RUnlock()
	return slices.Clone(v.m.trans.decided)
}
