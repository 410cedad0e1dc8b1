package store

import (
	"bytes"
	"encoding/binary"
	"sort"
)

// The ConsumeQueue, not the record, is the authority on a message's queue offset:
// with the raft log as the CommitLog (decision 0016) QUEUEOFFSET is left 0 on disk,
// because queue offsets are assigned in Apply, after the record is written. Readers
// that hand a record to a client, or need its queue offset, take it from here.

// QueueOffsetFieldLen is the width of QUEUEOFFSET. The field sits among the fixed
// fields in front of the hosts, so it is at the same position in every record.
const QueueOffsetFieldLen = posPhysicalOffset - posQueueOffset

// SplitAtQueueOffset returns rec's bytes before and after QUEUEOFFSET, aliasing rec,
// so that a sender can put the queue offset between them without copying the record.
func SplitAtQueueOffset(rec []byte) (head, tail []byte) {
	return rec[:posQueueOffset:posQueueOffset], rec[posQueueOffset+QueueOffsetFieldLen:]
}

// PatchQueueOffset writes qo into rec's QUEUEOFFSET.
func PatchQueueOffset(rec []byte, qo QueueOffset) {
	binary.BigEndian.PutUint64(rec[posQueueOffset:], uint64(qo))
}

// withQueueOffset returns rec if its QUEUEOFFSET already is qo (a record written in
// the old layout: no copy), else a patched copy; the copy never aliases the mapping,
// so the caller may drop its reference once it has it.
func withQueueOffset(rec []byte, qo QueueOffset) (out []byte, copied bool) {
	if QueueOffsetOf(rec) == qo {
		return rec, false
	}
	out = bytes.Clone(rec)
	PatchQueueOffset(out, qo)
	return out, true
}

// QueueOffsetOf returns the queue offset of the ConsumeQueue entry of (topic, queueID)
// that points at phys; false when the queue does not exist or has no readable entry
// there (never dispatched, a dead record, or below the queue's minimum). It is a
// binary search: a ConsumeQueue is sorted by physical offset.
func (s *Store) QueueOffsetOf(topic string, queueID int32, phys PhysicalOffset) (QueueOffset, bool) {
	q := s.cq.get(topic, queueID)
	if q == nil {
		return 0, false
	}
	return q.queueOffsetOf(phys)
}

// queueOffsetOf searches in two steps, first the file, then the entry inside it, so
// that it holds a reference on each file while it reads it (retention may destroy
// the first files meanwhile) and takes one reference per file probed, not per entry.
func (q *consumeQueue) queueOffsetOf(phys PhysicalOffset) (QueueOffset, bool) {
	minQO, maxQO := q.min(), q.maxOffset()
	if minQO >= maxQO {
		return 0, false
	}
	fileSize := q.files.fileSize
	firstFile := int64(minQO) * cqEntrySize / fileSize
	lastFile := (int64(maxQO)*cqEntrySize - 1) / fileSize
	// The entry lies in the last file whose first entry points at or below phys.
	n := sort.Search(int(lastFile-firstFile+1), func(i int) bool {
		first, ok := q.firstPhys((firstFile + int64(i)) * fileSize)
		return !ok || first > phys
	})
	if n == 0 {
		return 0, false
	}
	qo, ok := q.searchFile((firstFile+int64(n-1))*fileSize, phys)
	if !ok || qo < minQO {
		return 0, false
	}
	return qo, true
}

// firstPhys is the physical offset the first entry of the file at start points at;
// pre-blank filler counts as below every message. false when the file is gone or
// holds no entry yet.
func (q *consumeQueue) firstPhys(start int64) (PhysicalOffset, bool) {
	f := q.files.find(start)
	if f == nil || !f.acquire() {
		return 0, false
	}
	defer f.release()
	if f.wrotePosition.Load() < cqEntrySize {
		return 0, false
	}
	e := readCQEntry(f.data[:cqEntrySize])
	if e.isPreBlank() {
		return -1, true
	}
	return e.phys, true
}

// searchFile binary-searches the entries of the file at start for the one that
// points at phys.
func (q *consumeQueue) searchFile(start int64, phys PhysicalOffset) (QueueOffset, bool) {
	f := q.files.find(start)
	if f == nil || !f.acquire() {
		return 0, false
	}
	defer f.release()
	n := int(f.wrotePosition.Load() / cqEntrySize)
	at := func(i int) cqEntry { return readCQEntry(f.data[i*cqEntrySize : (i+1)*cqEntrySize]) }
	i := sort.Search(n, func(i int) bool {
		e := at(i)
		return !e.isPreBlank() && e.phys >= phys
	})
	if i == n {
		return 0, false
	}
	if e := at(i); e.phys != phys || e.size <= 0 || e.isPreBlank() {
		return 0, false
	}
	return QueueOffset((f.start + int64(i)*cqEntrySize) / cqEntrySize), true
}
