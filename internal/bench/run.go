package bench

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Result summarises a run for a caller.
type Result struct {
	Sent   int64 // messages acknowledged (produce) or received (consume)
	Failed int64
	Bytes  int64 // body bytes of those messages
	// Elapsed, P50, P99 and Max are of the first series: the send latency, or
	// born → consume for a consumer.
	Elapsed    time.Duration
	P50, P99   time.Duration
	Max        time.Duration
	MsgsPerSec float64
	MBPerSec   float64
	Summary    Summary
}

func resultOf(s Summary) Result {
	r := Result{Sent: s.Msgs, Failed: s.Failed, Bytes: s.Bytes, Elapsed: s.Elapsed,
		MsgsPerSec: s.MsgsPerSec(), MBPerSec: s.MBPerSec(), Summary: s}
	if len(s.Latency) > 0 {
		r.P50, r.P99, r.Max = s.Latency[0].P50, s.Latency[0].P99, s.Latency[0].Max
	}
	return r
}

// report is the reporting side of a run: it owns the meter and writes the
// live line, the CSV rows and the JSON lines.
type report struct {
	m     *meter
	live  io.Writer
	sinks []sink
	err   error // first write error of a sink; the run goes on, the caller gets it
	ticks int   // intervals reported
}

func newReport(m *meter, live, csvW, jsonW io.Writer, run RunInfo) (*report, error) {
	ss, err := sinks(csvW, jsonW, m.series, run)
	if err != nil {
		return nil, err
	}
	return &report{m: m, live: live, sinks: ss}, nil
}

// tick reports the interval that ends at now.
func (r *report) tick(now time.Time) { r.emit(r.m.interval(now)) }

func (r *report) emit(iv Interval) {
	r.ticks++
	fmt.Fprint(r.live, liveLine(iv, r.m.series, r.m.total.msgs, r.m.total.failed))
	for _, s := range r.sinks {
		if err := s.interval(iv); err != nil && r.err == nil {
			r.err = err
		}
	}
}

// finish reports the last, partial interval (unless it is empty and others
// were reported: a run that ends on a tick has nothing left) and the
// summary, with what note says of it.
func (r *report) finish(now time.Time, note func(Summary) string) (Summary, error) {
	if iv := r.m.interval(now); r.ticks == 0 || iv.Ops > 0 || iv.Failed > 0 {
		r.emit(iv)
	}
	s := r.m.summary()
	writeSummary(r.live, s, note(s))
	for _, sk := range r.sinks {
		if err := sk.summary(s); err != nil && r.err == nil {
			r.err = err
		}
	}
	if r.err != nil {
		return s, fmt.Errorf("bench: write results: %w", r.err)
	}
	return s, nil
}

// loop reports once a second until done is closed.
func (r *report) loop(done <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			r.tick(now)
		}
	}
}

// rateNote compares an open-loop run's achieved rate with its target: below
// 95% the latency series says more about the load generator than the broker.
func rateNote(target float64, s Summary) string {
	if target <= 0 {
		return ""
	}
	got := perSec(s.Msgs+s.Failed, s.Elapsed) // sends tried, failed or not
	note := fmt.Sprintf("open loop: target %.0f msgs/s, achieved %.0f msgs/s", target, got)
	if got < 0.95*target {
		note += " (the senders fell behind the schedule: raise --producers or --window, or lower --rate)"
	}
	return note
}

// runner drives the sends of one produce run: the plan, one worker per
// producer, the report each second and at the end.
type runner struct {
	o       ProduceOptions
	info    RunInfo
	title   string // what one latency sample is, for the summary
	summary Summary
}

func newRunner(o ProduceOptions) *runner {
	title := "per send call"
	switch {
	case o.Transaction:
		title = "per transaction (half message, then END_TRANSACTION)"
	case o.Batch > 1:
		title = "per send call of --batch messages"
	}
	return &runner{o: o, title: title, info: RunInfo{Command: "produce", Client: string(o.Client), Topic: o.Topic,
		Group: o.Group, Mode: string(o.Mode), Producers: o.Producers, Window: o.Window, Count: o.Count,
		DurationS: o.Duration.Seconds(), Rate: o.Rate, Size: o.MessageSize, Batch: o.Batch, Tag: o.Tag,
		KeyPrefix: o.KeyPrefix, KeyRandom: o.KeyRandom, DelayLevel: o.DelayLevel, PropertySize: o.PropertySize, Transaction: o.Transaction}}
}

// run starts the clock: it sends with send from o.Producers workers (each
// keeping window sends in flight) until the plan is done, reporting as it goes.
func (r *runner) run(ctx context.Context, window int, send sendFunc) error {
	return r.runWith(ctx, window, send, nil)
}

// runWith is run with an asynchronous send for windows (nil: a goroutine per send).
func (r *runner) runWith(ctx context.Context, window int, send sendFunc, sendAsync asyncSendFunc) error {
	start := time.Now()
	p := newPlan(r.o, start)
	m := newMeter(produceSeries(p.open(), r.title), r.o.Producers, start)
	rep, err := newReport(m, r.o.Out, r.o.CSV, r.o.JSON, r.info)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go runWorkers(ctx, p, m, realClock{}, window, send, sendAsync, done)
	rep.loop(done)
	r.summary, err = rep.finish(time.Now(), func(s Summary) string { return rateNote(r.o.Rate, s) })
	return err
}
