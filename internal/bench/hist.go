package bench

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Every latency histogram of a run covers the same range, so any two merge.
const (
	// histUnit is the resolution: a loopback send takes tens of µs, so 1 µs is
	// the coarsest unit that still tells them apart.
	histUnit = time.Microsecond
	// histMax is the largest value kept. A consumer that starts on a day-old
	// backlog sees older messages; such values are recorded as histMax and
	// counted as clipped, so the summary says the tail is cut.
	histMax = time.Hour
	// histSigFigs: three significant digits, 0.1% error at every magnitude.
	// A histogram with this range then takes 188 KB (hdrhistogram-go ByteSize),
	// whatever the number of samples.
	histSigFigs = 3
)

// newHistogram returns an empty histogram of histUnit values up to histMax.
func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(histMax/histUnit), histSigFigs)
}

// histValue converts d to a histogram value: negative (a clock behind the
// broker's, for born and store times) becomes 0, above histMax becomes
// histMax, and clipped says the value was cut.
func histValue(d time.Duration) (v int64, clipped bool) {
	switch {
	case d < 0:
		return 0, true
	case d > histMax:
		return int64(histMax / histUnit), true
	}
	return int64(d / histUnit), false
}

// histDuration converts a histogram value back to a duration.
func histDuration(v int64) time.Duration { return time.Duration(v) * histUnit }

// Stats are the usual summary numbers of one latency distribution.
type Stats struct {
	Count                          int64
	P50, P90, P99, P999, Max, Mean time.Duration
}

// statsOf reads Stats from h.
func statsOf(h *hdrhistogram.Histogram) Stats {
	if h.TotalCount() == 0 {
		return Stats{}
	}
	vs := h.ValueAtPercentilesSlice([]float64{50, 90, 99, 99.9})
	return Stats{
		Count: h.TotalCount(),
		P50:   histDuration(vs[0]), P90: histDuration(vs[1]), P99: histDuration(vs[2]), P999: histDuration(vs[3]),
		Max:  histDuration(h.Max()),
		Mean: time.Duration(h.Mean() * float64(histUnit)),
	}
}

// Point is one row of a percentile table: Percent of the samples took at most
// Value, and Count samples did.
type Point struct {
	Percent float64
	Value   time.Duration
	Count   int64
}

// tablePercents are the rows of the final percentile table.
var tablePercents = []float64{0, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100}

// percentileTable returns h's value and cumulative count at tablePercents.
func percentileTable(h *hdrhistogram.Histogram) []Point {
	if h.TotalCount() == 0 {
		return nil
	}
	vs := h.ValueAtPercentilesSlice(tablePercents)
	out := make([]Point, len(vs))
	for i, v := range vs {
		out[i] = Point{Percent: tablePercents[i], Value: histDuration(v), Count: countAtOrBelow(h, v)}
	}
	return out
}

// countAtOrBelow counts the samples of h whose value is equivalent to v or lower.
func countAtOrBelow(h *hdrhistogram.Histogram, v int64) int64 {
	var n int64
	for _, b := range h.Distribution() {
		if b.From > v {
			break
		}
		n += b.Count
	}
	return n
}

// Bucket is one bar of the final histogram: Count samples above the previous
// bucket's Upper and at most Upper.
type Bucket struct {
	Upper time.Duration
	Count int64
}

// bucketUpper is the bound of the bucket that holds d: 1, 2, 5 times a power
// of ten, from 10 µs, so the bars read like the tables (≤ 2ms, ≤ 5ms, ≤ 10ms).
func bucketUpper(d time.Duration) time.Duration {
	for decade := 10 * time.Microsecond; ; decade *= 10 {
		for _, m := range []time.Duration{1, 2, 5} {
			if m*decade >= histMax {
				return histMax
			}
			if d <= m*decade {
				return m * decade
			}
		}
	}
}

// logBuckets folds h into the buckets of bucketUpper, the bars the summary
// prints; empty buckets are left out.
func logBuckets(h *hdrhistogram.Histogram) []Bucket {
	var out []Bucket
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		upper := bucketUpper(histDuration(b.To))
		if n := len(out); n > 0 && out[n-1].Upper == upper {
			out[n-1].Count += b.Count
			continue
		}
		out = append(out, Bucket{Upper: upper, Count: b.Count})
	}
	return out
}
