package bench

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// consumeShards is the number of recorders of a consumer. The Go client runs
// the listener on up to 20 goroutines (ConsumeGoroutineNums), one queue's
// messages at a time; recording into the shard of the message's queue keeps
// two callbacks off one lock unless their queues share a shard.
const consumeShards = 16

// consumeSeries are the two ages of a consumed message.
var consumeSeries = []Series{
	{Name: "born", Title: "born → consume: now − BORN timestamp set by the producer (includes delay levels, backlog and clock skew)"},
	{Name: "store", Title: "store → consume: now − STORE timestamp set by the broker (includes backlog)"},
}

// shardOf picks the recorder of a message by its queue.
func shardOf(q *primitive.MessageQueue) int {
	if q == nil {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(q.BrokerName))
	return int((h.Sum32() + uint32(q.QueueId)) % consumeShards)
}

// recordConsumed records msgs, received at now, into rec: one op per message,
// its body bytes, and its ages since born and since stored.
func recordConsumed(rec *recorder, now time.Time, msgs []*primitive.MessageExt) {
	for _, m := range msgs {
		rec.ok(1, int64(len(m.Body)), now.Sub(time.UnixMilli(m.BornTimestamp)), now.Sub(time.UnixMilli(m.StoreTimestamp)))
	}
}

// Consume runs a clustering push consumer (the rocketmq-go client) from the
// first offset and reports what it receives each second: msgs/s, MB/s of the
// bodies received, and the born → consume and store → consume ages.
func Consume(ctx context.Context, o ConsumeOptions) (Result, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return Result{}, err
	}
	quietClientLogs()
	useTLS, err := goClientTLS(o.TLS)
	if err != nil {
		return Result{}, err
	}
	c, err := rocketmq.NewPushConsumer(
		consumer.WithNameServer(o.Namesrv),
		consumer.WithTls(useTLS),
		consumer.WithCredentials(primitive.Credentials{AccessKey: o.Credentials.AccessKey, SecretKey: o.Credentials.SecretKey}),
		consumer.WithGroupName(o.Group),
		consumer.WithInstance(instanceName("consumer")),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithConsumeMessageBatchMaxSize(o.Batch),
	)
	if err != nil {
		return Result{}, err
	}
	m := newMeter(consumeSeries, consumeShards, time.Now())
	rep, err := newReport(m, o.Out, o.CSV, o.JSON, RunInfo{Command: "consume", Client: string(ClientRocketMQGo),
		Topic: o.Topic, Group: o.Group, Count: o.Count, DurationS: o.Duration.Seconds(), Tag: o.Tag})
	if err != nil {
		return Result{}, err
	}
	var got atomic.Int64
	var first atomic.Int64 // UnixNano of the first delivery, 0 before it
	reached := make(chan struct{})
	var once sync.Once
	sel := consumer.MessageSelector{}
	if o.Tag != "" {
		sel = consumer.MessageSelector{Type: consumer.TAG, Expression: o.Tag}
	}
	err = c.Subscribe(o.Topic, sel, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		if len(msgs) == 0 {
			return consumer.ConsumeSuccess, nil
		}
		now := time.Now()
		first.CompareAndSwap(0, now.UnixNano())
		recordConsumed(m.recs[shardOf(msgs[0].Queue)], now, msgs)
		if n := got.Add(int64(len(msgs))); o.Count > 0 && n >= int64(o.Count) {
			once.Do(func() { close(reached) })
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		return Result{}, err
	}
	// The clock starts with the consumer: its route lookup and rebalance are
	// part of the run (deliveries begin inside Start). The summary says when
	// the first message came.
	m.start = time.Now()
	m.last = m.start
	if err := c.Start(); err != nil {
		return Result{}, fmt.Errorf("start consumer: %w", err)
	}
	defer func() { _ = shutdownClient("push consumer", c.Shutdown) }()
	limit := o.Duration
	if o.Count > 0 {
		limit = o.Timeout
	}
	stop := make(chan struct{})
	go func() {
		defer close(stop)
		select {
		case <-reached:
		case <-ctx.Done():
		case <-time.After(limit):
		}
	}()
	rep.loop(stop)
	s, err := rep.finish(time.Now(), func(Summary) string {
		if f := first.Load(); f != 0 {
			return fmt.Sprintf("first message %s after the consumer started", round(time.Unix(0, f).Sub(m.start)))
		}
		return "no message arrived"
	})
	r := resultOf(s)
	if err != nil {
		return r, err
	}
	if o.Count > 0 && r.Sent < int64(o.Count) {
		return r, fmt.Errorf("bench: received %d of %d messages within --timeout=%s", r.Sent, o.Count, o.Timeout)
	}
	return r, nil
}
