package metrics

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketraft/rocketraft/store"
)

// messageSizeBuckets are RocketMQ's (BrokerMetricsManager): 1 KiB, 4 KiB,
// 512 KiB, 1 MiB, 2 MiB, 4 MiB (the default maxMessageSize).
var messageSizeBuckets = []float64{1 << 10, 4 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20}

// maxPullOffsets bounds the pull-offset table (one entry per group, topic and
// queue this node served a pull for): 64 Ki entries of ~80 bytes is ~5 MiB. A
// queue first pulled once it is full is not tracked; its in-flight count reads
// 0 (the pull offset falls back to the committed one) and its lag stays right.
const maxPullOffsets = 1 << 16

// queueKey names one queue as a consumer group reads it.
type queueKey struct {
	group, topic string
	queueID      int32
}

// pullOffsets is the next offset each group will pull from each queue, as this
// node last answered it (RocketMQ's ConsumerOffsetManager pull-offset table).
// It is soft state: a new leader learns it from the next pulls.
type pullOffsets struct {
	mu sync.Mutex
	// Invariant: len(next) <= maxPullOffsets.
	next map[queueKey]store.QueueOffset
}

func newPullOffsets() *pullOffsets {
	return &pullOffsets{next: make(map[queueKey]store.QueueOffset)}
}

func (p *pullOffsets) record(k queueKey, next store.QueueOffset) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.next[k]; ok || len(p.next) < maxPullOffsets {
		p.next[k] = next
	}
}

func (p *pullOffsets) get(k queueKey) (store.QueueOffset, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	off, ok := p.next[k]
	return off, ok
}

// pairs lists the (group, topic) pairs with a recorded pull.
func (p *pullOffsets) pairs() map[string]map[string]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]map[string]bool)
	for k := range p.next {
		if out[k.group] == nil {
			out[k.group] = make(map[string]bool)
		}
		out[k.group][k.topic] = true
	}
	return out
}

// traffic counts messages in (accepted sends) and out (served pulls) with
// RocketMQ 5's names and labels.
type traffic struct {
	topics, groups *labelCap
	pulls          *pullOffsets

	in, inBytes   *prometheus.CounterVec   // topic, message_type, is_system
	size          *prometheus.HistogramVec // topic, message_type, is_system
	out, outBytes *prometheus.CounterVec   // topic, consumer_group, is_retry, is_system

	// inSeries caches the three series of each (topic label, message type,
	// is_system), inKey → *inSeries: resolving them through the vectors hashes
	// the labels three times per stored message. The topic label is admitted
	// first, so the cache is bounded by the label cap (times the types).
	inSeries sync.Map
}

type inKey struct {
	topic, typ string
	system     bool
}

type inSeries struct {
	in, inBytes prometheus.Counter
	size        prometheus.Observer
}

func newTraffic(topics, groups *labelCap) *traffic {
	inLabels := []string{labelTopic, labelMessageType, labelIsSystem}
	outLabels := []string{labelTopic, labelConsumerGroup, labelIsRetry, labelIsSystem}
	return &traffic{
		topics: topics, groups: groups, pulls: newPullOffsets(),
		in: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_messages_in_total",
			Help: "Messages accepted from producers, counted once, on the leader that stored them (retry and DLQ topics excluded).",
		}, inLabels),
		inBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_throughput_in_total",
			Help: "Bytes of the messages in rocketmq_messages_in_total, as stored (the CommitLog record).",
		}, inLabels),
		size: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rocketmq_message_size",
			Help:    "Stored size in bytes of each message in rocketmq_messages_in_total.",
			Buckets: messageSizeBuckets,
		}, inLabels),
		out: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_messages_out_total",
			Help: "Messages served to consumers by pulls on this node.",
		}, outLabels),
		outBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocketmq_throughput_out_total",
			Help: "Bytes of the messages in rocketmq_messages_out_total.",
		}, outLabels),
	}
}

func (t *traffic) collectors() []prometheus.Collector {
	return []prometheus.Collector{t.in, t.inBytes, t.size, t.out, t.outBytes}
}

// sent records one message a send stored: topic as the producer named it, its
// properties as sent, whether it was a prepared transaction message, and its
// stored size in bytes.
func (t *traffic) sent(topic, props string, prepared bool, storedBytes int) {
	if isRetryOrDLQ(topic) {
		return
	}
	k := inKey{topic, MessageType(props, prepared), isSystemTopic(topic)}
	// A topic with a series was admitted when the series was made: only a
	// miss asks the label cap, whose lock every send used to take.
	v, ok := t.inSeries.Load(k)
	if !ok {
		k.topic = t.topics.admit(topic)
		v, ok = t.inSeries.Load(k)
	}
	if !ok {
		labels := []string{k.topic, k.typ, boolLabel(k.system)}
		v, _ = t.inSeries.LoadOrStore(k, &inSeries{in: t.in.WithLabelValues(labels...),
			inBytes: t.inBytes.WithLabelValues(labels...), size: t.size.WithLabelValues(labels...)})
	}
	ss := v.(*inSeries)
	ss.in.Inc()
	ss.inBytes.Add(float64(storedBytes))
	ss.size.Observe(float64(storedBytes))
}

// pulled records one pull answered here: the group's next pull offset of the
// queue, and the messages and bytes the answer carried.
func (t *traffic) pulled(group, topic string, queueID int32, next store.QueueOffset, msgs, bytes int) {
	t.pulls.record(queueKey{group, topic, queueID}, next)
	if msgs == 0 {
		return
	}
	labels := []string{t.topics.admit(topic), t.groups.admit(group),
		boolLabel(strings.HasPrefix(topic, "%RETRY%")), boolLabel(isSystemTopic(topic) || isSystemGroup(group))}
	t.out.WithLabelValues(labels...).Add(float64(msgs))
	t.outBytes.WithLabelValues(labels...).Add(float64(bytes))
}
