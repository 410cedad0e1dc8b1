package metrics

import (
	"strings"
	"sync"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
	"github.com/prometheus/client_golang/prometheus"
)

// raftMetric maps one go-metrics key of hashicorp/raft onto a Prometheus family
// with a conventional name. Keys not in the tables below are dropped: raft
// reports ~50, most of them internal steps (decode, enqueue) that no operator
// alerts on.
type raftMetric struct {
	key  string // the go-metrics key, joined with "."
	name string
	help string
	// labels are the family's label names; each takes the go-metrics label of
	// that name (peer_id), or its value in fixed.
	labels []string
	fixed  map[string]string
}

// raftTimers are raft's timings. go-metrics reports them in milliseconds (its
// default TimerGranularity; raft.leader.lastContact raft computes in ms itself);
// the sink exports seconds.
var raftTimers = []raftMetric{
	{key: "raft.commitTime", name: "rocketraft_raft_commit_duration_seconds",
		help: "On the leader, time from an entry being dispatched to its commit (a quorum wrote it to its raft log)."},
	{key: "raft.leader.dispatchLog", name: "rocketraft_raft_leader_dispatch_log_duration_seconds",
		help: "On the leader, time to write (and fsync) a batch of entries to its own raft log."},
	{key: "raft.rpc.appendEntries.storeLogs", name: "rocketraft_raft_follower_store_logs_duration_seconds",
		help: "On a follower, time to write (and fsync) the entries of one AppendEntries to its raft log."},
	{key: "raft.fsm.applyBatch", name: "rocketraft_raft_fsm_apply_batch_duration_seconds",
		help: "Time of one FSM ApplyBatch call (committed entries into the CommitLog and metadata)."},
	{key: "raft.fsm.apply", name: "rocketraft_raft_fsm_apply_duration_seconds",
		help: "Time of one non-batched FSM Apply call."},
	{key: "raft.replication.appendEntries.rpc", name: "rocketraft_raft_replication_append_entries_duration_seconds",
		help: "On the leader, round trip of one AppendEntries carrying entries to a follower.", labels: []string{"peer_id"}},
	{key: "raft.replication.heartbeat", name: "rocketraft_raft_replication_heartbeat_duration_seconds",
		help: "On the leader, round trip of one heartbeat to a follower.", labels: []string{"peer_id"}},
	{key: "raft.replication.installSnapshot", name: "rocketraft_raft_replication_install_snapshot_duration_seconds",
		help: "On the leader, time to send a snapshot to a follower that fell behind the log.", labels: []string{"peer_id"}},
	{key: "raft.leader.lastContact", name: "rocketraft_raft_leader_last_contact_seconds",
		help: "On the leader, time since each follower last answered, sampled at every lease check."},
	{key: "raft.snapshot.create", name: "rocketraft_raft_snapshot_create_duration_seconds",
		help: "Time to create a snapshot sink."},
	{key: "raft.snapshot.persist", name: "rocketraft_raft_snapshot_persist_duration_seconds",
		help: "Time to write a snapshot out (the CommitLog range streamed into it)."},
	{key: "raft.fsm.snapshot", name: "rocketraft_raft_fsm_snapshot_duration_seconds",
		help: "Time for the FSM to capture a snapshot."},
	{key: "raft.fsm.restore", name: "rocketraft_raft_fsm_restore_duration_seconds",
		help: "Time for the FSM to restore a snapshot."},
}

var raftCounters = []raftMetric{
	{key: "raft.replication.appendEntries.logs", name: "rocketraft_raft_replication_append_entries_logs_total",
		help: "On the leader, entries sent to each follower.", labels: []string{"peer_id"}},
	{key: "raft.state.follower", name: "rocketraft_raft_state_transitions_total",
		help:   "Times raft entered each state (candidate counts elections this node started).",
		labels: []string{"state"}, fixed: map[string]string{"state": "follower"}},
	{key: "raft.state.candidate", name: "rocketraft_raft_state_transitions_total", labels: []string{"state"}, fixed: map[string]string{"state": "candidate"}},
	{key: "raft.state.leader", name: "rocketraft_raft_state_transitions_total", labels: []string{"state"}, fixed: map[string]string{"state": "leader"}},
	{key: "raft.transition.heartbeat_timeout", name: "rocketraft_raft_heartbeat_timeouts_total",
		help: "Times this follower heard nothing from the leader for raftHeartbeatTimeout."},
	{key: "raft.transition.leader_lease_timeout", name: "rocketraft_raft_leader_lease_timeouts_total",
		help: "Times this leader stepped down because it could not reach a quorum for raftLeaderLeaseTimeout."},
}

var raftGauges = []raftMetric{
	{key: "raft.peers", name: "rocketraft_raft_peers", help: "Voters of the group other than this node, as the leader sees them."},
}

// raftBuckets span a heartbeat on a LAN (~100 µs) to an election-length stall.
var raftBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// raftSeriesExpiry is how long a per-peer series lives without updates: a
// removed peer's series disappear after it; a live peer's heartbeat timings
// refresh it many times a second.
const raftSeriesExpiry = 10 * time.Minute

// raftFamily is one exported family and the keys that feed it.
type raftFamily struct {
	def     raftMetric
	hist    *prometheus.HistogramVec
	counter *prometheus.CounterVec
	gauge   *prometheus.GaugeVec
}

func (f *raftFamily) vec() *prometheus.MetricVec {
	switch {
	case f.hist != nil:
		return f.hist.MetricVec
	case f.counter != nil:
		return f.counter.MetricVec
	}
	return f.gauge.MetricVec
}

// raftSink is a go-metrics sink that maps raft's keys (raftTimers, raftCounters,
// raftGauges) onto Prometheus families, and a prometheus.Collector of them.
type raftSink struct {
	now   func() time.Time
	byKey map[string]*raftFamily
	all   []*raftFamily

	mu sync.Mutex
	// seen is when each labelled series (family name + label values) last
	// changed; Collect drops those older than raftSeriesExpiry.
	seen map[string]seenSeries
}

type seenSeries struct {
	family *raftFamily
	values []string
	at     time.Time
}

var _ gometrics.MetricSink = (*raftSink)(nil)

func newRaftSink(now func() time.Time) *raftSink {
	s := &raftSink{now: now, byKey: make(map[string]*raftFamily), seen: make(map[string]seenSeries)}
	byName := make(map[string]*raftFamily)
	add := func(defs []raftMetric, build func(raftMetric) *raftFamily) {
		for _, d := range defs {
			f, ok := byName[d.name]
			if !ok {
				f = build(d)
				byName[d.name] = f
				s.all = append(s.all, f)
			}
			s.byKey[d.key] = &raftFamily{def: d, hist: f.hist, counter: f.counter, gauge: f.gauge}
		}
	}
	add(raftTimers, func(d raftMetric) *raftFamily {
		return &raftFamily{def: d, hist: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: d.name, Help: d.help, Buckets: raftBuckets}, d.labels)}
	})
	add(raftCounters, func(d raftMetric) *raftFamily {
		return &raftFamily{def: d, counter: prometheus.NewCounterVec(prometheus.CounterOpts{Name: d.name, Help: d.help}, d.labels)}
	})
	add(raftGauges, func(d raftMetric) *raftFamily {
		return &raftFamily{def: d, gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: d.name, Help: d.help}, d.labels)}
	})
	return s
}

// family returns the family of key and the label values for it, or nil.
func (s *raftSink) family(key []string, labels []gometrics.Label) (*raftFamily, []string) {
	f := s.byKey[strings.Join(key, ".")]
	if f == nil {
		return nil, nil
	}
	values := make([]string, len(f.def.labels))
	for i, name := range f.def.labels {
		if v, ok := f.def.fixed[name]; ok {
			values[i] = v
			continue
		}
		for _, l := range labels {
			if l.Name == name {
				values[i] = l.Value
			}
		}
	}
	if len(values) > 0 && len(f.def.fixed) == 0 {
		s.touch(f, values)
	}
	return f, values
}

func (s *raftSink) touch(f *raftFamily, values []string) {
	id := f.def.name + "\xff" + strings.Join(values, "\xff")
	s.mu.Lock()
	s.seen[id] = seenSeries{family: f, values: values, at: s.now()}
	s.mu.Unlock()
}

func (s *raftSink) SetGauge(key []string, val float32) { s.SetGaugeWithLabels(key, val, nil) }

func (s *raftSink) SetGaugeWithLabels(key []string, val float32, labels []gometrics.Label) {
	if f, values := s.family(key, labels); f != nil && f.gauge != nil {
		f.gauge.WithLabelValues(values...).Set(float64(val))
	}
}

// EmitKey is not used by raft.
func (s *raftSink) EmitKey([]string, float32) {}

func (s *raftSink) IncrCounter(key []string, val float32) { s.IncrCounterWithLabels(key, val, nil) }

func (s *raftSink) IncrCounterWithLabels(key []string, val float32, labels []gometrics.Label) {
	if f, values := s.family(key, labels); f != nil && f.counter != nil && val >= 0 {
		f.counter.WithLabelValues(values...).Add(float64(val))
	}
}

func (s *raftSink) AddSample(key []string, val float32) { s.AddSampleWithLabels(key, val, nil) }

// AddSampleWithLabels observes a timing, converting go-metrics' milliseconds
// to seconds.
func (s *raftSink) AddSampleWithLabels(key []string, val float32, labels []gometrics.Label) {
	if f, values := s.family(key, labels); f != nil && f.hist != nil {
		f.hist.WithLabelValues(values...).Observe(float64(val) / 1000)
	}
}

func (s *raftSink) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range s.all {
		f.vec().Describe(ch)
	}
}

// Collect first drops the labelled series not updated for raftSeriesExpiry.
func (s *raftSink) Collect(ch chan<- prometheus.Metric) {
	deadline := s.now().Add(-raftSeriesExpiry)
	s.mu.Lock()
	for id, ss := range s.seen {
		if ss.at.Before(deadline) {
			ss.family.vec().DeleteLabelValues(ss.values...)
			delete(s.seen, id)
		}
	}
	s.mu.Unlock()
	for _, f := range s.all {
		f.vec().Collect(ch)
	}
}
