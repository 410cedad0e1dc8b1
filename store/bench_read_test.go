package store

import (
	"fmt"
	"strings"
	"testing"
)

// benchLog builds a fake CommitLog of n 1 KiB messages over 8 queues, each with a tag,
// a key and a UNIQ_KEY (three index entries per message is what a keyed producer costs).
func benchLog(b *testing.B, n int) *fakeLog {
	src := newFakeLog(64 << 20)
	body := strings.Repeat("x", 1024)
	for i := range n {
		src.append(b, testMsg{topic: "BenchTopic", queue: int32(i % 8), tags: "TagA", keys: fmt.Sprintf("order-%d", i),
			uniq: fmt.Sprintf("0A0000010000%020d", i), body: body, ts: 1_700_000_000_000 + int64(i)})
	}
	return src
}

// BenchmarkDispatch measures reput: CommitLog records into ConsumeQueue and IndexFile
// entries.
func BenchmarkDispatch(b *testing.B) {
	const n = 20_000
	src := benchLog(b, n)
	o := testOpts{entriesPerFile: 300_000, hashSlots: 500_000, maxEntries: 2_000_000}
	b.SetBytes(int64(len(src.buf)) / n)
	b.ReportAllocs()
	b.ResetTimer()
	done := 0
	for done < b.N {
		b.StopTimer()
		s := openDQ(b, b.TempDir(), newFakeLog(src.segSize), o)
		s.dispatcher.src = src
		b.StartTimer()
		s.dispatcher.mu.Lock()
		err := s.dispatcher.dispatchTo(min(src.maxOffset(), offsetOfMessage(src, min(n, b.N-done))), dispatchLive)
		s.dispatcher.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		done += min(n, b.N-done)
		closeDQ(s)
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// offsetOfMessage is the end offset of the first k messages (all messages fit in one
// segment of the bench log, so they are contiguous).
func offsetOfMessage(src *fakeLog, k int) PhysicalOffset {
	off := PhysicalOffset(0)
	for i := 0; i < k && off < src.maxOffset(); i++ {
		_, next, _, _ := src.recordAt(off)
		off = next
	}
	return off
}

// BenchmarkGetMessages32 measures pulls of 32 messages (zero copy) with a tag filter
// that matches everything, as a push consumer subscribed to its tag does.
func BenchmarkGetMessages32(b *testing.B) {
	const n = 20_000
	src := benchLog(b, n)
	s := openDQ(b, b.TempDir(), src, testOpts{entriesPerFile: 300_000, hashSlots: 50_000, maxEntries: 200_000})
	code := TagsCode("TagA")
	filter := func(c int64, _ func() string) bool { return c == code }
	perQueue := QueueOffset(n / 8)
	var off QueueOffset
	var q int32
	b.ReportAllocs()
	b.ResetTimer()
	msgs := 0
	for range b.N {
		r, err := s.GetMessages("BenchTopic", q, off, 32, 256<<10, filter)
		if err != nil || r.Status != Found {
			b.Fatalf("%v %v at %d", err, r.Status, off)
		}
		msgs += len(r.Messages)
		off = r.NextBeginOffset
		r.Release()
		if off+32 > perQueue {
			off, q = 0, (q+1)%8
		}
	}
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
	b.SetBytes(int64(len(src.buf)/n) * 32)
}
