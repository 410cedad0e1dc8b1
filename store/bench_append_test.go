package store

import (
	"slices"
	"sort"
	"testing"
	"time"
)

// benchSegSize is large enough that roll-over is rare but exercised.
const benchSegSize = 64 << 20

// openBench opens a store with benchSegSize segments and the given warm-ahead
// window (0: the default, negative: off). testConfig's hour-long flush interval
// keeps the flusher out of the measurement.
func openBench(b *testing.B, warmAhead int64) *Store {
	cfg := testConfig(b.TempDir())
	cfg.CommitLogSegmentSize = benchSegSize
	cfg.WarmAhead = warmAhead
	return openTest(b, cfg)
}

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
	s := openBench(b, 0)
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

// BenchmarkAppendFreshPages measures the latency of each AppendBatch (32 × 1 KiB)
// into fresh, fallocated segments at a steady pace of one batch per millisecond
// (about 32 MB/s, a busy broker), with the warmer populating pages ahead of the
// writer and without it. Without it, a page fault now and then reads ahead and
// zero-fills a large folio inside the append (warmer.go). Compare p99 and max
// between the two in one run: go test -run '^$' -bench AppendFreshPages -benchtime 4000x ./store/
func BenchmarkAppendFreshPages(b *testing.B) {
	for _, bc := range []struct {
		name string
		warm int64
	}{{"warm", DefaultWarmAhead}, {"off", -1}} {
		b.Run(bc.name, func(b *testing.B) {
			s := openBench(b, bc.warm)
			defer s.Close()
			recs, total := benchBatch(b)
			b.SetBytes(int64(total))
			lat := make([]time.Duration, 0, b.N)
			ts := int64(1700000000000)
			next := time.Now()
			b.ResetTimer()
			for b.Loop() {
				next = next.Add(time.Millisecond)
				if d := time.Until(next); d > 0 {
					time.Sleep(d)
				}
				t0 := time.Now()
				if _, err := s.AppendBatch(recs, ts); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			stalls := len(lat) - sort.Search(len(lat), func(i int) bool { return lat[i] >= 5*time.Millisecond })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
			b.ReportMetric(float64(stalls), "stalls≥5ms")
		})
	}
}
