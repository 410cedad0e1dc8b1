package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketraft/rocketraft/transport"
)

// Consumer groups of a scenario (consumers.go): for every topic the history
// acknowledges sends to, a concurrent and an orderly group of
// consumersPerGroup rocketmq-client-go push consumers each, so a failover or a
// slow client makes the group rebalance. Every delivery and, every
// offsetPollEvery, every queue's committed offset on the current leader go into
// the History; the checker judges them (checker_consumers.go).
const (
	consumersPerGroup = 2
	// offsetPollEvery is how often committed offsets are read from the leader.
	offsetPollEvery = 200 * time.Millisecond
	// topicScanEvery is how often the history is looked at for new topics (a
	// background load starts after the recorded workload).
	topicScanEvery = 250 * time.Millisecond
	// orderlyLockRenew is the orderly consumers' LOCK_BATCH_MQ period (client
	// default 20 s): after a leader change the new leader grants no lock for
	// its grace window (docs/decisions/0003, 65 s), and a client that renews
	// every second resumes within a second of it ending rather than 20 s.
	orderlyLockRenew = time.Second
)

// Consumers runs the consumer groups of one scenario and polls their
// committed offsets. Safe for concurrent use; Stop ends it.
type Consumers struct {
	c    *Cluster
	h    *History
	tc   *transport.Client
	stop chan struct{}
	wg   sync.WaitGroup

	kinds []GroupKind // the groups each topic gets
	// pollMu is held by every poll round: Quiet takes it so that no poll
	// straddles what a scenario records (a reset), whose order against the
	// polls the checker relies on.
	pollMu sync.Mutex

	mu      sync.Mutex
	started map[string][]int32 // topic → queues polled
	groups  []ConsumerGroup
	pcs     []rocketmq.PushConsumer
	errs    []string
}

// StartConsumers starts a group of each kind on every topic h has
// acknowledged sends to, and on every topic that appears later, and the offset
// poller.
func StartConsumers(c *Cluster, h *History, kinds ...GroupKind) *Consumers {
	cs := &Consumers{c: c, h: h, kinds: kinds, stop: make(chan struct{}), started: map[string][]int32{},
		tc: transport.NewClient(transport.ClientConfig{DialTimeout: 500 * time.Millisecond})}
	cs.scan()
	cs.wg.Add(2)
	go cs.every(topicScanEvery, cs.scan)
	go cs.every(offsetPollEvery, cs.poll)
	return cs
}

func (cs *Consumers) every(d time.Duration, f func()) {
	defer cs.wg.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-cs.stop:
			return
		case <-t.C:
			f()
		}
	}
}

// scan starts the groups of topics seen for the first time and widens the
// polled queues of known ones.
func (cs *Consumers) scan() {
	for topic, queues := range cs.h.topicQueues() {
		cs.mu.Lock()
		_, known := cs.started[topic]
		cs.started[topic] = queues
		cs.mu.Unlock()
		if known {
			continue
		}
		for _, kind := range cs.kinds {
			if err := cs.startGroup(topic, kind); err != nil {
				cs.mu.Lock()
				cs.errs = append(cs.errs, err.Error())
				cs.mu.Unlock()
			}
		}
	}
}

// groupName is the scenario's group of kind on topic ("ChaosK1" → "cc-ChaosK1").
func groupName(topic string, kind GroupKind) string {
	if kind == Orderly {
		return "oc-" + topic
	}
	return "cc-" + topic
}

func (cs *Consumers) startGroup(topic string, kind GroupKind) error {
	g := ConsumerGroup{Name: groupName(topic, kind), Topic: topic, Kind: kind}
	cs.h.AddGroup(g)
	cs.mu.Lock()
	cs.groups = append(cs.groups, g)
	cs.mu.Unlock()
	for i := range consumersPerGroup {
		instance := fmt.Sprintf("%s-c%d", g.Name, i)
		opts := []consumer.Option{
			consumer.WithNameServer([]string{cs.c.NSAddr}),
			consumer.WithGroupName(g.Name),
			// Its own instance name: the library shares one client (and one
			// client id, which the rebalance allocates by) per instance name.
			consumer.WithInstance(instance),
			consumer.WithConsumerModel(consumer.Clustering),
			consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
			consumer.WithCredentials(primitive.Credentials{AccessKey: cs.c.opts.Credentials.AccessKey, SecretKey: cs.c.opts.Credentials.SecretKey}),
		}
		if kind == Orderly {
			opts = append(opts, consumer.WithConsumerOrder(true), consumer.WithRebalanceLockInterval(orderlyLockRenew))
		}
		pc, err := rocketmq.NewPushConsumer(opts...)
		if err != nil {
			return fmt.Errorf("consumer %s: %w", instance, err)
		}
		record := func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			start := time.Now()
			// The interval must have a length for overlaps to be seen: an
			// orderly consumer holds the queue for the whole callback.
			if kind == Orderly {
				time.Sleep(time.Millisecond)
			}
			end := time.Now()
			for _, m := range msgs {
				q := QueueKey{Topic: m.Topic, QueueID: -1}
				if m.Queue != nil {
					q = QueueKey{Topic: m.Queue.Topic, QueueID: int32(m.Queue.QueueId)}
				}
				cs.h.AddDelivery(Delivery{Group: g.Name, Consumer: instance, Queue: q, Offset: m.QueueOffset, ID: string(m.Body), Start: start, End: end})
			}
			return consumer.ConsumeSuccess, nil
		}
		if err := pc.Subscribe(topic, consumer.MessageSelector{}, record); err != nil {
			_ = pc.Shutdown()
			return fmt.Errorf("subscribe %s to %s: %w", instance, topic, err)
		}
		if err := startPushConsumer(pc); err != nil {
			return fmt.Errorf("start %s on %s: %w", instance, topic, err)
		}
		cs.mu.Lock()
		cs.pcs = append(cs.pcs, pc)
		cs.mu.Unlock()
	}
	return nil
}

// startPushConsumer starts pc, retrying for 10 s while the topic's route is not
// on the nameserver yet (it is registered in the background after the send
// that created the topic).
func startPushConsumer(pc rocketmq.PushConsumer) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := pc.Start()
		if err == nil {
			return nil
		}
		if !strings.Contains(err.Error(), "route info not found") || time.Now().After(deadline) {
			_ = pc.Shutdown()
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// poll reads every started group's committed offset of every queue from the
// node the nameserver lists as brokerId 0 (what the clients commit to).
func (cs *Consumers) poll() {
	cs.pollMu.Lock()
	defer cs.pollMu.Unlock()
	ctx := context.Background()
	addrs, err := cs.c.BrokerAddrs(ctx)
	if err != nil || addrs[0] == "" {
		return
	}
	addr := addrs[0]
	cs.mu.Lock()
	groups := slices.Clone(cs.groups)
	queues := maps.Clone(cs.started)
	cs.mu.Unlock()
	for _, g := range groups {
		for _, qid := range queues[g.Topic] {
			q := QueueKey{g.Topic, qid}
			if off, ok := cs.queryOffset(ctx, addr, g.Name, q); ok {
				cs.h.AddOffset(OffsetObs{Group: g.Name, Queue: q, Offset: off, At: time.Now(), Addr: addr})
			}
		}
	}
}

// Quiet runs f with no offset poll in flight: a poll recorded before f
// returned its answer before f began, one recorded after asked after f ended.
// A reset recorded inside f is thereby ordered against every poll (a poll
// answered before the reset but recorded after it would look like the
// offset going back).
func (cs *Consumers) Quiet(f func()) {
	cs.pollMu.Lock()
	defer cs.pollMu.Unlock()
	f()
}

// queryOffset is QUERY_CONSUMER_OFFSET without the broker's "0 if none" rule,
// so an answer is always an offset some consumer committed.
func (cs *Consumers) queryOffset(ctx context.Context, addr, group string, q QueueKey) (int64, bool) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	ext := map[string]string{
		"consumerGroup":     group,
		"topic":             q.Topic,
		"queueId":           strconv.Itoa(int(q.QueueID)),
		"setZeroIfNotFound": "false",
	}
	resp, err := cs.tc.Invoke(ctx, addr, transport.NewRequest(transport.QueryConsumerOffset, cs.c.Sign(ext, nil), nil))
	if err != nil || resp.ResponseCode() != transport.Success {
		return 0, false
	}
	off, err := strconv.ParseInt(resp.Field("offset"), 10, 64)
	return off, err == nil
}

// WaitDelivered waits until every group has been delivered every acknowledged
// message of its topic (call it once the producers have stopped). It gives up
// when ctx ends, or as soon as a group that still misses messages has had none
// of them delivered for stall: a slow drain is not a lost delivery, a stalled
// one is. An orderly group of several consumers gets no lock from a new leader
// for its grace window (65 s), so stall must be longer than that.
func (cs *Consumers) WaitDelivered(ctx context.Context, stall time.Duration) error {
	acked := ackedByTopic(cs.h.Sends())
	missing := map[string]map[string]bool{}
	progress := map[string]time.Time{} // a group's last delivery of a missing id
	for _, g := range cs.h.Groups() {
		missing[g.Name] = maps.Clone(acked[g.Topic])
		progress[g.Name] = time.Now()
	}
	for scanned := 0; ; {
		fresh := cs.h.deliveriesSince(scanned)
		scanned += len(fresh)
		now := time.Now()
		for _, d := range fresh {
			if missing[d.Group][d.ID] {
				delete(missing[d.Group], d.ID)
				progress[d.Group] = now
			}
		}
		left := map[string]int{}
		var stalled []string
		for g, ids := range missing {
			if len(ids) > 0 {
				left[g] = len(ids)
				if now.Sub(progress[g]) >= stall {
					stalled = append(stalled, g)
				}
			}
		}
		if len(left) == 0 {
			return nil
		}
		if len(stalled) > 0 {
			slices.Sort(stalled)
			return fmt.Errorf("consumer groups still missing acknowledged messages %v: %v delivered none of them for %v", left, stalled, stall)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("consumer groups still missing acknowledged messages %v: %w", left, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Errors are the groups that could not be started.
func (cs *Consumers) Errors() []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return slices.Clone(cs.errs)
}

// Stop ends the poller and shuts every consumer down (which commits their
// offsets once more). Idempotent.
func (cs *Consumers) Stop() {
	select {
	case <-cs.stop:
		return
	default:
	}
	close(cs.stop)
	cs.wg.Wait()
	cs.mu.Lock()
	pcs := cs.pcs
	cs.pcs = nil
	cs.mu.Unlock()
	for _, pc := range pcs {
		_ = pc.Shutdown()
	}
	_ = cs.tc.Close()
}

// ackedByTopic is, per topic, the ids with an acknowledged attempt.
func ackedByTopic(sends []SendOp) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, s := range sends {
		if s.Outcome != OK {
			continue
		}
		if out[s.Queue.Topic] == nil {
			out[s.Queue.Topic] = map[string]bool{}
		}
		out[s.Queue.Topic][s.ID] = true
	}
	return out
}
