package metrics

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/store"
)

// Metrics is one broker node's Prometheus registry: its own registry (never the
// global one, so several brokers in one test process do not collide), request
// counters and latencies fed by Stage, message traffic fed by ObserveSent and
// ObservePulled, raft counters fed by ObserveApply and ObserveRoleChange, and
// collectors that read raft, store and consumer gauges at scrape time from the
// Source given to Watch.
type Metrics struct {
	opts Options
	reg  *prometheus.Registry
	// wrapped registers into reg with Options' constant labels.
	wrapped prometheus.Registerer

	requests   *prometheus.CounterVec   // by request and response code
	rpcLatency *prometheus.HistogramVec // rocketmq_rpc_latency
	// series caches requests' and rpcLatency's children per requestSeriesKey.
	series      sync.Map
	forwardedIn prometheus.Counter
	elections   prometheus.Counter
	leaderChg   prometheus.Counter
	replicate   prometheus.Histogram
	flush       prometheus.Histogram
	traffic     *traffic

	// watched is what the scrape-time collectors read; nil until Watch.
	watched atomic.Pointer[Source]
}

// latencyBuckets span a sub-millisecond local append to a multi-second
// long-poll or election stall.
var latencyBuckets = []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// rpcBuckets are RocketMQ's rpc_latency buckets (1, 3, 5, 7, 10, 100 ms, 1, 2,
// 3 s) in seconds, with steps between 10 ms and 1 s for a quorum write and the
// long-poll range up to the 30 s a client suspends a pull for.
var rpcBuckets = []float64{0.001, 0.003, 0.005, 0.007, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30}

// New builds a registry with the Go runtime and process collectors and every
// broker metric, labelled with o's cluster, node_type, node_id and broker_name.
func New(o Options) *Metrics {
	if o.MaxTopics <= 0 {
		o.MaxTopics = DefaultMaxTopics
	}
	if o.MaxGroups <= 0 {
		o.MaxGroups = DefaultMaxGroups
	}
	m := &Metrics{opts: o, reg: prometheus.NewRegistry()}
	m.wrapped = prometheus.WrapRegistererWith(o.constLabels(), m.reg)
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "rocketraft", Subsystem: "broker", Name: "requests_total",
		Help: "Requests served, by request code name and response code name (none: no answer).",
	}, []string{"request", "code"})
	m.rpcLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rocketmq_rpc_latency",
		Help:    "Seconds to answer a request, by request and response code (a long-polling pull includes its wait).",
		Buckets: rpcBuckets,
	}, []string{"protocol_type", "request_code", "response_code", "is_long_polling"})
	m.forwardedIn = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "rocketraft", Subsystem: "broker", Name: "forwarded_requests_received_total",
		Help: "Requests a follower relayed to this node because it leads.",
	})
	m.elections = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "rocketraft", Subsystem: "raft", Name: "term_changes_total",
		Help: "Terms this node has seen begin (each is one election).",
	})
	m.leaderChg = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "rocketraft", Subsystem: "raft", Name: "role_changes_total",
		Help: "Role changes of this node (leader only after its barrier).",
	})
	m.replicate = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "rocketraft", Subsystem: "raft", Name: "apply_duration_seconds",
		Help:    "Time from proposing a batch of messages to its being applied on this leader.",
		Buckets: latencyBuckets,
	})
	m.flush = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "rocketraft", Subsystem: "store", Name: "flush_duration_seconds",
		Help:    "Time of each store flush (the fsync path): CommitLog msync, ConsumeQueues, IndexFiles, checkpoint.",
		Buckets: latencyBuckets,
	})
	overflow := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "rocketraft", Subsystem: "metrics", Name: "label_overflow_total",
		Help: "Times a topic or consumer_group beyond the cap was reported as " + OtherLabel + " (per observation, and per scrape for the consumer gauges).",
	}, []string{"label"})
	topics := newLabelCap(o.MaxTopics, overflow.WithLabelValues(labelTopic))
	groups := newLabelCap(o.MaxGroups, overflow.WithLabelValues(labelConsumerGroup))
	m.traffic = newTraffic(topics, groups)
	m.wrapped.MustRegister(m.requests, m.rpcLatency, m.forwardedIn, m.elections, m.leaderChg, m.replicate, m.flush, overflow,
		capGauge(labelTopic, o.MaxTopics, topics), capGauge(labelConsumerGroup, o.MaxGroups, groups),
		stateCollector{&m.watched}, lagCollector{src: &m.watched, pulls: m.traffic.pulls, topics: topics, groups: groups})
	m.wrapped.MustRegister(m.traffic.collectors()...)
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// capGauge exports how many values of label have their own series, and the cap.
func capGauge(label string, limit int, c *labelCap) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "rocketraft", Subsystem: "metrics", Name: "label_values",
		Help:        "Distinct topic or consumer_group values with their own series; at limit, later ones are " + OtherLabel + ".",
		ConstLabels: prometheus.Labels{"label": label, "limit": strconv.Itoa(limit)},
	}, func() float64 { return float64(c.size()) })
}

// Registry is what /metrics serves.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Options are the labels and caps New was given (defaults filled in).
func (m *Metrics) Options() Options { return m.opts }

// Watch makes scrapes read src, and records src.Store's flush times.
func (m *Metrics) Watch(src Source) {
	m.watched.Store(&src)
	if src.Store != nil {
		src.Store.SetFlushObserver(func(d time.Duration) { m.flush.Observe(d.Seconds()) })
	}
}

// ObserveSent records one message a send request stored (the leader's send
// handler, after the quorum write): the topic the producer named, the
// properties it sent, whether it is a prepared transaction message, and the
// stored record's size. Sends to %RETRY% and %DLQ% topics are not counted.
func (m *Metrics) ObserveSent(topic, props string, prepared bool, storedBytes int) {
	m.traffic.sent(topic, props, prepared, storedBytes)
}

// ObservePulled records one pull this node answered: the group's next offset
// of the queue, and the messages and bytes returned.
func (m *Metrics) ObservePulled(group, topic string, queueID int32, next store.QueueOffset, msgs, bytes int) {
	m.traffic.pulled(group, topic, queueID, next, msgs, bytes)
}

// ObserveApply records how long a successful PutMessages took from proposal to
// being applied here (replica.NodeOptions.ObserveApply).
func (m *Metrics) ObserveApply(d time.Duration) { m.replicate.Observe(d.Seconds()) }

// ObserveRoleChange counts one role change to st and the terms that began since
// prevTerm, the term of the status before it (each is one election). A status
// whose term is not higher counts no term change.
func (m *Metrics) ObserveRoleChange(prevTerm uint64, st replica.Status) {
	m.leaderChg.Inc()
	if st.Term > prevTerm {
		m.elections.Add(float64(st.Term - prevTerm))
	}
}
