package fsm

import (
	"errors"
	"fmt"

	"github.com/rocketraft/rocketraft/store"
)

// Apply without the copy (decision 0016, step 3). With Config.EntryLog the raft log
// is the CommitLog: raft's log store wrote each message of a command as a CommitLog
// record behind the entry's entry record, before the entry was committed. Apply then
// decides, as it always has, which messages are stored, and hands that decision to
// the store (EntryStore.ApplyEntry), which assigns their queue offsets. A refused
// message stays in the CommitLog as a dead record: no queue offset, no ConsumeQueue
// entry, never served. Every replica decides the same, from the same committed log.

// applyPutEntry is applyPut's store step for an EntryStore: f.recs and f.slots hold
// the messages Apply accepted. The results are filled in, and a store failure is
// fatal (the entry is committed: a replica that cannot apply it must stop).
func (f *FSM) applyPutEntry(index uint64, c *PutMessages, res *PutResult, recIdx []int, nrec int) *PutResult {
	keep := f.keepFor(nrec)
	for _, s := range f.slots {
		r := s
		if recIdx != nil {
			r = recIdx[s]
		}
		keep[r] = true
	}
	if recIdx != nil {
		// The store answers in record order; the messages may come in another
		// (a transaction's ops name records in op order).
		sortByRecord(f.recs, f.slots, recIdx)
	}
	out, end, err := f.es.ApplyEntry(index, keep, nil)
	f.entryDone = true
	if errors.Is(err, store.ErrEntryNotSplit) {
		// The log stored the entry whole: some record was malformed or too large
		// for a segment, so none is in the CommitLog. Every replica refuses all.
		err = fmt.Errorf("%w: raft index %d: %w", store.ErrMessageIllegal, index, err)
		for i := range res.Results {
			if res.Results[i].Err == nil {
				res.Results[i].Err = err
			}
		}
		res.Err = err
		return res
	}
	if err != nil {
		panic(fmt.Sprintf("fsm: raft index %d: applying %d messages from the raft log failed: %v; "+
			"stopping: this replica cannot apply a committed entry", index, len(f.recs), err))
	}
	if len(out) != len(f.recs) {
		panic(fmt.Sprintf("fsm: raft index %d: store applied %d results for %d messages (broken store invariant)", index, len(out), len(f.recs)))
	}
	f.fillResults(c, res, out)
	f.clOffset = end
	return res
}

// keepFor returns the scratch keep slice for nrec records, all false.
func (f *FSM) keepFor(nrec int) []bool {
	if cap(f.keep) < nrec {
		f.keep = make([]bool, nrec)
	}
	f.keep = f.keep[:nrec]
	clear(f.keep)
	return f.keep
}

// applyEntryLeft runs after every command of an EntryStore FSM: an entry that
// carries records and was not handed to the store (a schedule conflict, every
// transaction op a duplicate) is applied with all of them dead, so the reput passes
// over them and the next entry's records follow on.
func (f *FSM) applyEntryLeft(index uint64, cmd Command) {
	if f.entryDone || f.stopped {
		return
	}
	var nrec int
	switch c := cmd.(type) {
	case *PutMessages:
		nrec = len(c.Messages)
	case *DeliverScheduled:
		nrec = len(c.Put.Messages)
	case *TransactionOps:
		nrec = len(c.Put.Messages)
	}
	if nrec == 0 {
		return
	}
	_, end, err := f.es.ApplyEntry(index, f.keepFor(nrec), nil)
	f.entryDone = true
	if errors.Is(err, store.ErrEntryNotSplit) {
		return // nothing of it is in the CommitLog
	}
	if err != nil {
		panic(fmt.Sprintf("fsm: raft index %d: marking %d refused messages dead failed: %v; "+
			"stopping: this replica cannot apply a committed entry", index, nrec, err))
	}
	f.clOffset = end
}

// sortByRecord orders recs and slots (parallel) by the record index of each slot.
func sortByRecord(recs [][]byte, slots []int, recIdx []int) {
	for i := 1; i < len(slots); i++ { // few ops per entry: insertion sort
		for j := i; j > 0 && recIdx[slots[j]] < recIdx[slots[j-1]]; j-- {
			slots[j], slots[j-1] = slots[j-1], slots[j]
			recs[j], recs[j-1] = recs[j-1], recs[j]
		}
	}
}
