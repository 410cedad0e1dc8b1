package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/rocketraft/rocketraft/broker/replica"
)

// Metrics is one broker node's Prometheus registry: its own registry (never the
// global one, so several brokers in one test process do not collide), request
// counters and histograms fed by Stage, raft counters fed by ObserveApply and
// ObserveRoleChange, and a collector that reads raft and store gauges at scrape
// time from the Source given to Watch.
type Metrics struct {
	reg *prometheus.Registry

	requests    *prometheus.CounterVec   // by request and response code
	latency     *prometheus.HistogramVec // send and pull only
	forwardedIn prometheus.Counter
	elections   prometheus.Counter
	leaderChg   prometheus.Counter
	replicate   prometheus.Histogram
	flush       prometheus.Histogram

	// watched is what the scrape-time collector reads; nil until Watch.
	watched atomic.Pointer[Source]
}

// latencyBuckets span a sub-millisecond local append to a multi-second
// long-poll or election stall.
var latencyBuckets = []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// New builds a registry with the Go runtime and process collectors and every
// broker metric.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "rocketraft", Subsystem: "broker", Name: "requests_total",
		Help: "Requests served, by request code name and response code name (none: no answer).",
	}, []string{"request", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "rocketraft", Subsystem: "broker", Name: "request_duration_seconds",
		Help:    "Time to answer sends and pulls (a pull includes its long-poll wait).",
		Buckets: latencyBuckets,
	}, []string{"request"})
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
		Help:    "Time of each store flush: CommitLog msync, ConsumeQueues, IndexFiles, checkpoint.",
		Buckets: latencyBuckets,
	})
	m.reg.MustRegister(m.requests, m.latency, m.forwardedIn, m.elections, m.leaderChg, m.replicate, m.flush,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		stateCollector{&m.watched})
	return m
}

// Registry is what /metrics serves.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Watch makes scrapes read src, and records src.Store's flush times.
func (m *Metrics) Watch(src Source) {
	m.watched.Store(&src)
	if src.Store != nil {
		src.Store.SetFlushObserver(func(d time.Duration) { m.flush.Observe(d.Seconds()) })
	}
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
