package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// round keeps three significant figures of the durations a human reads.
func round(d time.Duration) time.Duration {
	unit := time.Microsecond
	for limit := time.Millisecond; d >= limit && unit < time.Second; limit *= 10 {
		unit *= 10
	}
	return d.Round(unit)
}

// liveLine is the line printed each second: the interval's rates, its latency
// percentiles of every series, and the run's totals so far.
func liveLine(iv Interval, series []Series, total, failed int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%6.1fs %8.0f msgs/s %7.2f MB/s", iv.Elapsed.Seconds(), iv.MsgsPerSec(), iv.MBPerSec())
	for i, s := range series {
		st := iv.Latency[i]
		if st.Count == 0 {
			fmt.Fprintf(&b, "  %s -", s.Name) // no sample: no percentiles, not zeros
			continue
		}
		fmt.Fprintf(&b, "  %s p50 %s p99 %s p999 %s max %s", s.Name, round(st.P50), round(st.P99), round(st.P999), round(st.Max))
	}
	fmt.Fprintf(&b, "  total %d failed %d\n", total, failed)
	return b.String()
}

// writeSummary prints the final summary: one line that scripts grep
// ("summary: N ok, M failed in …"), then per series its percentile table and
// log-scale histogram.
func writeSummary(w io.Writer, s Summary, note string) {
	fmt.Fprintf(w, "\nsummary: %d ok, %d failed in %s: %.0f msgs/s, %.2f MB/s",
		s.Msgs, s.Failed, s.Elapsed.Round(time.Millisecond), s.MsgsPerSec(), s.MBPerSec())
	if len(s.Series) > 0 && s.Latency[0].Count > 0 {
		first := s.Latency[0]
		fmt.Fprintf(w, ", %s p50 %s p99 %s max %s", s.Series[0].Name, round(first.P50), round(first.P99), round(first.Max))
	}
	fmt.Fprintln(w)
	if note != "" {
		fmt.Fprintln(w, note)
	}
	for _, e := range s.Errors {
		fmt.Fprintf(w, "failed: %d msgs: %s\n", e.Msgs, e.Error)
	}
	if s.Clipped > 0 {
		fmt.Fprintf(w, "%d latency samples were outside 0 … %s (clock skew or a backlog that old) and are counted at the bound\n",
			s.Clipped, histMax)
	}
	for i, se := range s.Series {
		if s.Latency[i].Count == 0 {
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", se.Name, se.Title)
		fmt.Fprintf(w, "  %10s %10s %10s\n", "percentile", "latency", "count")
		for _, p := range s.Tables[i] {
			fmt.Fprintf(w, "  %9s%% %10s %10d\n", trimFloat(p.Percent), round(p.Value), p.Count)
		}
		writeBars(w, s.Buckets[i])
	}
}

// writeBars prints the log-scale histogram, one bar per bucket.
func writeBars(w io.Writer, bs []Bucket) {
	var most int64
	for _, b := range bs {
		most = max(most, b.Count)
	}
	for _, b := range bs {
		label := "≤ " + b.Upper.String()
		fmt.Fprintf(w, "  %10s %10d %s\n", label, b.Count, strings.Repeat("█", int(max(1, b.Count*40/most))))
	}
}

// trimFloat prints a percent without trailing zeros: 50, 99.9, 99.99.
func trimFloat(f float64) string {
	s := fmt.Sprintf("%.3f", f)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
