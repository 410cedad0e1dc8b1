package fsm

import (
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/store"
)

// BenchmarkApplyPut measures Apply of PutMessages entries (64 messages of 1 KiB each)
// into the real store: decode, metadata checks, one AppendBatch, results.
func BenchmarkApplyPut(b *testing.B) {
	const perEntry = 64
	dir := b.TempDir()
	st, err := store.Open(store.Config{Dir: dir, CommitLogSegmentSize: 256 << 20, Logger: hclog.NewNullLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	f, err := New(Config{Store: st, Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	f.Apply(cmdLog(1, enc(b, TopicUpsert{Topic: TopicConfig{Name: "Bench", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}})))
	body := strings.Repeat("x", 1024)
	msgs := make([][]byte, perEntry)
	for i := range msgs {
		msgs[i] = msg(b, "Bench", int32(i%8), body)
	}
	data := enc(b, PutMessages{StoreTimestamp: 1, StoreHost: leaderHost, Messages: msgs})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st.MaxPhysicalOffset() > 200<<20 { // stay inside one segment's worth of disk
			b.StopTimer()
			if err := st.Truncate(0); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		r := f.Apply(cmdLog(uint64(i+2), data)).(*PutResult)
		if r.Err != nil || r.Results[perEntry-1].Err != nil {
			b.Fatal(r.Err, r.Results[perEntry-1].Err)
		}
	}
	b.ReportMetric(float64(b.N*perEntry)/b.Elapsed().Seconds(), "msgs/s")
}
