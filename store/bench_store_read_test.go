package store

import (
	"context"
	"testing"
	"time"
)

// BenchmarkStoreGetMessages32 reads 32 messages at a time through the real
// CommitLog and ConsumeQueue (mmap'd files), the way a PULL does: one op is one
// 32-message read, zero copy, released after use.
func BenchmarkStoreGetMessages32(b *testing.B) {
	cfg := testConfig(b.TempDir())
	cfg.CommitLogSegmentSize = 64 << 20
	cfg.FlushInterval = time.Hour
	cfg.ConsumeQueueEntriesPerFile = DefaultConsumeQueueEntriesPerFile
	cfg.IndexHashSlots, cfg.IndexMaxEntries = 100_000, 400_000
	s := openTest(b, cfg)
	defer s.Close()
	const queues, perQueue = 8, 4096
	recs := make([][]byte, 32)
	for done := 0; done < queues*perQueue; done += len(recs) {
		for i := range recs {
			recs[i] = testRecord(b, "ReadTopic", int32((done+i)%queues), 1024, done+i)
		}
		if _, err := s.AppendBatch(recs, 1700000000000); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.WaitDispatched(context.Background(), s.MaxPhysicalOffset()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var bytes, msgs int
	i := 0
	for b.Loop() {
		q := int32(i % queues)
		off := QueueOffset((i / queues * 32) % (perQueue - 32))
		res, err := s.GetMessages("ReadTopic", q, off, 32, 1<<20, nil)
		if err != nil || res.Status != Found || len(res.Messages) != 32 {
			b.Fatalf("read q=%d off=%d: %v %v %d", q, off, err, res.Status, len(res.Messages))
		}
		bytes += res.TotalBytes
		msgs += len(res.Messages)
		res.Release()
		i++
	}
	b.SetBytes(int64(bytes / max(1, i)))
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
}
