package raftlog

import (
	"fmt"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// BenchmarkStoreLogs measures what a raft leader or follower pays per
// AppendEntries batch: StoreLogs through the cached store as OpenStores builds
// it, fsync included. Entries are 16 KiB (a group-committed batch of small
// messages). Reported: bytes/s via SetBytes, entries/s and fsyncs/s (one per
// StoreLogs call).
func BenchmarkStoreLogs(b *testing.B) {
	const entrySize = 16 << 10
	for _, kind := range []LogStoreKind{LogStoreWAL, LogStoreBoltDB, LogStoreCommitLog} {
		for _, batch := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/batch=%d", kind, batch), func(b *testing.B) {
				s, err := OpenStores(b.TempDir(), kind, hclog.NewNullLogger())
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				data := make([]byte, entrySize)
				for i := range data {
					data[i] = byte(i * 31)
				}
				logs := make([]*raft.Log, batch)
				next := uint64(1)
				b.SetBytes(int64(batch * entrySize))
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					// Fresh entries each call: LogCache keeps the pointers.
					for j := range logs {
						logs[j] = &raft.Log{Index: next, Term: 1, Type: raft.LogCommand, Data: data}
						next++
					}
					if err := s.Log.StoreLogs(logs); err != nil {
						b.Fatal(err)
					}
				}
				secs := b.Elapsed().Seconds()
				b.ReportMetric(float64(next-1)/secs, "entries/s")
				b.ReportMetric(float64(b.N)/secs, "fsyncs/s")
			})
		}
	}
}
