package metrics

import (
	"regexp"
	"strings"
	"testing"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestParseLastContact(t *testing.T) {
	for in, want := range map[string]time.Duration{"0": 0, "12.5ms": 12500 * time.Microsecond, "2s": 2 * time.Second} {
		if d, ok := parseLastContact(in); !ok || d != want {
			t.Errorf("%q → %v %v", in, d, ok)
		}
	}
	if _, ok := parseLastContact("never"); ok {
		t.Error("never parsed")
	}
}

// gatherFamily returns the family called name, or nil.
func gatherFamily(t *testing.T, g prometheus.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f
		}
	}
	return nil
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// TestRaftInternalsReachTheRegistry drives go-metrics' global API the way raft
// does and checks the renamed, converted families.
func TestRaftInternalsReachTheRegistry(t *testing.T) {
	m := New(testOptions)
	if err := m.ExportRaftInternals(); err != nil {
		t.Fatal(err)
	}
	gometrics.MeasureSince([]string{"raft", "commitTime"}, time.Now().Add(-20*time.Millisecond))
	gometrics.MeasureSinceWithLabels([]string{"raft", "replication", "heartbeat"}, time.Now().Add(-2*time.Millisecond),
		[]gometrics.Label{{Name: "peer_id", Value: "n1"}})
	// The legacy duplicate raft also emits, with the peer in the key: dropped.
	gometrics.MeasureSince([]string{"raft", "replication", "heartbeat", "n1"}, time.Now())
	gometrics.AddSample([]string{"raft", "leader", "lastContact"}, 250) // raft reports ms
	gometrics.IncrCounter([]string{"raft", "state", "candidate"}, 1)
	gometrics.IncrCounter([]string{"raft", "state", "candidate"}, 1)
	gometrics.IncrCounter([]string{"raft", "state", "leader"}, 1)
	gometrics.SetGauge([]string{"raft", "peers"}, 2)
	gometrics.MeasureSince([]string{"raft", "net", "rpcDecode"}, time.Now()) // not mapped

	commit := gatherFamily(t, m.Registry(), "rocketraft_raft_commit_duration_seconds")
	if commit == nil || len(commit.GetMetric()) != 1 {
		t.Fatalf("commit duration family: %v", commit)
	}
	h := commit.GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 1 || h.GetSampleSum() < 0.02 || h.GetSampleSum() > 1 {
		t.Errorf("commit duration: count %d sum %v s, want 1 sample of ~0.02 s (ms converted to seconds)", h.GetSampleCount(), h.GetSampleSum())
	}
	if l := labelsOf(commit.GetMetric()[0]); l["node_id"] != "broker-a-n0" || l["cluster"] != "c1" {
		t.Errorf("commit duration labels %v lack the node's constant labels", l)
	}
	hb := gatherFamily(t, m.Registry(), "rocketraft_raft_replication_heartbeat_duration_seconds")
	if hb == nil || len(hb.GetMetric()) != 1 || labelsOf(hb.GetMetric()[0])["peer_id"] != "n1" || hb.GetMetric()[0].GetHistogram().GetSampleCount() != 1 {
		t.Errorf("heartbeat family (one series, peer_id n1, one sample; the legacy key dropped): %v", hb)
	}
	lc := gatherFamily(t, m.Registry(), "rocketraft_raft_leader_last_contact_seconds")
	if lc == nil || lc.GetMetric()[0].GetHistogram().GetSampleSum() != 0.25 {
		t.Errorf("leader last contact: %v, want a 0.25 s sample", lc)
	}
	states := map[string]float64{}
	if f := gatherFamily(t, m.Registry(), "rocketraft_raft_state_transitions_total"); f != nil {
		for _, s := range f.GetMetric() {
			states[labelsOf(s)["state"]] = s.GetCounter().GetValue()
		}
	}
	if states["candidate"] != 2 || states["leader"] != 1 {
		t.Errorf("state transitions %v, want candidate 2, leader 1", states)
	}
	if f := gatherFamily(t, m.Registry(), "rocketraft_raft_peers"); f == nil || f.GetMetric()[0].GetGauge().GetValue() != 2 {
		t.Errorf("raft peers: %v", f)
	}
	families, _ := m.Registry().Gather()
	for _, f := range families {
		if n := strings.ToLower(f.GetName()); strings.Contains(n, "rpcdecode") || strings.Contains(n, "committime") {
			t.Errorf("%s exported: raft's camelCase keys must not leak through", f.GetName())
		}
	}
}

// TestRaftNamesFollowConventions: every mapped family is snake_case under
// rocketraft_raft_, timings end in _seconds, counters in _total.
func TestRaftNamesFollowConventions(t *testing.T) {
	snake := regexp.MustCompile(`^rocketraft_raft_[a-z0-9_]+$`)
	check := func(defs []raftMetric, suffix string) {
		for _, d := range defs {
			if !snake.MatchString(d.name) || (suffix != "" && !strings.HasSuffix(d.name, suffix)) {
				t.Errorf("%s → %s: want rocketraft_raft_ snake_case ending %q", d.key, d.name, suffix)
			}
			if !strings.HasPrefix(d.key, "raft.") {
				t.Errorf("%s: not a raft key", d.key)
			}
		}
	}
	check(raftTimers, "_seconds")
	check(raftCounters, "_total")
	check(raftGauges, "")
}

// TestRaftPeerSeriesExpire: a per-peer series not updated for
// raftSeriesExpiry (a removed peer) disappears; a fresh one stays.
func TestRaftPeerSeriesExpire(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := newRaftSink(func() time.Time { return now })
	reg := prometheus.NewRegistry()
	reg.MustRegister(s)
	s.AddSampleWithLabels([]string{"raft", "replication", "heartbeat"}, 1, []gometrics.Label{{Name: "peer_id", Value: "gone"}})
	now = now.Add(raftSeriesExpiry / 2)
	s.AddSampleWithLabels([]string{"raft", "replication", "heartbeat"}, 1, []gometrics.Label{{Name: "peer_id", Value: "live"}})
	now = now.Add(raftSeriesExpiry/2 + time.Second)
	f := gatherFamily(t, reg, "rocketraft_raft_replication_heartbeat_duration_seconds")
	var peers []string
	for _, m := range f.GetMetric() {
		peers = append(peers, labelsOf(m)["peer_id"])
	}
	if len(peers) != 1 || peers[0] != "live" {
		t.Fatalf("peers after expiry %v, want [live]", peers)
	}
}
