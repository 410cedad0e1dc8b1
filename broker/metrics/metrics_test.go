package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// forwardedKey is the extFields key route's Forwarder adds to a relayed request;
// the test checks route.Forwarded agrees before relying on it.
const forwardedKey = "rocketraftForwarded"

// testChain is a route table of fake handlers behind m.Stage: GET_MAX_OFFSET
// fails without queueId (INVALID_PARAMETER through the error table) and
// SEND_MESSAGE always succeeds.
func testChain(m *Metrics) transport.HandlerFunc {
	t := route.NewTable()
	t.Handle(route.Local, func(_ context.Context, req *route.Request) (*transport.Command, error) {
		f := route.FieldsOf(req.Command)
		f.Int32("queueId", true, 0)
		if f.Err != nil {
			return nil, f.Err
		}
		return route.OK(map[string]string{"offset": "0"}, nil), nil
	}, transport.GetMaxOffset)
	t.Handle(route.Local, func(context.Context, *route.Request) (*transport.Command, error) {
		return route.OK(nil, nil), nil
	}, transport.SendMessage)
	noForward := func(next route.Handler) route.Handler { return next }
	return t.Serve(noForward, m.Stage()).ServeRemoting
}

func serveCode(t *testing.T, h transport.HandlerFunc, code transport.RequestCode, ext map[string]string) *transport.Command {
	t.Helper()
	resp := h(context.Background(), nil, transport.NewRequest(code, ext, nil))
	if resp == nil {
		t.Fatalf("%s: no response", code)
	}
	return resp
}

func TestMetricsAndAdminHTTP(t *testing.T) {
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f := fakereplica.New(st, replica.RoleLeader)
	f.SetStatusQuietly(replica.Status{Role: replica.RoleLeader, Term: 3, SelfID: "n0", LeaderID: "n0",
		AppliedIndex: 40, CommitIndex: 41, LastIndex: 42})
	f.Stats = map[string]string{"last_contact": "0", "num_peers": "2", "last_snapshot_index": "7", "applied_index": "41",
		"group_commit_entries": "12", "group_commit_messages": "345",
		"log_deferred_fsyncs": "7", "log_deferred_fsync_ns": "2500000000"}
	pulls := clients.NewPullWaiters()

	m := New(testOptions)
	m.Watch(Source{Status: f.Status, RaftStats: f.RaftStats, Store: st, LongPollWaiters: pulls.Count})
	h := testChain(m)
	if r := serveCode(t, h, transport.GetMaxOffset, map[string]string{"topic": "T", "queueId": "0"}); r.ResponseCode() != transport.Success {
		t.Fatalf("GET_MAX_OFFSET with queueId: %s %s", r.ResponseCode(), r.Remark)
	}
	if r := serveCode(t, h, transport.GetMaxOffset, map[string]string{"topic": "T"}); r.ResponseCode() != transport.InvalidParameter {
		t.Fatalf("GET_MAX_OFFSET without queueId: %s %s", r.ResponseCode(), r.Remark)
	}
	if n := counterValue(t, m.requests.WithLabelValues("GET_MAX_OFFSET(30)", "SUCCESS(0)")); n != 1 {
		t.Errorf("GET_MAX_OFFSET success = %v", n)
	}
	if n := counterValue(t, m.requests.WithLabelValues("GET_MAX_OFFSET(30)", "INVALID_PARAMETER(29)")); n != 1 {
		t.Errorf("GET_MAX_OFFSET invalid = %v", n)
	}

	// A code outside the known tables is labelled "other". route.Table answers
	// codes it has no route for before any stage runs, so the stage is driven
	// directly here with the answer the table gives.
	unknown := m.Stage()(func(context.Context, *route.Request) (*transport.Command, error) {
		return transport.NewResponse(transport.RequestCodeNotSupported, "request code 9999 is not supported"), nil
	})
	if r := route.Call(context.Background(), unknown, &route.Request{Command: transport.NewRequest(transport.RequestCode(9999), nil, nil)}); r.ResponseCode() != transport.RequestCodeNotSupported {
		t.Fatalf("unknown code: %v", r)
	}
	if n := counterValue(t, m.requests.WithLabelValues("other", "REQUEST_CODE_NOT_SUPPORTED(3)")); n != 1 {
		t.Errorf("unknown code = %v", n)
	}

	// A send a follower relayed: timed as "send" and counted as forwarded in.
	fwd := transport.NewRequest(transport.SendMessage, map[string]string{forwardedKey: "n1"}, nil)
	if !route.Forwarded(fwd) {
		t.Fatalf("route.Forwarded does not recognise %s; update forwardedKey", forwardedKey)
	}
	if r := h(context.Background(), nil, fwd); r == nil || r.ResponseCode() != transport.Success {
		t.Fatalf("forwarded send: %v", r)
	}
	if n := counterValue(t, m.forwardedIn); n != 1 {
		t.Errorf("forwarded requests received = %v, want 1", n)
	}
	if n := histogramCount(t, m.rpcLatency.WithLabelValues("remoting", "send_message", "success", "false")); n != 1 {
		t.Errorf("send rpc latency samples = %d, want 1", n)
	}
	if n := histogramCount(t, m.rpcLatency.WithLabelValues("remoting", "get_max_offset", "invalid_parameter", "false")); n != 1 {
		t.Errorf("GET_MAX_OFFSET invalid rpc latency samples = %d, want 1", n)
	}
	if n := histogramCount(t, m.rpcLatency.WithLabelValues("remoting", "other", "request_code_not_supported", "false")); n != 1 {
		t.Errorf("unknown code rpc latency samples = %d, want 1", n)
	}

	// Role changes count terms: 3 → 5 is two elections.
	m.ObserveRoleChange(3, replica.Status{Role: replica.RoleLeader, Term: 5, LeaderID: "n0"})
	if n := counterValue(t, m.elections); n != 2 {
		t.Errorf("term changes = %v, want 2 (3 → 5)", n)
	}
	if n := counterValue(t, m.leaderChg); n != 1 {
		t.Errorf("role changes = %v, want 1", n)
	}
	m.ObserveRoleChange(5, replica.Status{Role: replica.RoleFollower, Term: 5, LeaderID: "n1"})
	if e, r := counterValue(t, m.elections), counterValue(t, m.leaderChg); e != 2 || r != 2 {
		t.Errorf("same-term role change: term changes = %v (want 2), role changes = %v (want 2)", e, r)
	}

	// Watch set the store's flush observer.
	if _, err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := histogramCount(t, m.flush); n < 1 {
		t.Errorf("flush samples = %d after a flush, want ≥ 1", n)
	}

	srv := httptest.NewServer(Handler(m, f.Status, DefaultReadyMaxLag))
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
	const node = `broker_name="broker-a",cluster="c1",node_id="broker-a-n0",node_type="broker"`
	for _, want := range []string{"rocketraft_raft_term{" + node + "} 3", `rocketraft_raft_role{` + node + `,role="LEADER"} 1`,
		"rocketraft_raft_applied_index{" + node + "} 40", "rocketraft_store_commitlog_max_offset_bytes{" + node + "} 0",
		"rocketraft_raft_last_contact_seconds{" + node + "} 0", `rocketraft_broker_requests_total{broker_name="broker-a",cluster="c1",code="SUCCESS(0)",node_id="broker-a-n0"`, "\ngo_goroutines ",
		"rocketraft_store_dispatch_lag_bytes{" + node + "} 0", "rocketraft_store_scrub_remaining_bytes{" + node + "} 0", "rocketraft_store_unflushed_bytes{" + node + "} 0",
		"rocketraft_store_flush_duration_seconds_count{" + node, "rocketraft_store_disk_free_bytes{" + node,
		"rocketraft_broker_long_poll_waiters{" + node + "} 0", "rocketraft_group_commit_entries_total{" + node + "} 12",
		"rocketraft_raft_log_deferred_fsyncs_total{" + node + "} 7", "rocketraft_raft_log_deferred_fsync_seconds_total{" + node + "} 2.5",
		"rocketraft_group_commit_messages_total{" + node + "} 345", `rocketmq_rpc_latency_bucket{broker_name="broker-a",cluster="c1",is_long_polling="false",node_id="broker-a-n0",node_type="broker",protocol_type="remoting",request_code="send_message",response_code="success",le="30"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
	f.SetStatusQuietly(replica.Status{Role: replica.RoleLeader, Term: 3, SelfID: "n0", AppliedIndex: 40, CommitIndex: 41, LastIndex: 42})
	if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz without leader %d", code)
	}
}

// TestScrapeBeforeWatch: a scrape before Watch has no raft or store gauges and
// does not fail.
func TestScrapeBeforeWatch(t *testing.T) {
	families, err := New(testOptions).Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if n := f.GetName(); n == "rocketraft_raft_term" || n == "rocketraft_store_commitlog_max_offset_bytes" {
			t.Errorf("%s exported before Watch", f.GetName())
		}
	}
}

// testOptions names the node the unit tests build.
var testOptions = Options{Cluster: "c1", BrokerName: "broker-a", SelfID: "n0"}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func histogramCount(t *testing.T, o prometheus.Observer) uint64 {
	t.Helper()
	var m dto.Metric
	if err := o.(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}
