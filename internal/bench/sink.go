package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
)

// RunInfo describes a run in the JSON summary, so a file of results says what
// produced it.
type RunInfo struct {
	Command      string  `json:"command"` // produce or consume
	Client       string  `json:"client"`
	Topic        string  `json:"topic"`
	Group        string  `json:"group,omitempty"`
	Mode         string  `json:"mode,omitempty"`
	Producers    int     `json:"producers,omitempty"`
	Window       int     `json:"window,omitempty"`
	Count        int     `json:"count"`
	DurationS    float64 `json:"duration_s,omitempty"`
	Rate         float64 `json:"rate,omitempty"` // 0 = closed loop
	Size         int     `json:"size,omitempty"`
	Batch        int     `json:"batch,omitempty"`
	Tag          string  `json:"tag,omitempty"`
	KeyPrefix    string  `json:"key_prefix,omitempty"`
	KeyRandom    bool    `json:"key_random,omitempty"`
	DelayLevel   int     `json:"delay_level,omitempty"`
	PropertySize int     `json:"property_size,omitempty"`
	Transaction  bool    `json:"transaction,omitempty"`
}

// sink receives the numbers of a run in one machine-readable format.
type sink interface {
	interval(Interval) error
	summary(Summary) error
}

// ms is a duration in milliseconds, the unit of every latency column.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// csvSink writes one header, one "interval" row per report and one "total"
// row. Columns: type, elapsed_s, interval_s, ops, msgs, bytes, failed,
// msgs_per_s, mb_per_s, then for every series S: S_count, S_p50_ms, S_p90_ms,
// S_p99_ms, S_p999_ms, S_max_ms, S_mean_ms.
type csvSink struct {
	w      *csv.Writer
	series []Series
}

func newCSVSink(w io.Writer, series []Series) (*csvSink, error) {
	s := &csvSink{w: csv.NewWriter(w), series: series}
	head := []string{"type", "elapsed_s", "interval_s", "ops", "msgs", "bytes", "failed", "msgs_per_s", "mb_per_s"}
	for _, se := range series {
		for _, c := range []string{"count", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms"} {
			head = append(head, se.Name+"_"+c)
		}
	}
	return s, s.write(head)
}

func (s *csvSink) write(rec []string) error {
	if err := s.w.Write(rec); err != nil {
		return err
	}
	s.w.Flush() // a row per second: a reader tailing the file sees it at once
	return s.w.Error()
}

func (s *csvSink) row(kind string, elapsed, span time.Duration, ops, msgs, bytes, failed int64, rate, mbps float64, lat []Stats) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	rec := []string{kind, f(elapsed.Seconds()), f(span.Seconds()), i(ops), i(msgs), i(bytes), i(failed), f(rate), f(mbps)}
	for _, st := range lat {
		rec = append(rec, i(st.Count), f(ms(st.P50)), f(ms(st.P90)), f(ms(st.P99)), f(ms(st.P999)), f(ms(st.Max)), f(ms(st.Mean)))
	}
	return s.write(rec)
}

func (s *csvSink) interval(iv Interval) error {
	return s.row("interval", iv.Elapsed, iv.Span, iv.Ops, iv.Msgs, iv.Bytes, iv.Failed, iv.MsgsPerSec(), iv.MBPerSec(), iv.Latency)
}

func (s *csvSink) summary(sm Summary) error {
	return s.row("total", sm.Elapsed, sm.Elapsed, sm.Ops, sm.Msgs, sm.Bytes, sm.Failed, sm.MsgsPerSec(), sm.MBPerSec(), sm.Latency)
}

// jsonSink writes JSON Lines: one object per report ("type": "interval") and
// a last one ("type": "summary") with the run's options and, per series, the
// percentile table.
type jsonSink struct {
	enc    *json.Encoder
	series []Series
	run    RunInfo
}

// JSONStats is one series' numbers in the JSON output, in milliseconds.
type JSONStats struct {
	Count  int64   `json:"count"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"`
	MeanMs float64 `json:"mean_ms"`
}

// JSONPoint is one row of a percentile table in the JSON summary.
type JSONPoint struct {
	Percentile float64 `json:"percentile"`
	ValueMs    float64 `json:"value_ms"`
	Count      int64   `json:"count"`
}

// JSONRecord is one line of the JSON output; Run, Percentiles, Clipped and Errors
// are set on the summary only.
type JSONRecord struct {
	Type        string                 `json:"type"` // interval or summary
	ElapsedS    float64                `json:"elapsed_s"`
	IntervalS   float64                `json:"interval_s"`
	Ops         int64                  `json:"ops"`
	Msgs        int64                  `json:"msgs"`
	Bytes       int64                  `json:"bytes"`
	Failed      int64                  `json:"failed"`
	MsgsPerS    float64                `json:"msgs_per_s"`
	MBPerS      float64                `json:"mb_per_s"`
	Latency     map[string]JSONStats   `json:"latency"`
	Run         *RunInfo               `json:"run,omitempty"`
	Percentiles map[string][]JSONPoint `json:"percentiles,omitempty"`
	Clipped     int64                  `json:"clipped,omitempty"`
	Errors      []ErrorCount           `json:"errors,omitempty"`
}

func newJSONSink(w io.Writer, series []Series, run RunInfo) *jsonSink {
	return &jsonSink{enc: json.NewEncoder(w), series: series, run: run}
}

func (s *jsonSink) latency(lat []Stats) map[string]JSONStats {
	out := make(map[string]JSONStats, len(lat))
	for i, st := range lat {
		out[s.series[i].Name] = jsonStatsOf(st)
	}
	return out
}

func jsonStatsOf(st Stats) JSONStats {
	return JSONStats{Count: st.Count, P50Ms: ms(st.P50), P90Ms: ms(st.P90), P99Ms: ms(st.P99),
		P999Ms: ms(st.P999), MaxMs: ms(st.Max), MeanMs: ms(st.Mean)}
}

func (s *jsonSink) interval(iv Interval) error {
	return s.enc.Encode(JSONRecord{Type: "interval", ElapsedS: iv.Elapsed.Seconds(), IntervalS: iv.Span.Seconds(),
		Ops: iv.Ops, Msgs: iv.Msgs, Bytes: iv.Bytes, Failed: iv.Failed, MsgsPerS: iv.MsgsPerSec(), MBPerS: iv.MBPerSec(),
		Latency: s.latency(iv.Latency)})
}

func (s *jsonSink) summary(sm Summary) error {
	rec := JSONRecord{Type: "summary", ElapsedS: sm.Elapsed.Seconds(), IntervalS: sm.Elapsed.Seconds(),
		Ops: sm.Ops, Msgs: sm.Msgs, Bytes: sm.Bytes, Failed: sm.Failed, MsgsPerS: sm.MsgsPerSec(), MBPerS: sm.MBPerSec(),
		Latency: s.latency(sm.Latency), Run: &s.run, Percentiles: map[string][]JSONPoint{}, Clipped: sm.Clipped, Errors: sm.Errors}
	for i, table := range sm.Tables {
		pts := make([]JSONPoint, 0, len(table))
		for _, p := range table {
			pts = append(pts, JSONPoint{Percentile: p.Percent, ValueMs: ms(p.Value), Count: p.Count})
		}
		rec.Percentiles[s.series[i].Name] = pts
	}
	return s.enc.Encode(rec)
}

// sinks opens the machine-readable outputs that are set.
func sinks(csvW, jsonW io.Writer, series []Series, run RunInfo) ([]sink, error) {
	var out []sink
	if csvW != nil {
		s, err := newCSVSink(csvW, series)
		if err != nil {
			return nil, fmt.Errorf("bench: write --csv: %w", err)
		}
		out = append(out, s)
	}
	if jsonW != nil {
		out = append(out, newJSONSink(jsonW, series, run))
	}
	return out, nil
}
