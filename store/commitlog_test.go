package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

const testSegSize = 64 << 10

// testConfig is a store in dir with 64 KiB segments and no background flush during
// the test (FlushInterval of an hour), unless a test changes it.
func testConfig(dir string) Config {
	return Config{
		Dir:                        dir,
		CommitLogSegmentSize:       testSegSize,
		ConsumeQueueEntriesPerFile: 1000,
		IndexHashSlots:             1000,
		IndexMaxEntries:            4000,
		FlushInterval:              time.Hour,
		DeleteWhenHour:             4,
	}
}

func openTest(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// crash stops a store the way a killed process would: no flush, no checkpoint, the
// abort marker stays. (Bytes written through the mapping stay in the page cache, as
// they would after kill -9.)
func crash(s *Store) {
	s.closed.Store(true)
	s.stopScrub()
	s.flusher.stop()
	s.dispatcher.stop()
	s.cq.close()
	_ = s.index.close()
	s.commitLog.close()
}

// testRecord encodes a message of exactly size bytes (size >= 92 + len(topic)).
func testRecord(t testing.TB, topic string, queueID int32, size int, seed int) []byte {
	t.Helper()
	body := make([]byte, size-fixedV1Size-len(topic))
	for i := range body {
		body[i] = byte(seed*31 + i)
	}
	m := Message{
		Topic: topic, QueueID: queueID, BornTimestamp: 1700000000000 + int64(seed),
		BornHost:  netip.MustParseAddrPort("10.0.0.1:40000"),
		StoreHost: netip.MustParseAddrPort("127.0.0.1:10911"),
		Body:      body,
	}
	rec, err := AppendMessage(nil, &m)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec) != size {
		t.Fatalf("record of %d bytes, want %d", len(rec), size)
	}
	return rec
}

// testBatch makes n records of size bytes spread over queues 0..queues-1 of topic.
func testBatch(t testing.TB, topic string, queues, n, size, seed int) [][]byte {
	recs := make([][]byte, n)
	for i := range recs {
		recs[i] = testRecord(t, topic, int32(i%queues), size, seed+i)
	}
	return recs
}

func mustAppend(t testing.TB, s *Store, recs [][]byte, ts int64) []AppendResult {
	t.Helper()
	res, err := s.AppendBatch(recs, ts)
	if err != nil {
		t.Fatalf("AppendBatch: %v", err)
	}
	return res
}

// segmentFiles reads every CommitLog segment of dir, by name.
func segmentFiles(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, commitLogDir))
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string][]byte)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, commitLogDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func sameSegments(t *testing.T, a, b map[string][]byte) {
	t.Helper()
	var names []string
	for n := range a {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(a) != len(b) {
		t.Fatalf("segment sets differ: %d vs %d files", len(a), len(b))
	}
	for _, n := range names {
		if !bytes.Equal(a[n], b[n]) {
			t.Fatalf("segment %s differs", n)
		}
	}
}

func segPath(dir string, start int64) string {
	return filepath.Join(dir, commitLogDir, fileName(start))
}

func TestRollOverBlankPaddingAtExactBoundary(t *testing.T) {
	cases := []struct {
		name      string
		lastSize  int   // size of the record appended after 65 records of 1000 bytes
		wantBlank int64 // where the blank record starts
		wantLast  PhysicalOffset
	}{
		// 65,000 used, 536 left: a 528-byte record fits with exactly MinBlankRecord to spare.
		{"fits leaving 8", 528, 65528, 65000},
		// a 529-byte record would leave 7 bytes, too few to mark the end: it rolls.
		{"one byte too many", 529, 65000, testSegSize},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, testConfig(dir))
			mustAppend(t, s, testBatch(t, "T", 1, 65, 1000, 0), 1)
			res := mustAppend(t, s, [][]byte{testRecord(t, "T", 0, tc.lastSize, 99)}, 2)
			if res[0].PhysicalOffset != tc.wantLast {
				t.Fatalf("record at %d, want %d", res[0].PhysicalOffset, tc.wantLast)
			}
			next := mustAppend(t, s, [][]byte{testRecord(t, "T", 0, 1000, 100)}, 3)
			if next[0].PhysicalOffset != testSegSize && next[0].PhysicalOffset != testSegSize+PhysicalOffset(tc.lastSize) {
				t.Fatalf("next record at %d, want in second segment", next[0].PhysicalOffset)
			}
			if next[0].QueueOffset != 66 {
				t.Fatalf("queue offset %d, want 66", next[0].QueueOffset)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			seg := segmentFiles(t, dir)[fileName(0)]
			size, magic, _ := RecordSize(seg[tc.wantBlank:])
			if magic != MagicBlank || int64(size) != testSegSize-tc.wantBlank {
				t.Fatalf("blank at %d: size %d magic %#x, want size %d", tc.wantBlank, size, uint32(magic), testSegSize-tc.wantBlank)
			}
			if lastNonZero(seg[tc.wantBlank+8:]) != 0 {
				t.Fatal("bytes after the blank header are not zero")
			}
			// Re-open: the blank is recognised and reads continue in segment 2.
			s = openTest(t, testConfig(dir))
			defer s.Close()
			rec, nxt, release, err := s.commitLog.recordAt(PhysicalOffset(tc.wantBlank))
			if err != nil {
				t.Fatal(err)
			}
			release()
			if len(rec) != int(testSegSize-tc.wantBlank) || nxt != testSegSize {
				t.Fatalf("recordAt blank: %d bytes, next %d", len(rec), nxt)
			}
		})
	}
}

func TestRecordLargerThanSegmentIsIllegal(t *testing.T) {
	s := openTest(t, testConfig(t.TempDir()))
	defer s.Close()
	ok := testRecord(t, "T", 0, testSegSize-MinBlankRecord, 1)
	if _, err := s.AppendBatch([][]byte{ok}, 1); err != nil {
		t.Fatalf("largest record: %v", err)
	}
	before := s.MaxPhysicalOffset()
	big := testRecord(t, "T", 0, testSegSize-MinBlankRecord+1, 2)
	_, err := s.AppendBatch([][]byte{testRecord(t, "T", 0, 200, 3), big}, 2)
	if !errors.Is(err, ErrMessageIllegal) {
		t.Fatalf("err = %v, want ErrMessageIllegal", err)
	}
	if s.MaxPhysicalOffset() != before {
		t.Fatal("a rejected batch wrote bytes")
	}
	bad := testRecord(t, "T", 0, 200, 4)
	binary.BigEndian.PutUint32(bad[0:], 199)
	if _, err := s.AppendBatch([][]byte{bad}, 3); !errors.Is(err, ErrMessageIllegal) {
		t.Fatalf("malformed record: err = %v", err)
	}
	// Queue offsets were not consumed by the rejected batches.
	res := mustAppend(t, s, [][]byte{testRecord(t, "T", 0, 200, 5)}, 4)
	if res[0].QueueOffset != 1 {
		t.Fatalf("queue offset %d after rejected batches, want 1", res[0].QueueOffset)
	}
}

func TestAppendPatchesCopyNotInput(t *testing.T) {
	s := openTest(t, testConfig(t.TempDir()))
	defer s.Close()
	rec := testRecord(t, "T", 2, 300, 1)
	orig := bytes.Clone(rec)
	mustAppend(t, s, [][]byte{testRecord(t, "T", 2, 300, 0)}, 5)
	res := mustAppend(t, s, [][]byte{rec}, 1234)
	if !bytes.Equal(rec, orig) {
		t.Fatal("AppendBatch modified its input")
	}
	b, release, err := s.commitLog.bytesAt(res[0].PhysicalOffset, res[0].Size)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	m, err := DecodeMessage(b, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.QueueOffset != 1 || m.PhysicalOffset != 300 || m.StoreTimestamp != 1234 || m.QueueID != 2 {
		t.Fatalf("patched fields: qo %d po %d ts %d q %d", m.QueueOffset, m.PhysicalOffset, m.StoreTimestamp, m.QueueID)
	}
	if res[0] != (AppendResult{Topic: "T", QueueID: 2, QueueOffset: 1, PhysicalOffset: 300, Size: 300, StoreTimestamp: 1234}) {
		t.Fatalf("result %+v", res[0])
	}
}

// feed appends the same deterministic batches (several topics and queues, sizes that
// cross segment boundaries) to s.
func feed(t testing.TB, s *Store, batches int) []AppendResult {
	var all []AppendResult
	for b := range batches {
		recs := make([][]byte, 0, 20)
		for i := range 20 {
			topic := fmt.Sprintf("topic-%d", (b+i)%3)
			recs = append(recs, testRecord(t, topic, int32(i%4), 150+((b*20+i)*37)%1400, b*100+i))
		}
		all = append(all, mustAppend(t, s, recs, 1700000000000+int64(b))...)
	}
	return all
}

func TestDeterministicBytesAcrossStores(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	a := openTest(t, testConfig(dirA))
	b := openTest(t, testConfig(dirB))
	ra, rb := feed(t, a, 30), feed(t, b, 30)
	if fmt.Sprint(ra) != fmt.Sprint(rb) {
		t.Fatal("append results differ")
	}
	if a.MaxPhysicalOffset() < 3*testSegSize {
		t.Fatalf("only %d bytes written, want several segments", a.MaxPhysicalOffset())
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	sameSegments(t, segmentFiles(t, dirA), segmentFiles(t, dirB))
}

func TestTruncateThenAppend(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, testConfig(dir))
	res := feed(t, s, 12)
	cutAt := len(res) / 2
	for res[cutAt].PhysicalOffset%testSegSize == 0 {
		cutAt++ // prefer a cut inside a segment
	}
	off := res[cutAt].PhysicalOffset
	if err := s.Truncate(off + 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("truncate inside a record: err = %v", err)
	}
	if err := s.Truncate(s.MaxPhysicalOffset() + 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("truncate beyond max: err = %v", err)
	}
	if err := s.Truncate(off); err != nil {
		t.Fatal(err)
	}
	if s.MaxPhysicalOffset() != off {
		t.Fatalf("max %d after truncate to %d", s.MaxPhysicalOffset(), off)
	}
	tail := testBatch(t, "topic-0", 4, 10, 700, 5000)
	after := mustAppend(t, s, tail, 42)
	if after[0].PhysicalOffset != off {
		t.Fatalf("append after truncate at %d, want %d", after[0].PhysicalOffset, off)
	}
	// The same history without the cut records gives the same bytes and offsets.
	dir2 := t.TempDir()
	s2 := openTest(t, testConfig(dir2))
	ref := feed(t, s2, 12)
	if err := s2.Truncate(off); err != nil {
		t.Fatal(err)
	}
	_ = ref
	after2 := mustAppend(t, s2, tail, 42)
	if fmt.Sprint(after) != fmt.Sprint(after2) {
		t.Fatal("results after truncate differ between stores")
	}
	// Queue offsets continue from the cut: the first record after the cut of each queue
	// takes the offset the first cut record of that queue had.
	want := map[TopicQueue]QueueOffset{}
	for _, r := range res[cutAt:] {
		tq := TopicQueue{r.Topic, r.QueueID}
		if _, ok := want[tq]; !ok {
			want[tq] = r.QueueOffset
		}
	}
	seen := map[TopicQueue]bool{}
	for _, r := range after {
		tq := TopicQueue{r.Topic, r.QueueID}
		if seen[tq] {
			continue
		}
		seen[tq] = true
		if w, ok := want[tq]; ok && r.QueueOffset != w {
			t.Fatalf("queue %v continues at %d, want %d", tq, r.QueueOffset, w)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	sameSegments(t, segmentFiles(t, dir), segmentFiles(t, dir2))
	// And a restart keeps the truncated state.
	s = openTest(t, testConfig(dir))
	defer s.Close()
	if s.MaxPhysicalOffset() != after[len(after)-1].PhysicalOffset+PhysicalOffset(after[len(after)-1].Size) {
		t.Fatalf("max %d after reopen", s.MaxPhysicalOffset())
	}
}

func TestAllocatorPreallocatesNextSegment(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, testConfig(dir))
	mustAppend(t, s, testBatch(t, "T", 1, 10, 1000, 0), 1)
	// Open asked for the segment after the last one; it appears without an append.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(segPath(dir, testSegSize)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("next segment was not pre-allocated")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Close removes the unused pre-allocated segment.
	if _, err := os.Stat(segPath(dir, testSegSize)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unused pre-allocated segment left behind: %v", err)
	}
}
