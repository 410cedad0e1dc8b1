package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// clock is the time the workers read and wait on; tests drive a fake one.
type clock interface {
	Now() time.Time
	// SleepUntil waits until t, and reports false if ctx ended first.
	SleepUntil(ctx context.Context, t time.Time) bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) SleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// op is one send: messages first … first+msgs-1 of the run, due at due and
// sent at sent (which the worker sets, and which is the messages' born time).
type op struct {
	first int64
	msgs  int
	due   time.Time
	sent  time.Time
}

// plan hands out the sends of a run to every worker. Closed loop (rate 0): a
// send is due when a worker asks for it. Open loop: message n is due at
// start + n/rate whatever happened before, so a stalled broker shows as
// latency of every send that should have gone out meanwhile instead of as
// sends that were never tried (coordinated omission).
type plan struct {
	start    time.Time
	rate     float64 // messages per second over all workers; 0 = closed loop
	count    int64   // messages of the run; 0 = until deadline
	deadline time.Time
	batch    int64
	next     atomic.Int64 // first message of the next send
}

func newPlan(o ProduceOptions, start time.Time) *plan {
	return &plan{start: start, rate: o.Rate, count: int64(o.Count), deadline: start.Add(o.Duration), batch: int64(o.Batch)}
}

func (p *plan) open() bool { return p.rate > 0 }

// dueOf is when message n is due in an open-loop run.
func (p *plan) dueOf(n int64) time.Time {
	return p.start.Add(time.Duration(float64(n) / p.rate * float64(time.Second)))
}

// claim returns the next send, or false once the run has handed out every
// message (Count) or reached its end (Duration: now in closed loop, the due
// time in open loop). The last send of a counted run may be a short batch.
func (p *plan) claim(now time.Time) (op, bool) {
	if p.count == 0 && !p.open() && !now.Before(p.deadline) {
		return op{}, false
	}
	first := p.next.Add(p.batch) - p.batch
	msgs := p.batch
	if p.count > 0 {
		if first >= p.count {
			return op{}, false
		}
		msgs = min(msgs, p.count-first)
	}
	o := op{first: first, msgs: int(msgs), due: now}
	if p.open() {
		o.due = p.dueOf(first)
		if p.count == 0 && !o.due.Before(p.deadline) {
			return op{}, false
		}
	}
	return o, true
}

// sendFunc performs one send and returns the body bytes it carried.
type sendFunc func(ctx context.Context, o op) (bytes int64, err error)

// asyncSendFunc starts one send and returns; done runs exactly once with what
// sendFunc would have returned. A window of them needs no goroutine per send.
type asyncSendFunc func(o op, done func(bytes int64, err error))

// worker is one producer: it takes sends from the plan, waits until each is
// due, and records it in its own recorder: the latency from the due time,
// and, in open loop, the service time from the moment the request went out.
type worker struct {
	plan  *plan
	clock clock
	rec   *recorder
	send  sendFunc
	// sendAsync, when set, is used by runWindow instead of a goroutine per send.
	sendAsync asyncSendFunc
}

// produceSeries are the latency series a produce run records, in recorder
// order; closed loop has no schedule to be late against, so its one latency
// is the service time.
func produceSeries(open bool, title string) []Series {
	if !open {
		return []Series{{Name: "latency", Title: title}}
	}
	return []Series{
		{Name: "latency", Title: title + ", from its scheduled start (corrected for coordinated omission)"},
		{Name: "service", Title: title + ", from when it was sent (uncorrected service time)"},
	}
}

// next claims a send, waits until it is due and marks it sent. In closed
// loop a send is due when it is claimed, so the claim's reading of the clock
// is its sent time too: the clock is read once per send before it goes out,
// not three times (time.Now was 7 % of the bench client's CPU).
func (w worker) next(ctx context.Context) (op, bool) {
	o, ok := w.plan.claim(w.clock.Now())
	if !ok {
		return op{}, false
	}
	if !w.plan.open() {
		o.sent = o.due
		return o, ctx.Err() == nil
	}
	if !w.clock.SleepUntil(ctx, o.due) {
		return op{}, false
	}
	o.sent = w.clock.Now()
	return o, true
}

// do sends o and records it. The send does not end with ctx: a run that is
// stopped lets the sends in flight finish (each is bounded by its own
// timeout) rather than count them as failed.
func (w worker) do(ctx context.Context, o op) {
	bytes, err := w.send(context.WithoutCancel(ctx), o)
	w.record(o, bytes, err)
}

// record counts o as answered now.
func (w worker) record(o op, bytes int64, err error) {
	t0 := o.sent
	t1 := w.clock.Now()
	switch {
	case err != nil:
		w.rec.fail(int64(o.msgs), err)
	case w.plan.open():
		w.rec.ok(int64(o.msgs), bytes, t1.Sub(o.due), t1.Sub(t0))
	default:
		w.rec.ok(int64(o.msgs), bytes, t1.Sub(t0))
	}
}

// run sends one at a time until the plan is done or ctx ends.
func (w worker) run(ctx context.Context) {
	for {
		o, ok := w.next(ctx)
		if !ok {
			return
		}
		w.do(ctx, o)
	}
}

// runWindow keeps up to window sends in flight (the native client's async
// mode). They share this worker's recorder, whose lock is held for a few
// counter updates, so the window contends only with itself.
func (w worker) runWindow(ctx context.Context, window int) {
	slots := make(chan struct{}, window)
	var inflight sync.WaitGroup
	defer inflight.Wait()
	for {
		// A slot first, then the claim: a send is claimed, and so stamped
		// sent, only when it can go out (with a full window the wait for a
		// slot would otherwise count as its latency).
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		o, ok := w.next(ctx)
		if !ok {
			<-slots
			return
		}
		inflight.Add(1)
		if w.sendAsync != nil {
			w.sendAsync(o, func(bytes int64, err error) {
				w.record(o, bytes, err)
				<-slots
				inflight.Done()
			})
			continue
		}
		go func() {
			defer func() { <-slots; inflight.Done() }()
			w.do(ctx, o)
		}()
	}
}

// runWorkers runs one worker per recorder of m until the plan is done, then
// closes done.
func runWorkers(ctx context.Context, p *plan, m *meter, clk clock, window int, send sendFunc, sendAsync asyncSendFunc, done chan<- struct{}) {
	var wg sync.WaitGroup
	for _, rec := range m.recs {
		w := worker{plan: p, clock: clk, rec: rec, send: send, sendAsync: sendAsync}
		wg.Go(func() {
			if window > 1 {
				w.runWindow(ctx, window)
			} else {
				w.run(ctx)
			}
		})
	}
	wg.Wait()
	close(done)
}
