package broker

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// adminFake is a Replica and RaftAdmin whose answers the test sets.
type adminFake struct {
	mu       sync.Mutex
	status   ReplicaStatus
	topics   []TopicConfig
	offsets  map[offsetKey]store.QueueOffset
	peers    []RaftPeer
	calls    []string
	snapErr  error
	changes  chan ReplicaStatus
	transfer string
}

func (f *adminFake) PutMessages(context.Context, [][]byte) ([]PutResult, error) {
	return nil, ErrNotLeader
}
func (f *adminFake) UpsertTopic(context.Context, TopicConfig) error                   { return nil }
func (f *adminFake) DeleteTopic(context.Context, string) error                        { return nil }
func (f *adminFake) UpsertSubscriptionGroup(context.Context, SubscriptionGroup) error { return nil }
func (f *adminFake) CommitOffsets(context.Context, []ConsumerOffset) error            { return nil }
func (f *adminFake) Topic(name string) (TopicConfig, bool) {
	for _, t := range f.topics {
		if t.Name == name {
			return t, true
		}
	}
	return TopicConfig{}, false
}
func (f *adminFake) Topics() []TopicConfig                   { return f.topics }
func (f *adminFake) SubscriptionGroups() []SubscriptionGroup { return nil }
func (f *adminFake) ConsumerOffset(g, t string, q int32) (store.QueueOffset, bool) {
	off, ok := f.offsets[offsetKey{g, t, q}]
	return off, ok
}
func (f *adminFake) DataVersion() int64 { return 1 }
func (f *adminFake) Status() ReplicaStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status
}
func (f *adminFake) RoleChanges() <-chan ReplicaStatus { return f.changes }
func (f *adminFake) TransferLeadership(_ context.Context, to string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.transfer = "to=" + to
	return nil
}
func (f *adminFake) Peers() ([]RaftPeer, error) { return append([]RaftPeer(nil), f.peers...), nil }
func (f *adminFake) AddVoter(_ context.Context, id, addr string) error {
	f.calls = append(f.calls, "voter "+id+" "+addr)
	return nil
}
func (f *adminFake) AddNonvoter(_ context.Context, id, addr string) error {
	f.calls = append(f.calls, "nonvoter "+id+" "+addr)
	return nil
}
func (f *adminFake) RemoveServer(_ context.Context, id string) error {
	f.calls = append(f.calls, "remove "+id)
	return nil
}
func (f *adminFake) Snapshot() error { return f.snapErr }
func (f *adminFake) RaftStats() map[string]string {
	return map[string]string{"last_contact": "0", "num_peers": "2", "last_snapshot_index": "7", "applied_index": "41"}
}

func newAdminBroker(t *testing.T, rep Replica) (*Broker, *store.Store) {
	t.Helper()
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	b, err := New(Config{ClusterName: "c", BrokerName: "broker-a", ClientAddr: "127.0.0.1:10911", SelfID: "n0",
		Peers: []Peer{{ID: "n0", ClientAddr: "127.0.0.1:10911"}, {ID: "n1"}}}, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.client.Close() })
	b.status = rep.Status()
	return b, st
}

func leaderFake() *adminFake {
	return &adminFake{
		status: ReplicaStatus{Role: RoleLeader, Term: 3, SelfID: "n0", LeaderID: "n0", AppliedIndex: 40, CommitIndex: 41, LastIndex: 42},
		peers: []RaftPeer{{ID: "n0", Address: "127.0.0.1:40911", Suffrage: "Voter"},
			{ID: "n1", Address: "127.0.0.1:40921", Suffrage: "Nonvoter"}},
		offsets: map[offsetKey]store.QueueOffset{},
		changes: make(chan ReplicaStatus, 1),
	}
}

func call(t *testing.T, b *Broker, code transport.RequestCode, ext map[string]string) *transport.Command {
	t.Helper()
	resp := b.serve(context.Background(), nil, transport.NewRequest(code, ext, nil))
	if resp == nil {
		t.Fatalf("%s: no response", code)
	}
	return resp
}

func TestRuntimeInfoTable(t *testing.T) {
	f := leaderFake()
	b, _ := newAdminBroker(t, f)
	resp := call(t, b, transport.GetBrokerRuntimeInfo, nil)
	var body struct{ Table map[string]string }
	if err := json.Unmarshal(resp.Body, &body); err != nil || resp.ResponseCode() != transport.Success {
		t.Fatalf("code=%s body=%s err=%v", resp.ResponseCode(), resp.Body, err)
	}
	want := map[string]string{"role": "LEADER", "term": "3", "leaderId": "n0", "appliedIndex": "40",
		"commitIndex": "41", "lastIndex": "42", "raftAppliedIndex": "41", "brokerName": "broker-a", "commitLogMaxOffset": "0", "numPeers": "2"}
	for k, v := range want {
		if body.Table[k] != v {
			t.Errorf("table[%s] = %q, want %q", k, body.Table[k], v)
		}
	}
}

func TestRaftPeersMarksLeader(t *testing.T) {
	b, _ := newAdminBroker(t, leaderFake())
	var body struct{ Servers []RaftPeer }
	if err := json.Unmarshal(call(t, b, transport.RaftPeers, nil).Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Servers) != 2 || !body.Servers[0].Leader || body.Servers[1].Leader || body.Servers[1].Suffrage != "Nonvoter" {
		t.Fatalf("servers = %+v", body.Servers)
	}
}

func TestRaftChangesOnLeader(t *testing.T) {
	f := leaderFake()
	b, _ := newAdminBroker(t, f)
	ok := func(code transport.RequestCode, ext map[string]string) {
		t.Helper()
		if r := call(t, b, code, ext); r.ResponseCode() != transport.Success {
			t.Fatalf("%s %v: %s %s", code, ext, r.ResponseCode(), r.Remark)
		}
	}
	ok(transport.RaftAddVoter, map[string]string{"id": "n3", "address": "127.0.0.1:40941"})
	ok(transport.RaftAddNonvoter, map[string]string{"id": "n4", "address": "127.0.0.1:40951"})
	ok(transport.RaftRemoveServer, map[string]string{"id": "n4"})
	ok(transport.RaftTransferLeader, map[string]string{"id": "n1"})
	if got := strings.Join(f.calls, ","); got != "voter n3 127.0.0.1:40941,nonvoter n4 127.0.0.1:40951,remove n4" {
		t.Fatalf("calls = %s", got)
	}
	if f.transfer != "to=n1" {
		t.Fatalf("transfer = %s", f.transfer)
	}
	ok(transport.RaftTransferLeader, nil)
	if f.transfer != "to=" {
		t.Fatalf("transfer to any = %s", f.transfer)
	}

	bad := []struct {
		code transport.RequestCode
		ext  map[string]string
		want string
	}{
		{transport.RaftAddVoter, map[string]string{"id": "n3"}, "address"},
		{transport.RaftRemoveServer, nil, "id"},
		{transport.RaftTransferLeader, map[string]string{"id": "n9"}, "not a member"},
	}
	for _, c := range bad {
		r := call(t, b, c.code, c.ext)
		if r.ResponseCode() != transport.InvalidParameter || !strings.Contains(r.Remark, c.want) {
			t.Errorf("%s %v: %s %q, want INVALID_PARAMETER naming %s", c.code, c.ext, r.ResponseCode(), r.Remark, c.want)
		}
	}
}

func TestRaftChangeOnFollowerForwardsOrRefuses(t *testing.T) {
	f := leaderFake()
	f.status.Role, f.status.LeaderID = RoleFollower, "n1" // n1 has no client address
	b, _ := newAdminBroker(t, f)
	r := call(t, b, transport.RaftRemoveServer, map[string]string{"id": "n0"})
	if r.ResponseCode() != transport.ServiceNotAvailable || len(f.calls) != 0 {
		t.Fatalf("follower executed or misanswered: %s %q calls=%v", r.ResponseCode(), r.Remark, f.calls)
	}
	// A request already forwarded once is never forwarded again.
	r = call(t, b, transport.ConsumerProgress, map[string]string{"consumerGroup": "g", extForwarded: "n2"})
	if r.ResponseCode() != transport.ServiceNotAvailable || !strings.Contains(r.Remark, "not the leader") {
		t.Fatalf("forward loop guard: %s %q", r.ResponseCode(), r.Remark)
	}
}

func TestRaftSnapshotNothingNewIsSuccess(t *testing.T) {
	f := leaderFake()
	f.snapErr = ErrNothingToSnapshot
	b, _ := newAdminBroker(t, f)
	r := call(t, b, transport.RaftSnapshot, nil)
	if r.ResponseCode() != transport.Success || !strings.Contains(string(r.Body), "nothing new") {
		t.Fatalf("%s %s", r.ResponseCode(), r.Body)
	}
	f.snapErr = errors.New("disk full")
	if r := call(t, b, transport.RaftSnapshot, nil); r.ResponseCode() != transport.SystemError {
		t.Fatalf("failure answered %s", r.ResponseCode())
	}
}

func appendMessages(t *testing.T, st *store.Store, topic string, queue int32, n int) {
	t.Helper()
	host := netip.MustParseAddrPort("127.0.0.1:10911")
	var recs [][]byte
	for range n {
		rec, err := store.AppendMessage(nil, &store.Message{Topic: topic, QueueID: queue, Body: []byte("x"), BornHost: host, StoreHost: host})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if _, err := st.AppendBatch(recs, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.WaitDispatched(ctx, st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
}

func TestConsumerProgress(t *testing.T) {
	f := leaderFake()
	f.topics = []TopicConfig{{Name: "T", ReadQueueNums: 2, WriteQueueNums: 2}, {Name: "U", ReadQueueNums: 1, WriteQueueNums: 1}}
	f.offsets[offsetKey{"g", "T", 0}] = 3
	b, st := newAdminBroker(t, f)
	appendMessages(t, st, "T", 0, 5)
	appendMessages(t, st, "T", 1, 2)
	b.offsets.put(offsetKey{"g", "T", 1}, 1) // pending on the leader: counts

	decode := func(ext map[string]string) GroupProgress {
		t.Helper()
		r := call(t, b, transport.ConsumerProgress, ext)
		var gp GroupProgress
		if err := json.Unmarshal(r.Body, &gp); err != nil || r.ResponseCode() != transport.Success {
			t.Fatalf("%s %q %v", r.ResponseCode(), r.Remark, err)
		}
		return gp
	}
	gp := decode(map[string]string{"consumerGroup": "g"})
	want := []QueueProgress{{"T", 0, 5, 3, 2}, {"T", 1, 2, 1, 1}}
	if gp.BrokerName != "broker-a" || len(gp.Queues) != 2 || gp.Queues[0] != want[0] || gp.Queues[1] != want[1] {
		t.Fatalf("progress = %+v", gp)
	}
	// Naming a topic lists its queues even without an offset.
	gp = decode(map[string]string{"consumerGroup": "g", "topic": "U"})
	if len(gp.Queues) != 1 || gp.Queues[0] != (QueueProgress{"U", 0, 0, -1, 0}) {
		t.Fatalf("topic U = %+v", gp.Queues)
	}
	if r := call(t, b, transport.ConsumerProgress, nil); r.ResponseCode() != transport.InvalidParameter {
		t.Fatalf("missing group: %s", r.ResponseCode())
	}
}

func TestQueueProgressLag(t *testing.T) {
	cases := []struct {
		off            store.QueueOffset
		committed      bool
		minOff, maxOff store.QueueOffset
		wantLag        int64
		wantConsumer   store.QueueOffset
	}{
		{3, true, 0, 10, 7, 3},
		{0, false, 4, 10, 6, -1},
		{12, true, 0, 10, 0, 12}, // an offset past max (retention reset) is no negative lag
	}
	for _, c := range cases {
		p := queueProgress("T", 0, c.off, c.committed, c.minOff, c.maxOff)
		if p.Lag != c.wantLag || p.ConsumerOffset != c.wantConsumer || p.BrokerOffset != c.maxOff {
			t.Errorf("%+v → %+v", c, p)
		}
	}
}

func TestReadiness(t *testing.T) {
	cases := []struct {
		st   ReplicaStatus
		want bool
	}{
		{ReplicaStatus{Role: RoleFollower, LeaderID: "n0", AppliedIndex: 10, CommitIndex: 110}, true},
		{ReplicaStatus{Role: RoleFollower, LeaderID: "n0", AppliedIndex: 10, CommitIndex: 111}, false},
		{ReplicaStatus{Role: RoleCandidate, AppliedIndex: 10, CommitIndex: 10}, false},
		{ReplicaStatus{Role: RoleShutdown, LeaderID: "n0"}, false},
	}
	for _, c := range cases {
		if got, why := Readiness(c.st, 100); got != c.want {
			t.Errorf("%+v: ready=%v (%s)", c.st, got, why)
		}
	}
}

func TestMetricsAndAdminHTTP(t *testing.T) {
	f := leaderFake()
	m := NewMetrics()
	rep := WithMetrics(f, m)
	if _, ok := rep.(RaftAdmin); !ok {
		t.Fatal("instrumented replica hides RaftAdmin")
	}
	b, _ := newAdminBroker(t, rep)
	m.Watch(b)
	call(t, b, transport.GetMaxOffset, map[string]string{"topic": "T", "queueId": "0"})
	call(t, b, transport.GetMaxOffset, map[string]string{"topic": "T"})
	call(t, b, transport.RequestCode(9999), nil)
	if n := counterValue(t, m.requests.WithLabelValues("GET_MAX_OFFSET(30)", "SUCCESS(0)")); n != 1 {
		t.Errorf("GET_MAX_OFFSET success = %v", n)
	}
	if n := counterValue(t, m.requests.WithLabelValues("GET_MAX_OFFSET(30)", "INVALID_PARAMETER(29)")); n != 1 {
		t.Errorf("GET_MAX_OFFSET invalid = %v", n)
	}
	if n := counterValue(t, m.requests.WithLabelValues("other", "REQUEST_CODE_NOT_SUPPORTED(3)")); n != 1 {
		t.Errorf("unknown code = %v", n)
	}

	// Role changes through the relay count terms.
	ch := rep.RoleChanges()
	f.changes <- ReplicaStatus{Role: RoleLeader, Term: 5, LeaderID: "n0"}
	select {
	case st := <-ch:
		if st.Term != 5 {
			t.Fatalf("relayed %+v", st)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no relayed role change")
	}
	if n := counterValue(t, m.elections); n != 2 {
		t.Errorf("term changes = %v, want 2 (3 → 5)", n)
	}

	srv := httptest.NewServer(b.AdminHandler(m, DefaultReadyMaxLag))
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz %d", code)
	}
	if code, body := get("/readyz"); code != 200 || !strings.Contains(body, "leader=n0") {
		t.Errorf("/readyz %d %s", code, body)
	}
	code, body := get("/metrics")
	for _, want := range []string{"rocketraft_raft_term 3", `rocketraft_raft_role{role="LEADER"} 1`,
		"rocketraft_raft_applied_index 40", "rocketraft_store_commitlog_max_offset_bytes 0",
		"rocketraft_raft_last_contact_seconds 0", "rocketraft_broker_requests_total", "go_goroutines",
		"rocketraft_store_dispatch_lag_bytes 0", "rocketraft_store_unflushed_bytes 0", "rocketraft_store_flush_duration_seconds_count"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
	f.mu.Lock()
	f.status.LeaderID = ""
	f.mu.Unlock()
	if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz without leader %d", code)
	}
}

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

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
