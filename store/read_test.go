package store

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func fillQueue(t *testing.T, src *fakeLog, topic string, queue int32, n int, tags func(i int) string, ts func(i int) int64) []PhysicalOffset {
	t.Helper()
	offs := make([]PhysicalOffset, n)
	for i := range n {
		offs[i], _ = src.append(t, testMsg{topic: topic, queue: queue, tags: tags(i), body: fmt.Sprintf("body-%d", i), ts: ts(i)})
	}
	return offs
}

func constTag(string) func(int) string { return func(int) string { return "A" } }
func tsStep(i int) int64               { return 1_000_000 + int64(i)*10 }

func TestGetMessagesStatusesAndNextOffsets(t *testing.T) {
	src := newFakeLog(1 << 20)
	s := openDQ(t, t.TempDir(), src, defaultOpts()) // 8 entries per ConsumeQueue file
	r, err := s.GetMessages("T", 0, 0, 32, 1<<20, nil)
	if err != nil || r.Status != NoMessageInQueue || r.NextBeginOffset != 0 {
		t.Fatalf("absent queue: %v %+v", err, r)
	}
	offs := fillQueue(t, src, "T", 0, 20, constTag("A"), tsStep)
	syncDispatch(t, s, src)

	cases := []struct {
		offset     QueueOffset
		max        int
		status     GetStatus
		next       QueueOffset
		firstPhys  PhysicalOffset
		messageCnt int
	}{
		{0, 4, Found, 4, offs[0], 4},
		{5, 32, Found, 8, offs[5], 3}, // a read stops at the end of the ConsumeQueue file
		{8, 32, Found, 16, offs[8], 8},
		{19, 32, Found, 20, offs[19], 1},
		{20, 32, OffsetOverflowOne, 20, 0, 0},
		{25, 32, OffsetOverflowBadly, 20, 0, 0},
	}
	for _, c := range cases {
		r, err := s.GetMessages("T", 0, c.offset, c.max, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != c.status || r.NextBeginOffset != c.next || len(r.Messages) != c.messageCnt || r.MinOffset != 0 || r.MaxOffset != 20 {
			t.Fatalf("offset %d: status %v next %d msgs %d min %d max %d; want %v %d %d", c.offset, r.Status, r.NextBeginOffset, len(r.Messages), r.MinOffset, r.MaxOffset, c.status, c.next, c.messageCnt)
		}
		for i, b := range r.Messages {
			m, err := DecodeMessage(b, true)
			if err != nil {
				t.Fatal(err)
			}
			if m.QueueOffset != c.offset+QueueOffset(i) || m.QueueOffset != r.QueueOffsets[i] || string(m.Body) != fmt.Sprintf("body-%d", c.offset+QueueOffset(i)) {
				t.Fatalf("offset %d message %d: queue offset %d body %q", c.offset, i, m.QueueOffset, m.Body)
			}
			if i == 0 && m.PhysicalOffset != c.firstPhys {
				t.Fatalf("first message at %d, want %d", m.PhysicalOffset, c.firstPhys)
			}
			// Zero copy: the bytes are the log's own.
			if &b[0] != &src.buf[m.PhysicalOffset] {
				t.Fatalf("message %d was copied", i)
			}
		}
		r.Release()
	}

	// An existing but empty queue (all entries truncated away) answers NO_MESSAGE_IN_QUEUE.
	if err := s.dispatcher.truncate(offs[0]); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.GetMessages("T", 0, 3, 32, 1<<20, nil); r.Status != NoMessageInQueue || r.NextBeginOffset != 0 {
		t.Fatalf("empty queue: %v next %d", r.Status, r.NextBeginOffset)
	}
}

func TestGetMessagesByteLimit(t *testing.T) {
	src := newFakeLog(1 << 20)
	s := openDQ(t, t.TempDir(), src, testOpts{entriesPerFile: 100, hashSlots: 16, maxEntries: 64})
	fillQueue(t, src, "T", 0, 10, constTag("A"), tsStep)
	syncDispatch(t, s, src)
	e, _ := s.cq.get("T", 0).entry(0)
	r, _ := s.GetMessages("T", 0, 0, 32, int(e.size)*3+1, nil)
	defer r.Release()
	if r.Status != Found || len(r.Messages) != 3 || r.NextBeginOffset != 3 || r.TotalBytes != 3*int(e.size) {
		t.Fatalf("byte limit: %v %d msgs next %d total %d", r.Status, len(r.Messages), r.NextBeginOffset, r.TotalBytes)
	}
	// The first message is always taken, even when larger than the limit.
	r2, _ := s.GetMessages("T", 0, 0, 32, 1, nil)
	defer r2.Release()
	if r2.Status != Found || len(r2.Messages) != 1 || r2.NextBeginOffset != 1 {
		t.Fatalf("tiny limit: %v %d msgs next %d", r2.Status, len(r2.Messages), r2.NextBeginOffset)
	}
}

func TestGetMessagesTagFilter(t *testing.T) {
	src := newFakeLog(1 << 20)
	s := openDQ(t, t.TempDir(), src, testOpts{entriesPerFile: 1000, hashSlots: 16, maxEntries: 64})
	tags := func(i int) string {
		if i%3 == 0 {
			return "A"
		}
		return "B"
	}
	fillQueue(t, src, "T", 0, 30, tags, tsStep)
	syncDispatch(t, s, src)
	byTag := func(tag string) MessageFilter {
		code := TagsCode(tag)
		return func(c int64, _ func() string) bool { return c == code }
	}
	r, _ := s.GetMessages("T", 0, 1, 4, 1<<20, byTag("A"))
	defer r.Release()
	// A at 3, 6, 9, 12; the scan stops at 13 (the entry after the fourth match is not taken).
	if r.Status != Found || fmt.Sprint(r.QueueOffsets) != "[3 6 9 12]" || r.NextBeginOffset != 13 {
		t.Fatalf("tag A: %v %v next %d", r.Status, r.QueueOffsets, r.NextBeginOffset)
	}
	r2, _ := s.GetMessages("T", 0, 0, 32, 1<<20, byTag("C"))
	if r2.Status != NoMatchedMessage || len(r2.Messages) != 0 || r2.NextBeginOffset != 30 {
		t.Fatalf("tag C: %v %d msgs next %d", r2.Status, len(r2.Messages), r2.NextBeginOffset)
	}
	// A filter on properties loads them lazily from the CommitLog.
	loads := 0
	propFilter := func(_ int64, props func() string) bool {
		loads++
		v, _ := Property(props(), PropertyTags)
		return v == "B"
	}
	r3, _ := s.GetMessages("T", 0, 0, 2, 1<<20, propFilter)
	defer r3.Release()
	if r3.Status != Found || fmt.Sprint(r3.QueueOffsets) != "[1 2]" || r3.NextBeginOffset != 3 || loads != 3 {
		t.Fatalf("property filter: %v %v next %d loads %d", r3.Status, r3.QueueOffsets, r3.NextBeginOffset, loads)
	}
}

func TestGetMessagesScanBound(t *testing.T) {
	src := newFakeLog(1 << 22)
	s := openDQ(t, t.TempDir(), src, testOpts{entriesPerFile: 5000, hashSlots: 16, maxEntries: 64})
	fillQueue(t, src, "T", 0, maxScanEntries+50, constTag("A"), tsStep)
	syncDispatch(t, s, src)
	none := func(int64, func() string) bool { return false }
	r, _ := s.GetMessages("T", 0, 0, 32, 1<<20, none)
	if r.Status != NoMatchedMessage || r.NextBeginOffset != maxScanEntries {
		t.Fatalf("unmatched scan: %v next %d, want %d", r.Status, r.NextBeginOffset, maxScanEntries)
	}
}

func TestDeleteBelowGivesOffsetTooSmall(t *testing.T) {
	src := newFakeLog(1 << 20)
	s := openDQ(t, t.TempDir(), src, defaultOpts()) // 8 entries per file
	offs := fillQueue(t, src, "T", 0, 20, constTag("A"), tsStep)
	syncDispatch(t, s, src)
	// Retention removed the CommitLog below message 10.
	src.min = offs[10]
	if err := s.dispatcher.deleteBelow(offs[10]); err != nil {
		t.Fatal(err)
	}
	q := s.cq.get("T", 0)
	if got := q.files.minOffset() / cqEntrySize; got != 8 {
		t.Fatalf("first ConsumeQueue file starts at entry %d, want 8 (file 0-7 deleted, 8-15 kept)", got)
	}
	if s.MinQueueOffset("T", 0) != 10 || s.MaxQueueOffset("T", 0) != 20 {
		t.Fatalf("min %d max %d, want 10 20", s.MinQueueOffset("T", 0), s.MaxQueueOffset("T", 0))
	}
	for _, off := range []QueueOffset{0, 9} {
		r, _ := s.GetMessages("T", 0, off, 32, 1<<20, nil)
		if r.Status != OffsetTooSmall || r.NextBeginOffset != 10 {
			t.Fatalf("offset %d: %v next %d, want OFFSET_TOO_SMALL next 10", off, r.Status, r.NextBeginOffset)
		}
	}
	r, _ := s.GetMessages("T", 0, 10, 32, 1<<20, nil)
	defer r.Release()
	if r.Status != Found || r.QueueOffsets[0] != 10 {
		t.Fatalf("offset 10: %v %v", r.Status, r.QueueOffsets)
	}
	// Everything gone: the last file stays so the max offset survives.
	src.min = src.maxOffset()
	if err := s.dispatcher.deleteBelow(src.maxOffset()); err != nil {
		t.Fatal(err)
	}
	if s.MinQueueOffset("T", 0) != 20 || s.MaxQueueOffset("T", 0) != 20 {
		t.Fatalf("after full retention min %d max %d, want 20 20", s.MinQueueOffset("T", 0), s.MaxQueueOffset("T", 0))
	}
	if r, _ := s.GetMessages("T", 0, 20, 32, 1<<20, nil); r.Status != OffsetOverflowOne {
		t.Fatalf("offset 20 after full retention: %v", r.Status)
	}
}

func TestSearchOffsetByTimestamp(t *testing.T) {
	src := newFakeLog(1 << 20)
	s := openDQ(t, t.TempDir(), src, defaultOpts())
	if got := s.SearchOffsetByTimestamp("T", 0, 5); got != 0 {
		t.Fatalf("absent queue: %d", got)
	}
	// Times 1000, 1010, 1010, 1030, ... (a duplicate to exercise the LOWER boundary).
	times := []int64{1000, 1010, 1010, 1030, 1040, 1050, 1060, 1070, 1080, 1090, 1100}
	for _, ts := range times {
		src.append(t, testMsg{topic: "T", queue: 0, body: "x", ts: ts})
	}
	syncDispatch(t, s, src)
	cases := []struct {
		ts   int64
		want QueueOffset
	}{
		{0, 0}, {1000, 0}, {1001, 1}, {1010, 1}, {1011, 3}, {1030, 3}, {1100, 10}, {1101, 11}, {1 << 50, 11},
	}
	for _, c := range cases {
		if got := s.SearchOffsetByTimestamp("T", 0, c.ts); got != c.want {
			t.Fatalf("ts %d: offset %d, want %d", c.ts, got, c.want)
		}
	}
}

func TestReadMessageAtAndTopics(t *testing.T) {
	src := newFakeLog(512)
	s := openDQ(t, t.TempDir(), src, defaultOpts())
	var offs []PhysicalOffset
	for i := range 8 {
		off, _ := src.append(t, testMsg{topic: fmt.Sprintf("T%d", i%2), queue: int32(i % 3), body: "payload-payload-payload", ts: 1})
		offs = append(offs, off)
	}
	syncDispatch(t, s, src)
	b, release, err := s.ReadMessageAt(offs[5])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, src.buf[offs[5]:offs[5]+PhysicalOffset(len(b))]) || PhysicalOffsetOf(b) != offs[5] {
		t.Fatalf("read at %d gave another record", offs[5])
	}
	release()
	if _, _, err := s.ReadMessageAt(src.maxOffset()); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read beyond end: %v", err)
	}
	// A blank padding record is not a message.
	for p := PhysicalOffset(0); p < src.maxOffset(); {
		rec, next, _, _ := src.recordAt(p)
		if _, magic, _ := RecordSize(rec); magic == MagicBlank {
			if _, _, err := s.ReadMessageAt(p); !errors.Is(err, ErrOffsetOutOfRange) {
				t.Fatalf("read of blank at %d: %v", p, err)
			}
		}
		p = next
	}
	want := "[{T0 0} {T0 1} {T0 2} {T1 0} {T1 1} {T1 2}]"
	if got := fmt.Sprint(s.Topics()); got != want {
		t.Fatalf("topics %s, want %s", got, want)
	}
}

func TestGetStatusNames(t *testing.T) {
	want := []string{"FOUND", "NO_MATCHED_MESSAGE", "OFFSET_TOO_SMALL", "OFFSET_OVERFLOW_ONE", "OFFSET_OVERFLOW_BADLY", "NO_MESSAGE_IN_QUEUE", "OFFSET_FOUND_NULL", "MESSAGE_WAS_REMOVING"}
	for i, w := range want {
		if got := GetStatus(i).String(); got != w {
			t.Fatalf("status %d: %s, want %s", i, got, w)
		}
	}
}
