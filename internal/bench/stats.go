package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// latencies collects per-operation latencies; it is safe for concurrent use.
type latencies struct {
	mu      sync.Mutex
	samples []time.Duration
	window  []time.Duration // since the last progress line
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.samples = append(l.samples, d)
	l.window = append(l.window, d)
	l.mu.Unlock()
}

// takeWindow returns and resets the samples since the previous call.
func (l *latencies) takeWindow() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.window
	l.window = nil
	return w
}

func (l *latencies) all() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Duration(nil), l.samples...)
}

// percentile returns the p-th percentile (0-100) of sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

func sortDurations(d []time.Duration) []time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d
}

// histogram prints a log-scale latency histogram.
func histogram(w io.Writer, sorted []time.Duration) {
	if len(sorted) == 0 {
		return
	}
	bounds := []time.Duration{}
	for b := 250 * time.Microsecond; b < 20*time.Second; b *= 2 {
		bounds = append(bounds, b)
	}
	counts := make([]int, len(bounds)+1)
	for _, d := range sorted {
		i := sort.Search(len(bounds), func(i int) bool { return d <= bounds[i] })
		counts[i]++
	}
	maxCount := 0
	for _, c := range counts {
		maxCount = max(maxCount, c)
	}
	for i, c := range counts {
		if c == 0 {
			continue
		}
		label := "> " + bounds[len(bounds)-1].String()
		if i < len(bounds) {
			label = "≤ " + bounds[i].String()
		}
		bar := strings.Repeat("█", max(1, c*40/maxCount))
		fmt.Fprintf(w, "  %10s %8d %s\n", label, c, bar)
	}
}
