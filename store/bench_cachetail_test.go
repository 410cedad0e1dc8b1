package store

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFollowerAppend measures what a follower does per raft entry under load
// (90 × 1 KiB messages, about 93 KiB): append to the entry log (pwrite), fdatasync,
// apply, with a store flush every 200 entries (about every 500 ms at 40 MB/s), with
// and without a cached-tail bound (decision 0022). sys-ms/MiB is the process's
// system CPU per MiB appended, which is where a page-cache page's price shows. It
// depends on the memory the page cache grows into, so compare the two in one run,
// over enough bytes to leave the memory other runs freed: -benchtime 12000x
// writes about 1 GiB per sub-benchmark (docs/performance.md, thirty-fourth pass).
func BenchmarkFollowerAppend(b *testing.B) {
	for _, tail := range []int64{0, 64 << 20} {
		name := "tail=off"
		if tail > 0 {
			name = fmt.Sprintf("tail=%dMiB", tail>>20)
		}
		b.Run(name, func(b *testing.B) { benchFollowerAppend(b, tail) })
	}
}

func benchFollowerAppend(b *testing.B, tail int64) {
	cfg := entryStoreConfig(b.TempDir())
	cfg.CommitLogSegmentSize = benchSegSize
	cfg.WarmAhead = -1 // the entry log's pages are made by its pwrite, not ahead
	s := openTest(b, cfg)
	defer s.Close()
	s.SetCachedTail(tail)
	recs := make([][]byte, 90)
	size := 0
	for i := range recs {
		recs[i] = testRecord(b, "BenchTopic", int32(i%8), 1024, i)
		size += len(recs[i])
	}
	keep := make([]bool, len(recs))
	for i := range keep {
		keep[i] = true
	}
	el := s.EntryLog()
	var out []AppendResult
	b.SetBytes(int64(size))
	sys0 := sysCPU()
	index := uint64(0)
	for b.Loop() {
		index++
		e := LogEntry{Index: index, Term: 1, Records: recs, StoreTimestamp: 1700000000000 + int64(index)}
		if err := el.Append([]LogEntry{e}); err != nil {
			b.Fatal(err)
		}
		if err := el.Sync(); err != nil {
			b.Fatal(err)
		}
		var err error
		if out, _, err = s.ApplyEntry(index, keep, out[:0]); err != nil {
			b.Fatal(err)
		}
		if index%200 == 0 {
			if _, err := s.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
	mib := float64(b.N) * float64(size) / (1 << 20)
	b.ReportMetric(float64((sysCPU()-sys0).Milliseconds())/mib, "sys-ms/MiB")
}

// sysCPU is the system CPU time this process has used.
func sysCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Stime.Nano())
}
