package store

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// entryStoreConfig is testConfig with the CommitLog as the raft log.
func entryStoreConfig(dir string) Config {
	cfg := testConfig(dir)
	cfg.RaftEntryLog = true
	return cfg
}

// msgEntry is a raft entry holding n messages of topic, alternating queues 0 and 1.
func msgEntry(t *testing.T, index uint64, topic string, n, seed int) LogEntry {
	e := LogEntry{Index: index, Term: 1, StoreTimestamp: 1700000000000 + int64(index)}
	for k := range n {
		e.Records = append(e.Records, testRecord(t, topic, int32(k%2), 200+k*13, seed+k))
	}
	return e
}

func waitDispatched(t *testing.T, s *Store, off PhysicalOffset) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.WaitDispatched(ctx, off); err != nil {
		t.Fatal(err)
	}
}

// queueState is (queue offset → physical offset) of every message GetMessages serves.
func queueState(t *testing.T, s *Store, topic string, queueID int32) []PhysicalOffset {
	t.Helper()
	var out []PhysicalOffset
	for off := s.MinQueueOffset(topic, queueID); off < s.MaxQueueOffset(topic, queueID); {
		res, err := s.GetMessages(topic, queueID, off, 32, 1<<20, nil)
		if err != nil || res.Status != Found {
			t.Fatalf("GetMessages %s/%d at %d: %v %v", topic, queueID, off, res.Status, err)
		}
		for i, m := range res.Messages {
			if res.QueueOffsets[i] != off+QueueOffset(i) {
				t.Fatalf("queue offset %d at position %d of a read from %d", res.QueueOffsets[i], i, off)
			}
			if QueueOffsetOf(m) != 0 {
				t.Fatalf("record at %d holds QUEUEOFFSET %d on disk, want 0", PhysicalOffsetOf(m), QueueOffsetOf(m))
			}
			out = append(out, PhysicalOffsetOf(m))
		}
		off = res.NextBeginOffset
		res.Release()
	}
	return out
}

// TestEntryStoreAppliesWithoutACopy: raft's entries are the CommitLog; ApplyEntry
// gives the kept records queue offsets in log order, refused ones become dead (no
// queue offset, never served), entry records and uncommitted entries are not
// dispatched, and a restart rewinds dispatch to the apply checkpoint and replays to
// the same queues.
func TestEntryStoreAppliesWithoutACopy(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, entryStoreConfig(dir))
	if _, err := s.AppendBatch([][]byte{testRecord(t, "T", 0, 300, 1)}, 1); !errors.Is(err, ErrNotEntryLog) {
		t.Fatalf("AppendBatch on an entry store: %v, want ErrNotEntryLog", err)
	}
	el := s.EntryLog()
	es := []LogEntry{
		msgEntry(t, 1, "T", 6, 10),
		{Index: 2, Term: 1, Type: 2, Data: []byte("configuration")},
		msgEntry(t, 3, "T", 5, 20),
		msgEntry(t, 4, "T", 4, 30), // not committed: never applied
	}
	if err := el.Append(es); err != nil {
		t.Fatal(err)
	}
	if err := el.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ApplyEntry(1, make([]bool, 5), nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ApplyEntry with 5 decisions for 6 records: %v, want ErrCorrupt", err)
	}
	if _, _, err := s.ApplyEntry(2, []bool{true}, nil); !errors.Is(err, ErrEntryNotSplit) {
		t.Fatalf("ApplyEntry of an entry without records: %v, want ErrEntryNotSplit", err)
	}
	keep1 := []bool{true, true, false, true, true, true} // record 2 (queue 0) refused
	out1, end1, err := s.ApplyEntry(1, keep1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ApplyEntry(2, nil, nil); err != nil {
		t.Fatal(err)
	}
	keep3 := []bool{true, true, true, true, true}
	out3, end3, err := s.ApplyEntry(3, keep3, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantQO := map[int32][]QueueOffset{0: {0, 1, 2, 3, 4}, 1: {0, 1, 2, 3, 4}}
	got := map[int32][]QueueOffset{}
	for _, r := range append(append([]AppendResult(nil), out1...), out3...) {
		got[r.QueueID] = append(got[r.QueueID], r.QueueOffset)
	}
	for q, w := range wantQO {
		if len(got[q]) != len(w) {
			t.Fatalf("queue %d offsets %v, want %v", q, got[q], w)
		}
		for i := range w {
			if got[q][i] != w[i] {
				t.Fatalf("queue %d offsets %v, want %v", q, got[q], w)
			}
		}
	}
	pos1, err := el.Positions(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitDispatched(t, s, end3)
	time.Sleep(20 * time.Millisecond) // the reput would have gone on into entry 4 by now
	if d := s.DispatchedPhysicalOffset(); d != end3 {
		t.Fatalf("dispatched to %d, the last applied entry ends at %d (entry 4 is not committed)", d, end3)
	}
	before0, before1 := queueState(t, s, "T", 0), queueState(t, s, "T", 1)
	for _, p := range append(before0, before1...) {
		if p == pos1[2] {
			t.Fatalf("the dead record at %d is served", p)
		}
	}
	if len(before0) != 5 || len(before1) != 5 {
		t.Fatalf("queues hold %d and %d messages, want 5 and 5", len(before0), len(before1))
	}
	for _, tq := range s.Topics() {
		if tq.Topic == RaftEntryTopic {
			t.Fatalf("entry records were dispatched into %v", tq)
		}
	}

	// Restart from an apply checkpoint after entry 1: what entry 3 dispatched is
	// cut, and applying it again gives the same queues.
	if _, err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, entryStoreConfig(dir))
	defer s.Close()
	if last := s.EntryLog().LastIndex(); last != 4 {
		t.Fatalf("reopened entry log ends at %d, want 4", last)
	}
	if err := s.RewindDispatch(end3 + 1); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("rewind past what was dispatched: %v, want ErrCorrupt", err)
	}
	if err := s.RewindDispatch(end1); err != nil {
		t.Fatal(err)
	}
	if n := s.MaxQueueOffset("T", 1); n != 3 {
		t.Fatalf("queue 1 ends at %d after the rewind to entry 1, want 3", n)
	}
	if !s.entries.dead.has(pos1[2]) {
		t.Fatal("the dead record below the checkpoint was forgotten by the restart")
	}
	if _, _, err := s.ApplyEntry(3, keep3, nil); err != nil {
		t.Fatal(err)
	}
	waitDispatched(t, s, end3)
	after0, after1 := queueState(t, s, "T", 0), queueState(t, s, "T", 1)
	if !equalOffsets(before0, after0) || !equalOffsets(before1, after1) {
		t.Fatalf("queues after replay %v %v, before %v %v", after0, after1, before0, before1)
	}
}

func equalOffsets(a, b []PhysicalOffset) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestEntryStoreSnapshotRoundTrip: a replica restoring an entry store's snapshot
// (CommitLog bytes from any segment start, plus the queues' next offsets and the
// dead records) serves the same queue offsets, and its raft log starts after the
// snapshot.
func TestEntryStoreSnapshotRoundTrip(t *testing.T) {
	src := openTest(t, entryStoreConfig(t.TempDir()))
	defer src.Close()
	el := src.EntryLog()
	var end PhysicalOffset
	for i := uint64(1); i <= 40; i++ {
		if err := el.Append([]LogEntry{msgEntry(t, i, "T", 8, int(i))}); err != nil {
			t.Fatal(err)
		}
		keep := []bool{true, true, true, true, true, true, true, true}
		if i%7 == 0 {
			keep[3] = false
		}
		var err error
		if _, end, err = src.ApplyEntry(i, keep, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := el.Sync(); err != nil {
		t.Fatal(err)
	}
	waitDispatched(t, src, end)
	es, err := src.EntrySnapshotState()
	if err != nil {
		t.Fatal(err)
	}
	if len(es.Dead) != 5 {
		t.Fatalf("snapshot carries %d dead records, want 5", len(es.Dead))
	}
	// Stream from the second segment: the sender's retention may have moved its
	// minimum, and the image then starts in the middle of an entry.
	from := PhysicalOffset(testSegSize)
	var img bytes.Buffer
	if err := src.ReadRange(from, end, func(b []byte) error { img.Write(b); return nil }); err != nil {
		t.Fatal(err)
	}
	dst := openTest(t, entryStoreConfig(t.TempDir()))
	defer dst.Close()
	if err := dst.ResetFrom(from, bytes.NewReader(img.Bytes())); !errors.Is(err, ErrNotEntryLog) {
		t.Fatalf("ResetFrom on an entry store: %v, want ErrNotEntryLog", err)
	}
	if err := dst.ResetFromEntries(from, bytes.NewReader(img.Bytes()), es, 41); err != nil {
		t.Fatal(err)
	}
	waitDispatched(t, dst, end)
	for q := int32(0); q < 2; q++ {
		all := queueState(t, src, "T", q)
		var want []PhysicalOffset
		for _, p := range all {
			if p >= from {
				want = append(want, p)
			}
		}
		got := queueState(t, dst, "T", q)
		if !equalOffsets(got, want) {
			t.Fatalf("queue %d restored %v, want %v", q, got, want)
		}
		if dst.MaxQueueOffset("T", q) != src.MaxQueueOffset("T", q) {
			t.Fatalf("queue %d ends at %d restored, %d at the sender", q, dst.MaxQueueOffset("T", q), src.MaxQueueOffset("T", q))
		}
		if dst.MinQueueOffset("T", q) != src.MaxQueueOffset("T", q)-QueueOffset(len(want)) {
			t.Fatalf("queue %d starts at %d restored", q, dst.MinQueueOffset("T", q))
		}
	}
	del := dst.EntryLog()
	if del.FirstIndex() != 0 || del.LastIndex() != 0 {
		t.Fatalf("restored entry log holds [%d, %d], want empty", del.FirstIndex(), del.LastIndex())
	}
	if err := del.Append([]LogEntry{msgEntry(t, 41, "T", 2, 99)}); err != nil {
		t.Fatal(err)
	}
	out, _, err := dst.ApplyEntry(41, []bool{true, true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].QueueOffset != src.MaxQueueOffset("T", 0) || out[1].QueueOffset != src.MaxQueueOffset("T", 1) {
		t.Fatalf("first entry after the restore took offsets %d, %d; the sender's queues end at %d, %d",
			out[0].QueueOffset, out[1].QueueOffset, src.MaxQueueOffset("T", 0), src.MaxQueueOffset("T", 1))
	}
}

// TestEntryStoreRetentionKeepsWhatARestartReplays: retention never deletes a segment
// that reaches above the apply checkpoint (a restart replays those entries from the
// log), and what it deletes below, the entry log forgets.
func TestEntryStoreRetentionKeepsWhatARestartReplays(t *testing.T) {
	s := openTest(t, entryStoreConfig(t.TempDir()))
	defer s.Close()
	el := s.EntryLog()
	var end PhysicalOffset
	ends := map[uint64]PhysicalOffset{}
	for i := uint64(1); i <= 200; i++ {
		if err := el.Append([]LogEntry{msgEntry(t, i, "T", 8, int(i))}); err != nil {
			t.Fatal(err)
		}
		var err error
		if _, end, err = s.ApplyEntry(i, []bool{true, true, true, true, true, true, true, true}, nil); err != nil {
			t.Fatal(err)
		}
		ends[i] = end
	}
	if err := el.Sync(); err != nil {
		t.Fatal(err)
	}
	waitDispatched(t, s, end)
	if end < 4*testSegSize {
		t.Fatalf("the test wants at least 4 segments, the log ends at %d", end)
	}
	ck := ends[60] // in the second segment
	s.MarkApplyCheckpoint(ck)
	later := time.Now().Add(365 * 24 * time.Hour)
	if _, err := s.CleanExpired(later, 0.99); err != nil {
		t.Fatal(err)
	}
	if min := s.MinPhysicalOffset(); min > ck || int64(ck)-int64(min) >= testSegSize {
		t.Fatalf("after retention the CommitLog starts at %d; the checkpoint at %d must stay, in the first segment kept", min, ck)
	}
	s.MarkApplyCheckpoint(end)
	if _, err := s.CleanExpired(later, 0.99); err != nil {
		t.Fatal(err)
	}
	min := s.MinPhysicalOffset()
	if int64(min) != int64(end)/testSegSize*testSegSize {
		t.Fatalf("with the checkpoint at the end, retention kept from %d, want the active segment %d", min, int64(end)/testSegSize*testSegSize)
	}
	first := el.FirstIndex()
	if first == 0 || first == 1 {
		t.Fatalf("the entry log still starts at %d after its segments were deleted", first)
	}
	pos, err := el.Positions(first, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pos) > 0 && pos[0] < min {
		t.Fatalf("entry %d, the first kept, has a record at %d below the CommitLog's start %d", first, pos[0], min)
	}
}

// TestEntryStoreEarliestMessageTimeSkipsEntryRecords: the oldest message's time,
// not that of the raft entry records before it (the bootstrap configuration's is 0).
func TestEntryStoreEarliestMessageTimeSkipsEntryRecords(t *testing.T) {
	s := openTest(t, entryStoreConfig(t.TempDir()))
	defer s.Close()
	if _, ok := s.EarliestMessageTime(); ok {
		t.Fatal("an empty store has an earliest message time")
	}
	m := msgEntry(t, 2, "T", 2, 1)
	if err := s.EntryLog().Append([]LogEntry{{Index: 1, Term: 1, Type: 2, Data: []byte("bootstrap")}, m}); err != nil {
		t.Fatal(err)
	}
	_, end, err := s.ApplyEntry(2, []bool{true, true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitDispatched(t, s, end)
	if ts, ok := s.EarliestMessageTime(); !ok || ts != m.StoreTimestamp {
		t.Fatalf("earliest message time %d (%v), want %d", ts, ok, m.StoreTimestamp)
	}
}
