package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A background load beside a scenario's recorded workload: Go-client, raw and
// (where a JVM and the built module are there) Java producers into a topic of
// its own, recording into the scenario's History, so the checker holds every
// message of the load to the same rules as the workload's (acked means at its
// offset in every replica; the final drain covers the load's topic too).
//
// Its level is measured on the machine it runs on, not configured: the load
// first runs flat out, and the total acknowledged rate then (an ack means
// fsynced on a quorum) is the maximum durable rate; it is then paced so that
// the total is Share of that. Pacing closed-loop producers lands a few points
// under the target, so Share aims above the floor the issue sets (a third).

// LoadOptions configures a Load. Zero values take defaults.
type LoadOptions struct {
	Topic   string   // required
	History *History // required: the scenario's history
	// Queues the producers send to, round-robin (default 4: the queues an
	// auto-created topic gets).
	Queues int
	// GoProducers (rocketmq-client-go, default 4) and RawProducers (RawSender,
	// default 12).
	GoProducers, RawProducers int
	// Java, when set, adds a JVM of Java producers (Dir and Producers are
	// read from it; the rest is set here).
	Java *JavaOptions
	// Share of the measured maximum the paced total aims at (default 0.45).
	Share float64
	// Warmup before each measurement (default 1 s) and the length of one
	// measurement window (default 3 s).
	Warmup, Bench time.Duration
	// Tries is how many paced windows are measured at most until one reaches
	// a third of the maximum (default 2), and Rounds how many times the whole
	// measurement (maximum, then pace) is made until one round does (default
	// 3). On a shared machine a window with a stall of every process (other
	// jobs' CPU and I/O: every ack taking 0.5–2 s for seconds, no broker log
	// line) says nothing about the pace, and a maximum measured while the
	// machine was quiet says nothing about the next ten seconds: both
	// numbers of the round that counts are measured back to back.
	Tries, Rounds int
	// Others is the acknowledged sends of the scenario's own workload so far,
	// counted in the total rate (nil: none).
	Others func() int64
}

// overshoot is how far above Share a paced window may land before the load
// is paced once more (the aim is 40–45 % of the maximum).
const overshoot = 0.05

// LoadLevel is what the bench phase measured and what the load then ran at.
type LoadLevel struct {
	Max      float64  // acked msgs/s, load flat out plus the workload
	Target   float64  // Share × Max
	Achieved float64  // acked msgs/s over Bench once paced (best window)
	Windows  int      // paced windows measured in the round that counts
	Rounds   int      // rounds of measurement made (the last counts)
	Earlier  []string // max and achieved of the rounds before it
	Bench    time.Duration
	// Producers of each kind; Java 0 when they did not run (JavaSkipped says why).
	Go, Raw, Java int
	JavaVersion   string
	JavaSkipped   string
	// Alone: no recorded workload ran beside the load (B2).
	Alone bool
}

// BelowFloor reports whether the load ran at less than a third of the maximum.
func (l LoadLevel) BelowFloor() bool { return l.Achieved < l.Max/3 }

func (l LoadLevel) String() string {
	who := fmt.Sprintf("%d Go + %d raw", l.Go, l.Raw)
	if l.Java > 0 {
		who += fmt.Sprintf(" + %d Java (rocketmq-client %s)", l.Java, javaVersion(l.JavaVersion))
	}
	pct := 0.0
	if l.Max > 0 {
		pct = 100 * l.Achieved / l.Max
	}
	beside := " with the recorded workload"
	if l.Alone {
		beside = ""
	}
	out := fmt.Sprintf("max durable rate %.0f msgs/s (%s producers flat out%s), run at %.0f msgs/s (%.0f%% of max; %d window(s) of %v) before the fault",
		l.Max, who, beside, l.Achieved, pct, l.Windows, l.Bench)
	if len(l.Earlier) > 0 {
		out += fmt.Sprintf("; measured in round %d, earlier rounds: %s", l.Rounds, strings.Join(l.Earlier, ", "))
	}
	return out
}

// Load is a running background load.
type Load struct {
	opts  LoadOptions
	w     *Workload
	java  *JavaProducer
	level LoadLevel
}

// StartLoad starts the load's producers flat out (Measure paces them). A
// machine without a JVM or the built module is not an error: the load runs
// without Java producers and the level says why (JavaSkipped); a JVM that is
// there but does not start is.
func StartLoad(ctx context.Context, c *Cluster, o LoadOptions) (*Load, error) {
	if o.GoProducers == 0 {
		o.GoProducers = 4
	}
	if o.RawProducers == 0 {
		o.RawProducers = 12
	}
	if o.Share == 0 {
		o.Share = 0.45
	}
	if o.Warmup == 0 {
		o.Warmup = time.Second
	}
	if o.Bench == 0 {
		o.Bench = 3 * time.Second
	}
	if o.Tries == 0 {
		o.Tries = 2
	}
	if o.Rounds == 0 {
		o.Rounds = 3
	}
	alone := o.Others == nil
	if alone {
		o.Others = func() int64 { return 0 }
	}
	l := &Load{opts: o, level: LoadLevel{Go: o.GoProducers, Raw: o.RawProducers, Bench: o.Bench, Alone: alone}}
	var err error
	// Interval 1 ns: flat out (the pacing loop never waits).
	l.w, err = StartWorkload(ctx, c, WorkloadOptions{Topic: o.Topic, Queues: o.Queues, GoProducers: o.GoProducers,
		RawProducers: o.RawProducers, Interval: time.Nanosecond, History: o.History})
	if err != nil {
		return nil, err
	}
	if o.Java != nil {
		jo := *o.Java
		if jo.Producers == 0 {
			jo.Producers = 4
		}
		jo.Topic, jo.Queues, jo.Interval, jo.SendTimeout = o.Topic, l.w.opts.Queues, 0, l.w.opts.SendTimeout
		l.java, err = StartJavaProducer(c, o.History, jo)
		if err == nil {
			// A JVM starts in about a second; its first route lookup follows.
			err = l.java.WaitReady(30 * time.Second)
		}
		switch {
		case errors.Is(err, ErrJavaUnavailable):
			l.java, l.level.JavaSkipped = nil, err.Error()
		case err != nil:
			// There but broken: a failure to see, not a reason to run without it.
			_ = l.Stop()
			return nil, fmt.Errorf("java producers: %w", err)
		default:
			l.level.Java, l.level.JavaVersion = jo.Producers, l.java.Version()
		}
	}
	return l, nil
}

// acks is the load's acknowledged sends so far.
func (l *Load) acks() int64 {
	n := l.w.Acks()
	if l.java != nil {
		n += l.java.Acks()
	}
	return n
}

// Measure runs the bench phase: flat out for Bench after Warmup (the maximum),
// then paced so that the total is Share of it, measured again over up to
// Tries windows (paced once more when a window lands more than overshoot
// over the aim); all of it again, up to Rounds times, while the paced total
// stays under a third of the maximum. It fails only if a flat-out phase
// acknowledged nothing.
func (l *Load) Measure(ctx context.Context) (LoadLevel, error) {
	o := l.opts
	// rate is the total and the recorded workload's own acks per second over d.
	rate := func(d time.Duration) (total, workload float64) {
		w0, l0 := o.Others(), l.acks()
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
		w1, l1 := o.Others(), l.acks()
		return float64(w1-w0+l1-l0) / d.Seconds(), float64(w1-w0) / d.Seconds()
	}
	if l.java != nil {
		// The JVM counts only once it acknowledges: its first sends wait for routes.
		for end := time.Now().Add(20 * time.Second); l.java.Acks() == 0 && time.Now().Before(end) && ctx.Err() == nil; {
			time.Sleep(50 * time.Millisecond)
		}
	}
	producers := o.GoProducers + o.RawProducers + l.level.Java
	for round := 1; round <= o.Rounds; round++ {
		if round > 1 {
			l.level.Earlier = append(l.level.Earlier, fmt.Sprintf("max %.0f run at %.0f msgs/s", l.level.Max, l.level.Achieved))
			if err := l.SetInterval(time.Nanosecond); err != nil {
				return l.level, err
			}
		}
		l.level.Rounds, l.level.Achieved, l.level.Windows = round, 0, 0
		time.Sleep(o.Warmup)
		var workloadRate float64
		l.level.Max, workloadRate = rate(o.Bench)
		if l.level.Max <= 0 {
			return l.level, fmt.Errorf("bench phase acknowledged nothing in %v", o.Bench)
		}
		l.level.Target = o.Share * l.level.Max
		pace := func(workloadRate float64) error {
			perProducer := max(l.level.Target-workloadRate, 10) / float64(producers)
			if err := l.SetInterval(time.Duration(float64(time.Second) / perProducer)); err != nil {
				return err
			}
			time.Sleep(o.Warmup)
			return nil
		}
		if err := pace(workloadRate); err != nil {
			return l.level, err
		}
		best := 0.0
		for try := 0; try < o.Tries; try++ {
			got, paced := rate(o.Bench)
			l.level.Windows++
			best = max(best, got)
			if got < l.level.Max/3 {
				l.level.Achieved = best // a stall, or too slow: another window
				continue
			}
			l.level.Achieved = got
			if got <= (o.Share+overshoot)*l.level.Max || try == o.Tries-1 {
				break
			}
			// Over the aim: the recorded workload, starved while the load ran
			// flat out, runs at its own pace again; pace the load with the
			// workload's paced rate instead and measure once more.
			if err := pace(paced); err != nil {
				return l.level, err
			}
		}
		if !l.level.BelowFloor() || ctx.Err() != nil {
			break
		}
	}
	return l.level, nil
}

// SetInterval changes every producer's pace from its next send on.
func (l *Load) SetInterval(d time.Duration) error {
	l.w.SetInterval(d)
	if l.java != nil {
		if err := l.java.SetInterval(d); err != nil {
			return fmt.Errorf("pace java producers: %w", err)
		}
	}
	return nil
}

// Level is the last measured level.
func (l *Load) Level() LoadLevel { return l.level }

// Topic is the load's topic.
func (l *Load) Topic() string { return l.opts.Topic }

// Workload is the load's Go and raw producers (for the final drain of its topic,
// which holds the Java producers' messages too).
func (l *Load) Workload() *Workload { return l.w }

// Stop halts every producer; the JVM finishes its sends in flight (every one
// is recorded, unanswered ones as unknown). It returns what went wrong with
// the JVM, if anything (a protocol line it could not parse: a send may be
// missing from the history, so the scenario must fail). Idempotent.
func (l *Load) Stop() error {
	var err error
	if l.java != nil {
		err = l.java.Stop()
	}
	l.w.Stop()
	return err
}

// javaVersion is the client's MQVersion name ("V4_9_8") as a version (4.9.8).
func javaVersion(v string) string {
	return strings.ReplaceAll(strings.TrimPrefix(v, "V"), "_", ".")
}
