package bench

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Series names one latency distribution that a run records for every
// operation, in the order a recorder's ok takes them.
type Series struct {
	Name  string // column prefix in CSV and key in JSON: "latency", "service", "born", "store"
	Title string // heading of its final histogram
}

// counts are the plain counters of a recorder or an interval.
type counts struct {
	ops, msgs, bytes, failed int64
	clipped                  int64 // latency samples outside [0, histMax]
}

func (c *counts) add(o counts) {
	c.ops += o.ops
	c.msgs += o.msgs
	c.bytes += o.bytes
	c.failed += o.failed
	c.clipped += o.clipped
}

// recorder is the latency and throughput record of one worker. Only its
// worker (ok, fail) and the meter's once-a-second collect take its lock, so
// the hot path never waits on another worker; collect swaps in spare
// histograms instead of merging under the lock, so a worker waits at most a
// pointer swap.
type recorder struct {
	mu sync.Mutex
	c  counts
	// Invariant: len(cur) == len(spare) == the meter's series count, and
	// spare is empty outside collect.
	cur, spare []*hdrhistogram.Histogram
	// errs counts the failed messages by error text (errorKinds).
	errs errorTally
}

// maxErrorKinds bounds the distinct error texts a run keeps: a run that
// fails a million sends with a million different texts (each names its
// message) still prints a short list, the rest counted as otherErrors.
const maxErrorKinds = 8

// otherErrors is the text the failures past maxErrorKinds kinds are counted under.
const otherErrors = "(other errors)"

// errorTally counts failed messages by error text.
type errorTally map[string]int64

// add counts msgs failed messages under text, or under otherErrors when the
// tally already holds maxErrorKinds other texts.
func (t *errorTally) add(text string, msgs int64) {
	if *t == nil {
		*t = make(errorTally)
	}
	if _, ok := (*t)[text]; !ok && len(*t) >= maxErrorKinds {
		text = otherErrors
	}
	(*t)[text] += msgs
}

// ErrorCount is one kind of failure of a run: its error text and the
// messages that failed with it.
type ErrorCount struct {
	Error string `json:"error"`
	Msgs  int64  `json:"msgs"`
}

// sorted lists the tally, most messages first.
func (t errorTally) sorted() []ErrorCount {
	var out []ErrorCount
	for text, n := range t {
		out = append(out, ErrorCount{Error: text, Msgs: n})
	}
	slices.SortFunc(out, func(a, b ErrorCount) int {
		return cmp.Or(cmp.Compare(b.Msgs, a.Msgs), cmp.Compare(a.Error, b.Error))
	})
	return out
}

func newRecorder(series int) *recorder {
	r := &recorder{cur: make([]*hdrhistogram.Histogram, series), spare: make([]*hdrhistogram.Histogram, series)}
	for i := range series {
		r.cur[i], r.spare[i] = newHistogram(), newHistogram()
	}
	return r
}

// ok records one successful operation of msgs messages and bytes body bytes
// with one latency per series. It does not allocate.
func (r *recorder) ok(msgs, bytes int64, lat ...time.Duration) {
	r.mu.Lock()
	r.c.ops++
	r.c.msgs += msgs
	r.c.bytes += bytes
	for i, d := range lat {
		v, clipped := histValue(d)
		if clipped {
			r.c.clipped++
		}
		_ = r.cur[i].RecordValue(v) // cannot fail: histValue keeps v in range
	}
	r.mu.Unlock()
}

// fail records a failed operation of msgs messages and why it failed.
func (r *recorder) fail(msgs int64, err error) {
	text := "failed without an error"
	if err != nil {
		text = err.Error()
	}
	r.mu.Lock()
	r.c.failed += msgs
	r.errs.add(text, msgs)
	r.mu.Unlock()
}

// collect moves what r recorded since the last collect into c and into
// into[i] (one histogram per series), leaving r empty. Only the meter's
// goroutine calls it, so spare is read outside the lock: the worker never
// touches it.
func (r *recorder) collect(c *counts, errs *errorTally, into []*hdrhistogram.Histogram) {
	r.mu.Lock()
	got, gotErrs := r.c, r.errs
	r.c, r.errs = counts{}, nil
	r.cur, r.spare = r.spare, r.cur
	r.mu.Unlock()
	c.add(got)
	for text, n := range gotErrs {
		errs.add(text, n)
	}
	for i, h := range r.spare {
		into[i].Merge(h)
		h.Reset()
	}
}

// meter gathers the recorders of a run: Interval each second (collect every
// recorder, fold into the run's totals), Summary at the end. It belongs to the
// one goroutine that reports; recorders are its only shared state.
type meter struct {
	series []Series
	recs   []*recorder
	start  time.Time
	last   time.Time // end of the previous interval
	total  counts
	errs   errorTally // the run's failures so far, by error text
	// Invariant: totalH[i] holds every sample of series i collected so far.
	totalH []*hdrhistogram.Histogram
	ivH    []*hdrhistogram.Histogram // scratch of one interval
}

// newMeter returns a meter of workers recorders for series, starting at start.
func newMeter(series []Series, workers int, start time.Time) *meter {
	m := &meter{series: series, start: start, last: start}
	for range workers {
		m.recs = append(m.recs, newRecorder(len(series)))
	}
	for range series {
		m.totalH = append(m.totalH, newHistogram())
		m.ivH = append(m.ivH, newHistogram())
	}
	return m
}

// Interval is what a run did between two reports.
type Interval struct {
	Elapsed time.Duration // from the start of the run to the end of this interval
	Span    time.Duration // length of this interval
	Ops     int64         // sends (a batch is one) or consumed messages
	Msgs    int64         // messages sent or received
	Bytes   int64         // their body bytes
	Failed  int64         // messages whose send failed
	Latency []Stats       // one per series of the run, in its order
}

// MsgsPerSec is the interval's message rate.
func (iv Interval) MsgsPerSec() float64 { return perSec(iv.Msgs, iv.Span) }

// MBPerSec is the interval's body throughput in MB (10^6 bytes) per second.
func (iv Interval) MBPerSec() float64 { return perSec(iv.Bytes, iv.Span) / 1e6 }

func perSec(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// interval collects every recorder at now and returns what happened since the
// previous call.
func (m *meter) interval(now time.Time) Interval {
	var c counts
	for _, r := range m.recs {
		r.collect(&c, &m.errs, m.ivH)
	}
	iv := Interval{Elapsed: now.Sub(m.start), Span: now.Sub(m.last), Ops: c.ops, Msgs: c.msgs, Bytes: c.bytes, Failed: c.failed}
	m.last = now
	m.total.add(c)
	for i, h := range m.ivH {
		iv.Latency = append(iv.Latency, statsOf(h))
		m.totalH[i].Merge(h)
		h.Reset()
	}
	return iv
}

// Summary is a whole run: totals, and per series its stats, percentile table
// and log-scale histogram.
type Summary struct {
	Elapsed time.Duration
	Ops     int64
	Msgs    int64
	Bytes   int64
	Failed  int64
	// Errors are the failures by error text, most messages first.
	Errors []ErrorCount
	// Clipped counts latency samples below 0 (clock skew) or above histMax,
	// recorded as 0 and histMax.
	Clipped int64
	Series  []Series
	Latency []Stats
	Tables  [][]Point
	Buckets [][]Bucket
}

// MsgsPerSec is the run's message rate.
func (s Summary) MsgsPerSec() float64 { return perSec(s.Msgs, s.Elapsed) }

// MBPerSec is the run's body throughput in MB (10^6 bytes) per second.
func (s Summary) MBPerSec() float64 { return perSec(s.Bytes, s.Elapsed) / 1e6 }

// summary returns the run up to the last interval; call interval(now) first
// so nothing recorded is left out.
func (m *meter) summary() Summary {
	s := Summary{Elapsed: m.last.Sub(m.start), Ops: m.total.ops, Msgs: m.total.msgs, Bytes: m.total.bytes,
		Failed: m.total.failed, Errors: m.errs.sorted(), Clipped: m.total.clipped, Series: m.series}
	for _, h := range m.totalH {
		s.Latency = append(s.Latency, statsOf(h))
		s.Tables = append(s.Tables, percentileTable(h))
		s.Buckets = append(s.Buckets, logBuckets(h))
	}
	return s
}
