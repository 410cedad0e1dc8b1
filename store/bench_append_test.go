package store

import (
	"testing"
	"time"
)

// benchSegSize is large enough that roll-over is rare but exercised.
const benchSegSize = 64 << 20

func benchBatch(b *testing.B) ([][]byte, int) {
	recs := make([][]byte, 32)
	total := 0
	for i := range recs {
		recs[i] = testRecord(b, "BenchTopic", int32(i%8), 1024, i)
		total += len(recs[i])
	}
	return recs, total
}

// BenchmarkAppend1KiB measures AppendBatch of 32 × 1 KiB messages: validation, queue
// offset assignment, copy into the mapping, patching, roll-over, reput wake-up.
func BenchmarkAppend1KiB(b *testing.B) {
	cfg := testConfig(b.TempDir())
	cfg.CommitLogSegmentSize = benchSegSize
	cfg.FlushInterval = time.Hour
	s := openTest(b, cfg)
	defer s.Close()
	recs, total := benchBatch(b)
	b.SetBytes(int64(total))
	b.ReportAllocs()
	b.ResetTimer()
	ts := int64(1700000000000)
	for b.Loop() {
		if _, err := s.AppendBatch(recs, ts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkPlainWrite1KiB writes the same bytes sequentially through the same
// mapped-file API (mappedFileQueue.createFile, mappedFile.appendBytes) with none of the
// store logic, rolling to a new file when one is full: the ceiling for Append1KiB.
func BenchmarkPlainWrite1KiB(b *testing.B) {
	q := newMappedFileQueue(b.TempDir(), benchSegSize, false)
	defer q.close()
	recs, total := benchBatch(b)
	b.SetBytes(int64(total))
	b.ReportAllocs()
	f, err := q.createFile(0)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		for _, r := range recs {
			if f.remaining() < int64(len(r)) {
				if f, err = q.createFile(f.end()); err != nil {
					b.Fatal(err)
				}
			}
			f.appendBytes(r)
		}
	}
	b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "msgs/s")
}
