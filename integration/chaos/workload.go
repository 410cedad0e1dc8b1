package chaos

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/rocketraft/rocketraft/transport"
)

// WorkloadOptions configures a Workload. Zero values take defaults.
type WorkloadOptions struct {
	Topic  string // required
	Queues int    // default 4 (the broker's defaultTopicQueueNums)
	// GoProducers use rocketmq-client-go (default route refresh, retries off: this
	// workload retries itself so every attempt is recorded).
	GoProducers int
	// RawProducers use RawSender (re-resolve the leader after any failure).
	RawProducers int
	// Interval between two sends of one producer (default 20 ms, 50/s each).
	Interval time.Duration
	// Retries of one id after a non-ok attempt (default 1).
	Retries int
	// SendTimeout per attempt (default 3 s).
	SendTimeout time.Duration
	// Readers: one sequential reader per queue pulling from the leader.
	Readers bool
	// History, when set, is where this workload records (several workloads,
	// e.g. the recorded one and a background load, judged as one history).
	History *History
}

// Workload is the producers and readers of one scenario, recording into a History.
type Workload struct {
	opts WorkloadOptions
	c    *Cluster
	h    *History
	stop chan struct{}
	wg   sync.WaitGroup
	acks atomic.Int64
	// interval is each producer's pace in nanoseconds (SetInterval).
	interval atomic.Int64

	closers []func()
}

// StartWorkload creates the topic (a seed send through a RawSender, recorded) and
// starts the producers and readers.
func StartWorkload(ctx context.Context, c *Cluster, opts WorkloadOptions) (*Workload, error) {
	if opts.Queues == 0 {
		opts.Queues = 4
	}
	if opts.Interval == 0 {
		opts.Interval = 20 * time.Millisecond
	}
	if opts.Retries == 0 {
		opts.Retries = 1
	}
	if opts.SendTimeout == 0 {
		opts.SendTimeout = 3 * time.Second
	}
	w := &Workload{opts: opts, c: c, h: opts.History, stop: make(chan struct{})}
	if w.h == nil {
		w.h = &History{}
	}
	w.interval.Store(int64(opts.Interval))
	seed := NewRawSender("seed", c, opts.SendTimeout)
	defer seed.Close()
	for attempt := 0; ; attempt++ {
		op := seed.Send(ctx, QueueKey{opts.Topic, 0}, "seed-"+opts.Topic, attempt)
		w.h.AddSend(op)
		if op.Outcome == OK {
			break
		}
		if attempt == 50 || ctx.Err() != nil {
			return nil, fmt.Errorf("seed send to create %s: %s", opts.Topic, op.Err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.nsClient.GetRoute(rctx, c.NSAddr, opts.Topic)
		cancel()
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("route of %s never on the nameserver: %w", opts.Topic, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	for i := range opts.GoProducers {
		p, err := rocketmq.NewProducer(
			producer.WithNameServer([]string{c.NSAddr}),
			producer.WithGroupName(fmt.Sprintf("chaos-pg-%d", i)),
			producer.WithInstanceName(fmt.Sprintf("chaos-%s-go%d", opts.Topic, i)),
			producer.WithRetry(0),
			producer.WithSendMsgTimeout(opts.SendTimeout),
			producer.WithQueueSelector(producer.NewManualQueueSelector()),
			producer.WithCredentials(primitive.Credentials{AccessKey: c.opts.Credentials.AccessKey, SecretKey: c.opts.Credentials.SecretKey}),
		)
		if err != nil {
			w.Stop()
			return nil, fmt.Errorf("go producer %d: %w", i, err)
		}
		if err := p.Start(); err != nil {
			w.Stop()
			return nil, fmt.Errorf("start go producer %d: %w", i, err)
		}
		w.closers = append(w.closers, func() { _ = p.Shutdown() })
		name := fmt.Sprintf("go%d", i)
		w.loop(name, func(ctx context.Context, q QueueKey, id string, attempt int) SendOp {
			return goSend(ctx, p, name, q, id, attempt)
		})
	}
	for i := range opts.RawProducers {
		s := NewRawSender(fmt.Sprintf("raw%d", i), c, opts.SendTimeout)
		w.closers = append(w.closers, func() { _ = s.Close() })
		w.loop(s.Name, s.Send)
	}
	if opts.Readers {
		tc := transport.NewClient(transport.ClientConfig{DialTimeout: 500 * time.Millisecond})
		w.closers = append(w.closers, func() { _ = tc.Close() })
		for q := range opts.Queues {
			w.wg.Add(1)
			go w.read(tc, QueueKey{opts.Topic, int32(q)})
		}
	}
	return w, nil
}

func goSend(ctx context.Context, p rocketmq.Producer, name string, q QueueKey, id string, attempt int) SendOp {
	msg := primitive.NewMessage(q.Topic, []byte(id))
	msg.WithKeys([]string{id})
	msg.Queue = &primitive.MessageQueue{Topic: q.Topic, BrokerName: GroupName, QueueId: int(q.QueueID)}
	op := SendOp{Client: name, ID: id, Attempt: attempt, Queue: q, Offset: -1, Call: time.Now()}
	res, err := p.SendSync(ctx, msg)
	op.Return = time.Now()
	switch {
	case err != nil:
		op.Outcome, op.Err = classifyGoClientErr(err), err.Error()
	case res.Status != primitive.SendOK:
		op.Outcome, op.Err = Unknown, fmt.Sprintf("status %v", res.Status)
	case res.MessageQueue == nil || res.MessageQueue.QueueId != int(q.QueueID):
		op.Outcome, op.Err = Unknown, fmt.Sprintf("acked on another queue %v", res.MessageQueue)
	default:
		op.Outcome, op.Offset, op.BrokerMsgID = OK, res.QueueOffset, res.OffsetMsgID
	}
	return op
}

// loop runs one producer: ids name-0, name-1, … round-robin over the queues, each
// retried up to opts.Retries times after a non-ok attempt.
func (w *Workload) loop(name string, send func(context.Context, QueueKey, string, int) SendOp) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		ctx := context.Background()
		next := time.Now()
		for n := 0; ; n++ {
			// Paced like a ticker that drops ticks: a producer that fell
			// behind (slow sends) starts its next send at once but does not
			// burst to catch up.
			next = next.Add(time.Duration(w.interval.Load()))
			if now := time.Now(); next.Before(now) {
				next = now
			}
			select {
			case <-w.stop:
				return
			case <-time.After(time.Until(next)):
			}
			id := fmt.Sprintf("%s-%s-%d", w.opts.Topic, name, n)
			q := QueueKey{w.opts.Topic, int32(n % w.opts.Queues)}
			for attempt := 0; attempt <= w.opts.Retries; attempt++ {
				op := send(ctx, q, id, attempt)
				w.h.AddSend(op)
				if op.Outcome == OK {
					w.acks.Add(1)
					break
				}
				select {
				case <-w.stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
	}()
}

// read scans q from offset 0 on the current leader, recording every message.
// A new session starts whenever a pull fails, from the last offset read.
func (w *Workload) read(tc *transport.Client, q QueueKey) {
	defer w.wg.Done()
	ctx := context.Background()
	session, next := 1, int64(0)
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		addrs, err := w.c.BrokerAddrs(ctx)
		addr := addrs[0]
		if err != nil || addr == "" {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		offs, ids, nn, err := Pull(ctx, w.c, tc, addr, q, next)
		if err != nil {
			session++
			time.Sleep(200 * time.Millisecond)
			continue
		}
		now := time.Now()
		for i := range offs {
			w.h.AddRead(ReadOp{Client: "reader-" + q.String(), Session: session, Queue: q, Offset: offs[i], ID: ids[i], At: now})
		}
		if len(offs) == 0 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		next = nn
	}
}

// SetInterval changes every producer's pace from its next send on (a
// background load measured flat out, then run at a fraction of that).
func (w *Workload) SetInterval(d time.Duration) { w.interval.Store(int64(d)) }

// Acks is the number of OK sends so far.
func (w *Workload) Acks() int64 { return w.acks.Load() }

// WaitAcks waits until n more sends than now are acknowledged.
func (w *Workload) WaitAcks(ctx context.Context, n int64) error {
	target := w.Acks() + n
	for w.Acks() < target {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d acks: %w", w.Acks()-(target-n), n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// Stop halts producers and readers and closes their clients. Idempotent.
func (w *Workload) Stop() {
	select {
	case <-w.stop:
		return
	default:
	}
	close(w.stop)
	w.wg.Wait()
	for _, c := range w.closers {
		c()
	}
}

// History is the recorded history.
func (w *Workload) History() *History { return w.h }

// Topic is the workload's topic.
func (w *Workload) Topic() string { return w.opts.Topic }

// Drain pulls every queue from offset 0 on the current leader until the end.
func (w *Workload) Drain(ctx context.Context) (map[QueueKey][]string, error) {
	tc := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	defer tc.Close()
	leader, err := w.c.Leader(ctx)
	if err != nil {
		return nil, err
	}
	addr := w.c.Nodes[leader].ClientAddr
	out := map[QueueKey][]string{}
	for qi := range w.opts.Queues {
		q := QueueKey{w.opts.Topic, int32(qi)}
		var ids []string
		for off := int64(0); ; {
			offs, got, next, err := Pull(ctx, w.c, tc, addr, q, off)
			if err != nil {
				return nil, fmt.Errorf("drain %s at %d: %w", q, off, err)
			}
			if len(got) == 0 {
				break
			}
			for i := range offs {
				if offs[i] != int64(len(ids)) {
					return nil, fmt.Errorf("drain %s: got offset %d, expected %d", q, offs[i], len(ids))
				}
				ids = append(ids, got[i])
			}
			off = next
		}
		out[q] = ids
	}
	return out, nil
}
