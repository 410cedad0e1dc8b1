package store

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
)

// The single write (decision 0016, step 3): with Config.RaftEntryLog the CommitLog is
// also the raft log. raft's LogStore (raftlog's commitlog kind) appends every entry
// at the tail through Store.EntryLog; committed entries are then *applied* here
// instead of copied: ApplyEntry assigns queue offsets to the records an entry already
// holds and lets the reput dispatch up to the entry's end. Records keep QUEUEOFFSET
// 0 on disk; the ConsumeQueue is the authority and readers patch the field.
//
// Queue offsets: Apply assigns them from the queue offset table, in log order,
// skipping the records it refuses (dead records). The reput assigns the same ones
// independently: in log order, the next offset of each queue, skipping entry records
// and the dead records Apply named. Both are functions of the committed log and of
// Apply's decisions, so every replica agrees.

// ErrNotEntryLog is an entry-log call on a Store opened without Config.RaftEntryLog,
// or a copying call (AppendBatch, Truncate) on one opened with it.
var ErrNotEntryLog = errors.New("store: call does not match the store's raft entry log mode")

// ErrEntryNotSplit is ApplyEntry of a message entry that raft's log stored whole (a
// record was malformed or larger than a segment, so none was written as a CommitLog
// record): its messages cannot be stored, and every replica refuses them alike.
var ErrEntryNotSplit = errors.New("store: the entry's messages were not stored as records")

// entryMode is the Store's state when its CommitLog is the raft log.
type entryMode struct {
	log  *EntryLog
	dead *deadRecords
	// applyEnd is the end of the last applied entry's records. Guarded by Store.mu.
	applyEnd PhysicalOffset
	// checkpointed is the CommitLog offset of the FSM's last apply checkpoint:
	// retention keeps every segment that reaches above it, because a restart
	// replays the entries there from the log.
	checkpointed atomic.Int64
	pos          []PhysicalOffset // scratch for ApplyEntry
}

// EntryLog returns the raft log kept in the CommitLog (nil without Config.RaftEntryLog).
func (s *Store) EntryLog() *EntryLog {
	if s.entries == nil {
		return nil
	}
	return s.entries.log
}

// ApplyEntry applies committed entry index of the entry log: keep[i] says whether its
// i-th message record is stored (it takes the next offset of its queue) or refused by
// Apply (a dead record: no queue offset, never dispatched). It returns one result per
// kept record, in order, and lets the reput dispatch up to the entry's end. keep must
// have one element per record the entry holds; an entry stored whole holds none.
//
// It returns the applied end (where the entry's records end), and ErrEntryNotSplit,
// with nothing applied, when the entry holds no records but keep is not empty.
func (s *Store) ApplyEntry(index uint64, keep []bool, out []AppendResult) ([]AppendResult, PhysicalOffset, error) {
	em := s.entries
	if em == nil {
		return out, 0, ErrNotEntryLog
	}
	if s.closed.Load() {
		return out, 0, ErrClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pos, err := em.log.Positions(index, em.pos[:0])
	em.pos = pos[:0]
	if err != nil {
		return out, em.applyEnd, fmt.Errorf("store: apply entry %d: %w", index, err)
	}
	if len(pos) == 0 && len(keep) > 0 {
		return out, em.applyEnd, fmt.Errorf("store: apply entry %d: %w", index, ErrEntryNotSplit)
	}
	if len(pos) != len(keep) {
		return out, em.applyEnd, fmt.Errorf("%w: apply entry %d: it holds %d records, Apply decided on %d", ErrCorrupt, index, len(pos), len(keep))
	}
	if len(pos) == 0 {
		return out, em.applyEnd, nil
	}
	if pos[0] < em.applyEnd {
		return out, em.applyEnd, fmt.Errorf("%w: apply entry %d: first record at %d, the last applied entry ends at %d", ErrCorrupt, index, pos[0], em.applyEnd)
	}
	end := em.applyEnd
	var ts int64
	for i, p := range pos {
		rec, next, release, err := s.commitLog.recordAt(p)
		if err != nil {
			return out, em.applyEnd, fmt.Errorf("store: apply entry %d record %d: %w", index, i, err)
		}
		end = next
		if !keep[i] {
			release()
			em.dead.add(p)
			continue
		}
		v, err := viewDispatched(rec)
		if err != nil {
			release()
			return out, em.applyEnd, fmt.Errorf("store: apply entry %d record %d at %d: %w", index, i, p, err)
		}
		topic, qo := s.queueOffsets.assign(v.Topic(), v.QueueID())
		ts = v.storeTimestamp()
		out = append(out, AppendResult{
			Topic: topic, QueueID: v.QueueID(), QueueOffset: qo,
			PhysicalOffset: p, Size: int32(len(rec)), StoreTimestamp: ts,
		})
		release()
	}
	em.applyEnd = end
	if ts != 0 {
		s.lastStoreTimestamp.Store(ts)
	}
	s.dispatcher.setConfirmed(end)
	return out, end, nil
}

// RewindDispatch makes off the applied end of an entry-log store, after a restart:
// ConsumeQueue and IndexFile entries at or above off are cut (raft replays the
// entries they came from, and Apply hands them out again), and so are the dead
// records Apply named there. off must not be above what the reput dispatched before
// the restart: the ConsumeQueues are the only record of the queue offsets below it.
func (s *Store) RewindDispatch(off PhysicalOffset) error {
	em := s.entries
	if em == nil {
		return ErrNotEntryLog
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.dispatcher.dispatched(); off > d {
		return fmt.Errorf("%w: rewind dispatch to %d: the ConsumeQueues end at %d (their checkpoint is behind the apply checkpoint)", ErrCorrupt, off, d)
	}
	if err := s.dispatcher.truncate(off); err != nil {
		return fmt.Errorf("store: rewind dispatch to %d: %w", off, err)
	}
	em.dead.dropFrom(off)
	s.queueOffsets = newQueueOffsetTable(s.cq.maxOffsets())
	em.applyEnd = off
	em.checkpointed.Store(int64(off))
	s.dispatcher.setConfirmed(off)
	return nil
}

// MarkApplyCheckpoint tells an entry-log store the CommitLog offset of the FSM's
// latest durable apply checkpoint (RewindDispatch sets it too). Retention never
// deletes a segment that reaches above it: a restart replays those entries.
func (s *Store) MarkApplyCheckpoint(off PhysicalOffset) {
	if s.entries != nil {
		s.entries.checkpointed.Store(int64(off))
	}
}

// QueueNext is the next queue offset of one queue: what a snapshot carries so that
// the replica restoring it assigns the same offsets as the sender.
type QueueNext struct {
	Topic   string      `json:"topic"`
	QueueID int32       `json:"queueId"`
	Next    QueueOffset `json:"next"`
}

// EntrySnapshot is what a snapshot of an entry-log store carries besides the
// CommitLog bytes: the queue offsets are not in them.
type EntrySnapshot struct {
	// Queues is every queue's next offset at the snapshot's end.
	Queues []QueueNext `json:"queues"`
	// Dead is every dead record below the snapshot's end.
	Dead []PhysicalOffset `json:"dead,omitempty"`
}

// EntrySnapshotState captures the EntrySnapshot of the applied state. Call it with
// Apply held (the FSM's lock), so it describes one applied index.
func (s *Store) EntrySnapshotState() (EntrySnapshot, error) {
	em := s.entries
	if em == nil {
		return EntrySnapshot{}, ErrNotEntryLog
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var es EntrySnapshot
	for name, to := range s.queueOffsets.topics {
		for id, next := range to.next {
			es.Queues = append(es.Queues, QueueNext{Topic: name, QueueID: id, Next: next})
		}
	}
	slices.SortFunc(es.Queues, func(a, b QueueNext) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.QueueID - b.QueueID)
	})
	es.Dead = em.dead.below(em.applyEnd)
	return es, nil
}

// ResetFromEntries is ResetFrom for an entry-log store: the image's records carry no
// queue offsets, so es supplies them. Each queue starts at its next offset minus the
// number of its records the image holds (dead ones and entry records aside). The
// entry log is emptied, and the next entry raft appends is nextIndex (the snapshot's
// index + 1).
func (s *Store) ResetFromEntries(start PhysicalOffset, r io.Reader, es EntrySnapshot, nextIndex uint64) error {
	em := s.entries
	if em == nil {
		return ErrNotEntryLog
	}
	return s.resetFrom(start, r, tailLock{em.log}, func(cq *consumeQueues, end PhysicalOffset) error {
		if err := em.log.reset(nextIndex); err != nil {
			return err
		}
		dead := make([]PhysicalOffset, 0, len(es.Dead))
		for _, p := range es.Dead {
			if p >= start && p < end {
				dead = append(dead, p)
			}
		}
		em.dead.replace(dead)
		em.applyEnd = end
		em.checkpointed.Store(int64(end)) // the FSM checkpoints the restore at once
		return s.startQueuesAt(cq, start, end, es.Queues)
	})
}

// startQueuesAt creates the ConsumeQueue of every queue in qs at its first offset in
// the image [start, end): its next offset minus its live records there.
func (s *Store) startQueuesAt(cqs *consumeQueues, start, end PhysicalOffset, qs []QueueNext) error {
	counts := make(map[TopicQueue]QueueOffset)
	for off := start; off < end; {
		rec, next, release, err := s.commitLog.recordAt(off)
		if err != nil {
			return fmt.Errorf("count image records at %d: %w", off, err)
		}
		if _, magic, _ := RecordSize(rec); magic != MagicBlank && !s.entries.dead.has(off) {
			if v, err := viewDispatched(rec); err == nil && string(v.Topic()) != RaftEntryTopic {
				counts[TopicQueue{string(v.Topic()), v.QueueID()}]++
			}
		}
		release()
		off = next
	}
	for _, q := range qs {
		first := q.Next - counts[TopicQueue{q.Topic, q.QueueID}]
		if first < 0 {
			return fmt.Errorf("%w: snapshot says queue %s/%d ends at %d, the image holds %d of its records", ErrCorrupt, q.Topic, q.QueueID, q.Next, q.Next-first)
		}
		cq, err := cqs.getOrCreate(q.Topic, q.QueueID)
		if err != nil {
			return err
		}
		if err := cq.startAt(first); err != nil {
			return err
		}
	}
	return nil
}
