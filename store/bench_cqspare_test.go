package store

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkConsumeQueueRollOver: how long the dispatcher's put of one entry
// takes while a queue rolls over to a new file every 1,000 entries, fed at
// 10k entries/s, with the next file made ahead as a spare (decision 0021) and
// without (created on the dispatch path, as before). Reported: the longest put
// and the 99.9th percentile, in µs. Run with a fixed count, e.g.
// -bench ConsumeQueueRollOver -benchtime 20000x.
func BenchmarkConsumeQueueRollOver(b *testing.B) {
	for _, ahead := range []bool{false, true} {
		b.Run(fmt.Sprintf("ahead=%v", ahead), func(b *testing.B) {
			c, err := newConsumeQueues(b.TempDir(), 1000, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.close()
			c.spares.off = !ahead
			q, err := c.getOrCreate("T", 0)
			if err != nil {
				b.Fatal(err)
			}
			took := make([]time.Duration, 0, b.N)
			tick := time.NewTicker(100 * time.Microsecond)
			defer tick.Stop()
			b.ResetTimer()
			for i := range b.N {
				<-tick.C
				t0 := time.Now()
				if err := q.put(QueueOffset(i), cqEntry{phys: PhysicalOffset(i) * 1000, size: 1000}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)-1].Microseconds()), "max-put-µs")
			b.ReportMetric(float64(took[len(took)*999/1000].Microseconds()), "p999-put-µs")
		})
	}
}
