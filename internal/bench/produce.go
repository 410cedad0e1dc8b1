package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketraft/rocketraft/transport/sign"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

// ProduceOptions configures a producer load.
type ProduceOptions struct {
	Namesrv     []string
	Topic       string
	Group       string
	Producers   int           // concurrent senders
	Count       int           // total messages; 0 = run for Duration
	Duration    time.Duration // used when Count is 0
	MessageSize int
	Batch       int // messages per send (1 = single sends)
	Client      Client
	Mode        Mode
	Window      int // sends in flight per producer in ModeAsync
	// Credentials sign every send (brokers with aclEnable=true); zero: unsigned.
	Credentials sign.Credentials
	// TLS, when set, dials the nameservers and brokers over TLS (clusters with
	// tlsMode=enforcing); transport.ClientTLS builds it. The native client uses
	// it as given. ClientRocketMQGo can only be told "TLS on" and never verifies
	// the server, so it refuses a config that asks to (see goClientTLS).
	TLS *tls.Config
	Out io.Writer
}

// ErrTLSVerifyUnsupported: the rocketmq-go client was asked to verify the
// server's certificate, which it cannot do (it dials with InsecureSkipVerify).
var ErrTLSVerifyUnsupported = errors.New("bench: the rocketmq-go client cannot verify the server certificate")

// goClientTLS says whether the rocketmq-go client should dial TLS for cfg, and
// refuses a cfg that verifies the server: running unverified when the caller
// asked for verification would be a silent downgrade.
//
// The Go client's WithTls writes remote.DefaultRemotingClientConfig, one
// process-wide struct every producer and consumer of the process shares, so
// Produce and Consume always pass it explicitly, and two runs in one process
// with different TLS settings must not overlap.
func goClientTLS(cfg *tls.Config) (bool, error) {
	if cfg == nil {
		return false, nil
	}
	if !cfg.InsecureSkipVerify {
		return false, fmt.Errorf("%w: drop --tls-ca, or use --client native (producer only)", ErrTLSVerifyUnsupported)
	}
	return true, nil
}

// Result summarises a run.
type Result struct {
	Sent, Failed int64
	Elapsed      time.Duration
	P50, P99     time.Duration
	Max          time.Duration
	MsgsPerSec   float64
	MBPerSec     float64
}

func quietClientLogs() { rlog.SetLogLevel("error") }

// Produce sends messages with the real rocketmq-client-go and reports progress.
func Produce(ctx context.Context, o ProduceOptions) (Result, error) {
	quietClientLogs()
	if o.Producers <= 0 {
		o.Producers = 1
	}
	if o.Batch <= 0 {
		o.Batch = 1
	}
	if o.Group == "" {
		o.Group = "rocketraft_bench_producer"
	}
	if o.Client == ClientNative || o.Client == "" {
		return produceNative(ctx, o)
	}
	if o.Client != ClientRocketMQGo {
		return Result{}, fmt.Errorf("bench: --client=%q: must be native or rocketmq-go", o.Client)
	}
	if o.Mode == ModeAsync {
		return Result{}, fmt.Errorf("bench: --mode=async is implemented for --client=native only")
	}
	useTLS, err := goClientTLS(o.TLS)
	if err != nil {
		return Result{}, err
	}
	p, err := rocketmq.NewProducer(
		producer.WithNameServer(o.Namesrv),
		producer.WithTls(useTLS),
		producer.WithCredentials(primitive.Credentials{AccessKey: o.Credentials.AccessKey, SecretKey: o.Credentials.SecretKey}),
		producer.WithGroupName(o.Group),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(5*time.Second),
	)
	if err != nil {
		return Result{}, err
	}
	if err := p.Start(); err != nil {
		return Result{}, fmt.Errorf("start producer: %w", err)
	}
	defer p.Shutdown()

	body := make([]byte, o.MessageSize)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	var sent, failed, next atomic.Int64
	lat := &latencies{}
	// Sends use ctx; the run deadline only stops new sends, so in-flight ones at the
	// end are not miscounted as failures.
	start := time.Now()
	deadline := start.Add(o.Duration)
	running := func() bool { return ctx.Err() == nil && (o.Count > 0 || time.Now().Before(deadline)) }
	var wg sync.WaitGroup
	for w := 0; w < o.Producers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for running() {
				n := next.Add(int64(o.Batch))
				if o.Count > 0 && n > int64(o.Count) {
					return
				}
				msgs := make([]*primitive.Message, o.Batch)
				for i := range msgs {
					msgs[i] = primitive.NewMessage(o.Topic, body)
					msgs[i].WithKeys([]string{"k" + strconv.FormatInt(n-int64(o.Batch)+int64(i), 10)})
				}
				t0 := time.Now()
				res, err := p.SendSync(ctx, msgs...)
				if err != nil || res.Status != primitive.SendOK {
					failed.Add(int64(o.Batch))
					continue
				}
				lat.add(time.Since(t0))
				sent.Add(int64(o.Batch))
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	progress(o.Out, done, start, &sent, &failed, lat, o.MessageSize)
	return summarize(o.Out, start, sent.Load(), failed.Load(), lat, o.MessageSize, "latency histogram (per send call):"), nil
}

// progress prints one line per second until done.
func progress(w io.Writer, done <-chan struct{}, start time.Time, ok, failed *atomic.Int64, lat *latencies, size int) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var last int64
	for {
		select {
		case <-done:
			return
		case <-t.C:
			n := ok.Load()
			win := sortDurations(lat.takeWindow())
			rate := float64(n - last)
			last = n
			fmt.Fprintf(w, "%5.0fs  %8.0f msgs/s  %6.2f MB/s  p50 %-9s p99 %-9s total %d failed %d\n",
				time.Since(start).Seconds(), rate, rate*float64(size)/1e6,
				percentile(win, 50).Round(time.Microsecond), percentile(win, 99).Round(time.Microsecond), n, failed.Load())
		}
	}
}

func summarize(w io.Writer, start time.Time, ok, failed int64, lat *latencies, size int, histTitle string) Result {
	elapsed := time.Since(start)
	all := sortDurations(lat.all())
	r := Result{Sent: ok, Failed: failed, Elapsed: elapsed,
		P50: percentile(all, 50), P99: percentile(all, 99), MsgsPerSec: float64(ok) / elapsed.Seconds()}
	if len(all) > 0 {
		r.Max = all[len(all)-1]
	}
	r.MBPerSec = r.MsgsPerSec * float64(size) / 1e6
	fmt.Fprintf(w, "\nsummary: %d ok, %d failed in %s: %.0f msgs/s, %.2f MB/s, latency p50 %s p99 %s max %s\n",
		ok, failed, elapsed.Round(time.Millisecond), r.MsgsPerSec, r.MBPerSec,
		r.P50.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.Max.Round(time.Microsecond))
	fmt.Fprintln(w, histTitle)
	histogram(w, all)
	return r
}
