package broker

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketraft/rocketraft/transport"
)

// Metrics is one broker node's Prometheus registry: its own registry (never the
// global one, so several brokers in one test process do not collide), request
// counters and histograms fed by serve, raft counters fed by the instrumented
// Replica, and a collector that reads raft and store gauges at scrape time.
//
// Wiring: m := NewMetrics(); rep = WithMetrics(rep, m); b := New(cfg, st, rep);
// m.Watch(b). The broker finds m through its Replica (metricsCarrier), so a
// broker built without WithMetrics records nothing and pays one type assertion
// per request.
type Metrics struct {
	reg *prometheus.Registry

	requests    *prometheus.CounterVec   // by request and response code
	latency     *prometheus.HistogramVec // send and pull only
	forwardedIn prometheus.Counter
	elections   prometheus.Counter
	leaderChg   prometheus.Counter
	replicate   prometheus.Histogram
	flush       prometheus.Histogram

	// watched is the broker the scrape-time collector reads; nil until Watch.
	watched atomic.Pointer[Broker]
}

// latencyBuckets span a sub-millisecond local append to a multi-second
// long-poll or election stall.
var latencyBuckets = []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// NewMetrics builds a registry with the Go runtime and process collectors and
// every broker metric.
func NewMetrics() *Metrics {
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
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}),
		stateCollector{m})
	return m
}

// Registry is what /metrics serves.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Watch makes scrapes read b's raft status and store.
func (m *Metrics) Watch(b *Broker) {
	m.watched.Store(b)
	b.store.SetFlushObserver(func(d time.Duration) { m.flush.Observe(d.Seconds()) })
}

// requestLabel names a request code; codes outside the known tables collapse to
// "other" so a client cannot grow the label set.
func requestLabel(c transport.RequestCode) string {
	s := c.String()
	if len(s) > 7 && s[:7] == "UNKNOWN" {
		return "other"
	}
	return s
}

func (m *Metrics) observeRequest(req, resp *transport.Command, elapsed time.Duration) {
	code := "none"
	if resp != nil {
		code = resp.ResponseCode().String()
	}
	rc := req.RequestCode()
	m.requests.WithLabelValues(requestLabel(rc), code).Inc()
	switch rc {
	case transport.SendMessage, transport.SendMessageV2, transport.SendBatchMessage:
		m.latency.WithLabelValues("send").Observe(elapsed.Seconds())
	case transport.PullMessage:
		m.latency.WithLabelValues("pull").Observe(elapsed.Seconds())
	}
	if req.ExtFields[extForwarded] != "" {
		m.forwardedIn.Inc()
	}
}

// metricsCarrier is implemented by the Replica WithMetrics returns.
type metricsCarrier interface{ brokerMetrics() *Metrics }

func (b *Broker) metrics() *Metrics {
	if c, ok := b.replica.(metricsCarrier); ok {
		return c.brokerMetrics()
	}
	return nil
}

// WithMetrics wraps rep so that the broker records into m, raft role changes
// and apply latency are counted, and RaftAdmin still reaches rep.
func WithMetrics(rep Replica, m *Metrics) Replica {
	return &instrumentedReplica{Replica: rep, m: m}
}

type instrumentedReplica struct {
	Replica
	m        *Metrics
	once     sync.Once
	relay    chan ReplicaStatus
	lastTerm atomic.Uint64
}

func (r *instrumentedReplica) brokerMetrics() *Metrics { return r.m }

func (r *instrumentedReplica) PutMessages(ctx context.Context, recs [][]byte) ([]PutResult, error) {
	start := time.Now()
	res, err := r.Replica.PutMessages(ctx, recs)
	if err == nil {
		r.m.replicate.Observe(time.Since(start).Seconds())
	}
	return res, err
}

// RoleChanges relays the inner channel, counting role and term changes. It is
// read by the broker's role watcher; like the inner channel it holds only the
// newest status, so a reader that stopped never blocks the relay.
func (r *instrumentedReplica) RoleChanges() <-chan ReplicaStatus {
	r.once.Do(func() {
		in := r.Replica.RoleChanges()
		r.relay = make(chan ReplicaStatus, 1)
		r.lastTerm.Store(r.Replica.Status().Term)
		go func() {
			defer close(r.relay)
			for st := range in {
				r.m.leaderChg.Inc()
				if prev := r.lastTerm.Swap(st.Term); st.Term > prev {
					r.m.elections.Add(float64(st.Term - prev))
				}
				offerNewest(r.relay, st)
			}
		}()
	})
	return r.relay
}

// offerNewest puts st into a one-slot channel, dropping an unread older status.
// Only one goroutine sends, so the loop ends within two rounds.
func offerNewest(ch chan ReplicaStatus, st ReplicaStatus) {
	for {
		select {
		case ch <- st:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}

func (r *instrumentedReplica) inner() (RaftAdmin, error) {
	ra, ok := r.Replica.(RaftAdmin)
	if !ok {
		return nil, ErrNoRaftAdmin
	}
	return ra, nil
}

func (r *instrumentedReplica) Peers() ([]RaftPeer, error) {
	ra, err := r.inner()
	if err != nil {
		return nil, err
	}
	return ra.Peers()
}

func (r *instrumentedReplica) AddVoter(ctx context.Context, id, addr string) error {
	ra, err := r.inner()
	if err != nil {
		return err
	}
	return ra.AddVoter(ctx, id, addr)
}

func (r *instrumentedReplica) AddNonvoter(ctx context.Context, id, addr string) error {
	ra, err := r.inner()
	if err != nil {
		return err
	}
	return ra.AddNonvoter(ctx, id, addr)
}

func (r *instrumentedReplica) RemoveServer(ctx context.Context, id string) error {
	ra, err := r.inner()
	if err != nil {
		return err
	}
	return ra.RemoveServer(ctx, id)
}

func (r *instrumentedReplica) Snapshot() error {
	ra, err := r.inner()
	if err != nil {
		return err
	}
	return ra.Snapshot()
}

func (r *instrumentedReplica) RaftStats() map[string]string {
	if ra, err := r.inner(); err == nil {
		return ra.RaftStats()
	}
	return map[string]string{}
}

// stateCollector reads raft status and store offsets once per scrape.
type stateCollector struct{ m *Metrics }

var (
	descTerm = prometheus.NewDesc("rocketraft_raft_term", "Current raft term.", nil, nil)
	descRole = prometheus.NewDesc("rocketraft_raft_role",
		"1 for this node's current role (LEADER only after the barrier).", []string{"role"}, nil)
	descApplied     = prometheus.NewDesc("rocketraft_raft_applied_index", "Last raft index applied to the FSM.", nil, nil)
	descCommit      = prometheus.NewDesc("rocketraft_raft_commit_index", "Last raft index known committed.", nil, nil)
	descLast        = prometheus.NewDesc("rocketraft_raft_last_index", "Last index in the raft log.", nil, nil)
	descLastContact = prometheus.NewDesc("rocketraft_raft_last_contact_seconds",
		"Time since this follower last heard from the leader (0 on the leader).", nil, nil)
	descCLMax       = prometheus.NewDesc("rocketraft_store_commitlog_max_offset_bytes", "CommitLog max physical offset.", nil, nil)
	descCLMin       = prometheus.NewDesc("rocketraft_store_commitlog_min_offset_bytes", "CommitLog min physical offset.", nil, nil)
	descDisk        = prometheus.NewDesc("rocketraft_store_disk_used_ratio", "Used fraction of the store's file system.", nil, nil)
	descDispatchLag = prometheus.NewDesc("rocketraft_store_dispatch_lag_bytes",
		"CommitLog bytes applied but not yet dispatched to ConsumeQueues (not yet pullable).", nil, nil)
	descUnflushed = prometheus.NewDesc("rocketraft_store_unflushed_bytes",
		"CommitLog bytes not yet flushed by the store (the raft log already holds them durably).", nil, nil)
	descPolls = prometheus.NewDesc("rocketraft_broker_long_poll_waiters", "Pull requests held by long polling.", nil, nil)
)

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTerm, descRole, descApplied, descCommit, descLast, descLastContact, descCLMax, descCLMin, descDisk, descDispatchLag, descUnflushed, descPolls} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	b := c.m.watched.Load()
	if b == nil {
		return
	}
	st := b.replica.Status()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descTerm, float64(st.Term))
	for _, r := range []Role{RoleFollower, RoleCandidate, RoleLeader, RoleShutdown} {
		v := 0.0
		if r == st.Role {
			v = 1
		}
		gauge(descRole, v, r.String())
	}
	gauge(descApplied, float64(st.AppliedIndex))
	gauge(descCommit, float64(st.CommitIndex))
	gauge(descLast, float64(st.LastIndex))
	if ra, ok := b.replica.(RaftAdmin); ok {
		if d, ok := parseLastContact(ra.RaftStats()["last_contact"]); ok {
			gauge(descLastContact, d.Seconds())
		}
	}
	gauge(descCLMax, float64(b.store.MaxPhysicalOffset()))
	gauge(descCLMin, float64(b.store.MinPhysicalOffset()))
	maxOff := b.store.MaxPhysicalOffset()
	gauge(descDispatchLag, float64(max(0, maxOff-b.store.DispatchedPhysicalOffset())))
	gauge(descUnflushed, float64(max(0, maxOff-b.store.FlushedPhysicalOffset())))
	if ratio, err := b.store.DiskUsedRatio(); err == nil {
		gauge(descDisk, ratio)
	}
	gauge(descPolls, float64(b.pulls.count()))
}

// parseLastContact reads raft's Stats()["last_contact"]: "never", "0" (a leader)
// or a time.Duration string.
func parseLastContact(s string) (time.Duration, bool) {
	switch s {
	case "", "never":
		return 0, false
	case "0":
		return 0, true
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Duration(n), true
		}
		return 0, false
	}
	return d, true
}
