package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/rocketraft/rocketraft/transport/sign"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// ConsumeOptions configures a consumer run.
type ConsumeOptions struct {
	Namesrv []string
	Topic   string
	Group   string
	Count   int           // stop after this many messages (0 = run for Duration)
	Timeout time.Duration // give up after this long
	// Credentials sign every request (brokers with aclEnable=true).
	Credentials sign.Credentials
	// TLS, when set, dials over TLS. The consumer is the rocketmq-go client,
	// which cannot verify the server: a cfg that verifies is refused
	// (ErrTLSVerifyUnsupported; see goClientTLS).
	TLS *tls.Config
	Out io.Writer
}

// Consume runs a clustering push consumer from the first offset and counts what
// it receives; end-to-end latency is store time → delivery.
func Consume(ctx context.Context, o ConsumeOptions) (Result, error) {
	quietClientLogs()
	if o.Group == "" {
		o.Group = "rocketraft_bench_consumer"
	}
	useTLS, err := goClientTLS(o.TLS)
	if err != nil {
		return Result{}, err
	}
	c, err := rocketmq.NewPushConsumer(
		consumer.WithNameServer(o.Namesrv),
		consumer.WithTls(useTLS),
		consumer.WithCredentials(primitive.Credentials{AccessKey: o.Credentials.AccessKey, SecretKey: o.Credentials.SecretKey}),
		consumer.WithGroupName(o.Group),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	)
	if err != nil {
		return Result{}, err
	}
	var got, failed atomic.Int64
	var size atomic.Int64
	lat := &latencies{}
	done := make(chan struct{})
	var closed atomic.Bool
	err = c.Subscribe(o.Topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		now := time.Now().UnixMilli()
		for _, m := range msgs {
			lat.add(time.Duration(now-m.StoreTimestamp) * time.Millisecond)
			size.Store(int64(len(m.Body)))
		}
		if n := got.Add(int64(len(msgs))); o.Count > 0 && n >= int64(o.Count) && closed.CompareAndSwap(false, true) {
			close(done)
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		return Result{}, err
	}
	if err := c.Start(); err != nil {
		return Result{}, fmt.Errorf("start consumer: %w", err)
	}
	defer c.Shutdown()
	start := time.Now()
	stop := make(chan struct{})
	go func() {
		defer close(stop)
		select {
		case <-done:
		case <-ctx.Done():
		case <-time.After(o.Timeout):
		}
	}()
	progress(o.Out, stop, start, &got, &failed, lat, int(size.Load()))
	r := summarize(o.Out, start, got.Load(), 0, lat, int(size.Load()), "store-to-delivery age histogram (includes any backlog):")
	if o.Count > 0 && got.Load() < int64(o.Count) {
		return r, fmt.Errorf("received %d of %d messages before the timeout", got.Load(), o.Count)
	}
	return r, nil
}
