package stats

import (
	"fmt"
	"strings"
)

// rangeNames label putMessageDistributeTime's counts; a put of d ms falls in
// the first range whose upper bound (rangeUpper, exclusive) exceeds it, with
// 0 ms alone in the first (Apache's StoreStatsService).
var rangeNames = [...]string{"[<=0ms]", "[0~10ms]", "[10~50ms]", "[50~100ms]", "[100~200ms]", "[200~500ms]",
	"[500ms~1s]", "[1~2s]", "[2~3s]", "[3~4s]", "[4~5s]", "[5~10s]", "[10s~]"}

var rangeUpper = [...]int64{1, 10, 50, 100, 200, 500, 1000, 2000, 3000, 4000, 5000, 10000}

// fineBounds are the inclusive upper bounds (ms) of the finer buckets the
// percentiles interpolate in: 1 ms steps to 20, then 2, 5, 10, 50, 100 and
// 1000 ms steps to 10 s, as Apache's putLatency99 uses; above the last, one
// open bucket.
var fineBounds = func() []int64 {
	var out []int64
	at := int64(0)
	for _, step := range []struct{ width, n int64 }{{1, 20}, {2, 15}, {5, 10}, {10, 10}, {50, 6}, {100, 5}, {1000, 9}} {
		for range step.n {
			at += step.width
			out = append(out, at)
		}
	}
	return out
}()

// latency is the put latencies of one minute.
type latency struct {
	ranges [len(rangeNames)]int64
	fine   []int64 // len(fineBounds)+1; the last is the open bucket
	max    int64   // largest put of the minute, ms
}

func newLatency() *latency { return &latency{fine: make([]int64, len(fineBounds)+1)} }

func (l *latency) add(ms int64) {
	r := 0
	for r < len(rangeUpper) && ms >= rangeUpper[r] {
		r++
	}
	l.ranges[r]++
	f := 0
	for f < len(fineBounds) && ms > fineBounds[f] {
		f++
	}
	l.fine[f]++
	l.max = max(l.max, ms)
}

// distribution is putMessageDistributeTime: "[<=0ms]:3 [0~10ms]:12 … ", each
// range followed by a blank as Apache prints it.
func (l *latency) distribution() string {
	var b strings.Builder
	for i, n := range l.ranges {
		fmt.Fprintf(&b, "%s:%d ", rangeNames[i], n)
	}
	return b.String()
}

// percentile is the latency (ms) below which the fraction p of the minute's
// puts fall, interpolated linearly inside the bucket it lands in; the open
// bucket ends at the minute's largest put. 0 without puts.
func (l *latency) percentile(p float64) float64 {
	var total int64
	for _, n := range l.fine {
		total += n
	}
	if total == 0 {
		return 0
	}
	target := int64(float64(total) * p)
	var passed int64
	lower := int64(0)
	for i, n := range l.fine {
		upper := l.max
		if i < len(fineBounds) {
			upper = fineBounds[i]
		}
		if target <= passed+n && n > 0 {
			return float64(lower) + float64(upper-lower)*float64(target-passed)/float64(n)
		}
		passed += n
		lower = upper
	}
	return float64(l.max)
}
