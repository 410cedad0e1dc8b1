package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
	"unsafe"
)

// mappedRecord is the CommitLog's own bytes of the record at off (the mapping, so
// that a test can write QUEUEOFFSET the way the entry-log layout leaves it on disk).
func mappedRecord(t testing.TB, s *Store, off PhysicalOffset, size int32) []byte {
	t.Helper()
	f := s.commitLog.mfq.find(int64(off))
	if f == nil {
		t.Fatalf("no segment holds %d", off)
	}
	rel := int64(off) - f.start
	return f.data[rel : rel+int64(size)]
}

func sameBacking(a, b []byte) bool { return unsafe.SliceData(a) == unsafe.SliceData(b) }

// TestReadsTakeQueueOffsetFromConsumeQueue: with QUEUEOFFSET zeroed in the CommitLog
// (what the entry-log layout writes), QueueOffsetOf and ReadMessageAt still give every
// message its ConsumeQueue offset: ReadMessageAt as a patched copy, and as the mapped
// bytes themselves while the record already holds the right value.
func TestReadsTakeQueueOffsetFromConsumeQueue(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.ConsumeQueueEntriesPerFile = 4 // several ConsumeQueue files per queue
	s := openTest(t, cfg)
	defer s.Close()
	var recs [][]byte
	for i := range 40 {
		rec, _ := e2eRecord(t, []string{"orders", "payments"}[i%2], int32(i%3), i)
		recs = append(recs, rec)
	}
	res := mustAppend(t, s, recs, 1700000001000)
	if err := s.WaitDispatched(context.Background(), s.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}

	// The old layout: the field already holds the ConsumeQueue's value, no copy.
	for _, r := range res {
		b, release, err := s.ReadMessageAt(r.PhysicalOffset)
		if err != nil {
			t.Fatal(err)
		}
		if !sameBacking(b, mappedRecord(t, s, r.PhysicalOffset, r.Size)) || QueueOffsetOf(b) != r.QueueOffset {
			t.Fatalf("record at %d: copied or queue offset %d, want the mapping with %d", r.PhysicalOffset, QueueOffsetOf(b), r.QueueOffset)
		}
		release()
	}

	for _, r := range res {
		PatchQueueOffset(mappedRecord(t, s, r.PhysicalOffset, r.Size), 0)
	}
	for _, r := range res {
		if qo, ok := s.QueueOffsetOf(r.Topic, r.QueueID, r.PhysicalOffset); !ok || qo != r.QueueOffset {
			t.Fatalf("QueueOffsetOf(%s, %d, %d) = %d %v, want %d", r.Topic, r.QueueID, r.PhysicalOffset, qo, ok, r.QueueOffset)
		}
		mapped := mappedRecord(t, s, r.PhysicalOffset, r.Size)
		b, release, err := s.ReadMessageAt(r.PhysicalOffset)
		if err != nil {
			t.Fatal(err)
		}
		m, err := DecodeMessage(b, true)
		if err != nil || m.QueueOffset != r.QueueOffset || m.PhysicalOffset != r.PhysicalOffset {
			t.Fatalf("record at %d decodes to queue offset %d (%v), want %d", r.PhysicalOffset, m.QueueOffset, err, r.QueueOffset)
		}
		// Queue offset 0 is what the record holds: still the mapping. Any other is
		// a copy, equal to the record but for the field, and the mapping untouched.
		if copied := !sameBacking(b, mapped); copied != (r.QueueOffset != 0) {
			t.Fatalf("record at %d (queue offset %d): copied=%v", r.PhysicalOffset, r.QueueOffset, copied)
		}
		head, tail := SplitAtQueueOffset(b)
		mHead, mTail := SplitAtQueueOffset(mapped)
		if !bytes.Equal(head, mHead) || !bytes.Equal(tail, mTail) || QueueOffsetOf(mapped) != 0 {
			t.Fatalf("record at %d: copy differs beyond QUEUEOFFSET, or the mapping was patched", r.PhysicalOffset)
		}
		release()
	}
}

// TestReadMessageAtRefusesRecordsInNoQueue: a record below the dispatched offset
// that no ConsumeQueue entry points at (a dead record) is not served; a record not
// dispatched yet is waited for, and refused only if the reput does not reach it.
func TestReadMessageAtRefusesRecordsInNoQueue(t *testing.T) {
	src := newFakeLog(1 << 20)
	s := openDQ(t, t.TempDir(), src, defaultOpts())
	offs := fillQueue(t, src, "T", 0, 6, constTag("A"), tsStep)
	syncDispatch(t, s, src)

	// Dead: the entry of queue offset 4 (and 5) gone, the record still stored.
	if err := s.cq.get("T", 0).truncateQueueOffset(4); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ReadMessageAt(offs[4]); !errors.Is(err, ErrNoMessage) || !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("dead record: err %v, want ErrNoMessage (an ErrOffsetOutOfRange)", err)
	}
	if _, release, err := s.ReadMessageAt(offs[3]); err != nil {
		t.Fatalf("live record next to a dead one: %v", err)
	} else {
		release()
	}

	// Not dispatched yet: refused after the wait when the reput stays behind...
	defer func(w time.Duration) { readDispatchWait = w }(readDispatchWait)
	readDispatchWait = 20 * time.Millisecond
	late, _ := src.append(t, testMsg{topic: "U", queue: 1, body: "late", ts: 1})
	if _, _, err := s.ReadMessageAt(late); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("undispatched record: err %v, want ErrNoMessage", err)
	}
	// ...and served once it catches up within the wait.
	readDispatchWait = 10 * time.Second
	go func() {
		time.Sleep(20 * time.Millisecond)
		s.dispatcher.mu.Lock()
		defer s.dispatcher.mu.Unlock()
		_ = s.dispatcher.dispatchTo(src.maxOffset(), dispatchLive)
	}()
	b, release, err := s.ReadMessageAt(late)
	if err != nil {
		t.Fatalf("record dispatched during the wait: %v", err)
	}
	if m, err := DecodeMessage(b, true); err != nil || m.Topic != "U" || string(m.Body) != "late" || m.QueueOffset != 0 {
		t.Fatalf("late record: %+v %v", m, err)
	}
	release()
}

// openTestQueue is one ConsumeQueue of entriesPerFile entries per file, on its own.
func openTestQueue(t testing.TB, entriesPerFile int) *consumeQueue {
	t.Helper()
	cqs, err := newConsumeQueues(filepath.Join(t.TempDir(), "consumequeue"), entriesPerFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cqs.close)
	q, err := cqs.getOrCreate("T", 0)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestQueueOffsetOfBinarySearch: every entry is found across ConsumeQueue files,
// first and last included; offsets that are no entry's, pre-blank filler, entries
// below the queue's minimum and empty or absent queues are not.
func TestQueueOffsetOfBinarySearch(t *testing.T) {
	const perFile = 4
	q := openTestQueue(t, perFile)
	if _, ok := q.queueOffsetOf(0); ok {
		t.Fatal("empty queue: found an entry")
	}
	// A queue rebuilt after retention starts at queue offset 6: 4 and 5 are pre-blank
	// filler (phys 0) in the second file; entries 6..17 point at 1000, 1100, ...
	const first, last = 6, 17
	phys := func(qo int) PhysicalOffset { return PhysicalOffset(1000 + 100*(qo-first)) }
	for qo := first; qo <= last; qo++ {
		if err := q.put(QueueOffset(qo), cqEntry{phys: phys(qo), size: 90, tagsCode: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(q.files.snapshot()); n != 4 {
		t.Fatalf("%d ConsumeQueue files, want 4", n)
	}
	for qo := first; qo <= last; qo++ {
		if got, ok := q.queueOffsetOf(phys(qo)); !ok || got != QueueOffset(qo) {
			t.Fatalf("phys %d: %d %v, want %d", phys(qo), got, ok, qo)
		}
	}
	for _, p := range []PhysicalOffset{0, 1, 999, 1050, phys(9) + 1, phys(last) - 1, phys(last) + 1, phys(last) + 100} {
		if got, ok := q.queueOffsetOf(p); ok {
			t.Fatalf("phys %d: found queue offset %d, want none", p, got)
		}
	}

	// Entries below the minimum are gone for readers, whatever the files still hold.
	q.minOffset.Store(9)
	if _, ok := q.queueOffsetOf(phys(8)); ok {
		t.Fatal("entry below the minimum offset found")
	}
	if got, ok := q.queueOffsetOf(phys(9)); !ok || got != 9 {
		t.Fatalf("entry at the minimum offset: %d %v", got, ok)
	}
	// Retention destroyed the first file (pre-blank 4, 5 and entries 6, 7).
	if err := q.files.deleteFirstFiles(1); err != nil {
		t.Fatal(err)
	}
	q.minOffset.Store(8)
	if _, ok := q.queueOffsetOf(phys(7)); ok {
		t.Fatal("entry of a deleted file found")
	}
	for qo := 8; qo <= last; qo++ {
		if got, ok := q.queueOffsetOf(phys(qo)); !ok || got != QueueOffset(qo) {
			t.Fatalf("after retention, phys %d: %d %v, want %d", phys(qo), got, ok, qo)
		}
	}

	// Through the Store: an absent queue, and an existing one with no entry.
	s := &Store{cq: &consumeQueues{queues: map[TopicQueue]*consumeQueue{{"T", 0}: q}}}
	if got, ok := s.QueueOffsetOf("T", 0, phys(last)); !ok || got != last {
		t.Fatalf("Store.QueueOffsetOf: %d %v", got, ok)
	}
	if _, ok := s.QueueOffsetOf("T", 1, phys(last)); ok {
		t.Fatal("absent queue: found an entry")
	}
	if err := q.truncateQueueOffset(8); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.QueueOffsetOf("T", 0, phys(8)); ok {
		t.Fatal("truncated queue: found an entry")
	}
}

// BenchmarkQueueOffsetOf looks up random messages of a one-million-entry queue in
// 300,000-entry ConsumeQueue files (the default), as VIEW_MESSAGE does.
func BenchmarkQueueOffsetOf(b *testing.B) {
	const n = 1_000_000
	q := openTestQueue(b, DefaultConsumeQueueEntriesPerFile)
	for i := range n {
		if err := q.put(QueueOffset(i), cqEntry{phys: PhysicalOffset(i) * 1100, size: 1000}); err != nil {
			b.Fatal(err)
		}
	}
	s := &Store{cq: &consumeQueues{queues: map[TopicQueue]*consumeQueue{{"T", 0}: q}}}
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		i = i*6364136223846793005 + 1442695040888963407 // LCG: a spread of offsets
		want := QueueOffset(i>>33) % n
		if got, ok := s.QueueOffsetOf("T", 0, PhysicalOffset(want)*1100); !ok || got != want {
			b.Fatalf("phys %d: %d %v", PhysicalOffset(want)*1100, got, ok)
		}
	}
}

// BenchmarkReadMessageAt reads messages by physical offset through the real store
// (the VIEW_MESSAGE path): the ConsumeQueue lookup plus the no-copy answer.
func BenchmarkReadMessageAt(b *testing.B) {
	cfg := testConfig(b.TempDir())
	cfg.CommitLogSegmentSize = 64 << 20
	cfg.ConsumeQueueEntriesPerFile = DefaultConsumeQueueEntriesPerFile
	s := openTest(b, cfg)
	defer s.Close()
	var offs []PhysicalOffset
	recs := make([][]byte, 32)
	for done := 0; done < 32*1024; done += len(recs) {
		for i := range recs {
			recs[i] = testRecord(b, "ReadTopic", int32((done+i)%8), 512, done+i)
		}
		for _, r := range mustAppend(b, s, recs, 1700000000000) {
			offs = append(offs, r.PhysicalOffset)
		}
	}
	if err := s.WaitDispatched(context.Background(), s.MaxPhysicalOffset()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		off := offs[(i*7919)%len(offs)]
		rec, release, err := s.ReadMessageAt(off)
		if err != nil || PhysicalOffsetOf(rec) != off {
			b.Fatal(fmt.Sprint("read at ", off, ": ", err))
		}
		release()
		i++
	}
}
