package monitoring

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/rocketraft/rocketraft/broker/clientapi"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// The known workload of TestScrapeAfterKnownWorkload.
const (
	topic    = "Metered" // 2 queues: 6 messages to queue 0, 4 to queue 1
	group    = "G_metered"
	inQ0     = 6
	inQ1     = 4
	sent     = inQ0 + inQ1 // N
	pulledQ1 = 2           // queue 0 is pulled whole, queue 1 partly
	commitQ0 = 4           // committed: 4 of queue 0, all 2 pulled of queue 1
	commitQ1 = pulledQ1
	consumed = commitQ0 + commitQ1 // M
)

// TestScrapeAfterKnownWorkload runs a known workload against a three-node
// group (sends to the leader and through a follower, one of each message type,
// a batch, a send to a retry topic; a consumer that pulls some and commits
// less) and checks what a Prometheus scrape of every node and the nameserver
// shows: RocketMQ 5's names with their labels and exact values, the lag N − M.
func TestScrapeAfterKnownWorkload(t *testing.T) {
	g := startGroup(t)
	leader, follower := g.leader(), g.follower()
	termBefore := leader.rep.Status().Term
	for name, queues := range map[string]int32{topic: 2, "MeteredDelay": 1, "MeteredFifo": 1, "MeteredTx": 1} {
		g.raft.CreateTopic(name, queues)
	}
	g.heartbeat(leader, group, topic) // also creates %RETRY%G_metered

	// Metered: queue 0 gets 3 sends on the leader and 3 relayed by a follower,
	// which must count them nowhere; queue 1 two sends and a batch of two.
	viaFollower := 0
	for i := range inQ0 {
		n := leader
		if i%2 == 1 {
			n, viaFollower = follower, viaFollower+1
		}
		g.mustCall(n, transport.SendMessage, sendExt(topic, 0, props(store.PropertyTags, "t")), []byte("message "+strconv.Itoa(i)))
	}
	for i := range inQ1 - 2 {
		g.mustCall(leader, transport.SendMessage, sendExt(topic, 1, ""), []byte("q1 "+strconv.Itoa(i)))
	}
	batch := clientapi.EncodeBatch([]clientapi.BatchElement{{Body: []byte("b1")}, {Body: []byte("b2")}})
	batchExt := sendExt(topic, 1, "")
	batchExt["batch"] = "true"
	g.mustCall(leader, transport.SendBatchMessage, batchExt, batch)
	// One of each other type, and a consumer's retry topic (not producer traffic).
	for range 2 {
		g.mustCall(leader, transport.SendMessage, sendExt("MeteredDelay", 0, props(store.PropertyDelayLevel, "18")), []byte("later"))
	}
	for i := range 3 {
		g.mustCall(leader, transport.SendMessage, sendExt("MeteredFifo", 0, props("__SHARDINGKEY", "order-"+strconv.Itoa(i))), []byte("in order"))
	}
	tx := sendExt("MeteredTx", 0, props(store.PropertyTransaction, "true", store.PropertyProducerGroup, "PG_monitoring", store.PropertyUniqKey, "TX1"))
	tx["sysFlag"] = strconv.Itoa(int(store.SysFlagTxPrepared))
	g.mustCall(leader, transport.SendMessage, tx, []byte("half"))
	g.mustCall(leader, transport.SendMessage, sendExt("%RETRY%"+group, 0, ""), []byte("sent back"))
	singleSendsOnLeader := inQ0 + (inQ1 - 2) + 2 + 3 + 1 + 1 // the follower's three arrive relayed

	// Consume: all of queue 0 and two of queue 1 pulled; 4 + 2 committed.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := leader.st.WaitDispatched(ctx, leader.st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	pulled := g.pull(leader, group, topic, 0, 0, 32)
	pulled = append(pulled, g.pull(leader, group, topic, 1, 0, pulledQ1)...)
	if len(pulled) != inQ0+pulledQ1 {
		t.Fatalf("pulled %d messages, want %d", len(pulled), inQ0+pulledQ1)
	}
	g.commit(leader, group, topic, 0, commitQ0)
	g.commit(leader, group, topic, 1, commitQ1)

	// What the leader stored for Metered, to check the byte counters against.
	storedBytes, oldestUncommitted := 0, int64(0)
	for q, n := range []int{inQ0, inQ1} {
		res, err := leader.st.GetMessages(topic, int32(q), 0, 32, 1<<20, nil)
		if err != nil || len(res.Messages) != n {
			t.Fatalf("leader store %s queue %d: %d messages, %v", topic, q, len(res.Messages), err)
		}
		for i, rec := range res.Messages {
			storedBytes += len(rec)
			if q == 0 && i == commitQ0 {
				oldestUncommitted = store.StoreTimestampOf(rec)
			}
		}
		res.Release()
	}
	pulledBytes := 0
	for _, s := range pulled {
		pulledBytes += s
	}

	before := time.Now().UnixMilli()
	byNode := map[string]map[string]*dto.MetricFamily{}
	for _, n := range g.nodes {
		byNode[n.id] = scrape(t, n.adminAt)
	}
	after := time.Now().UnixMilli()
	if term := leader.rep.Status().Term; term != termBefore || g.leader() != leader {
		t.Fatalf("leadership changed during the workload (term %d → %d); the per-node expectations assume one leader", termBefore, term)
	}

	lm := byNode[leader.id]
	node := nodeLabels(leader)
	in := with(node, "topic", topic, "message_type", "normal", "is_system", "false")
	if v := one(t, lm, "rocketmq_messages_in_total", in); v != sent {
		t.Errorf("leader messages_in{%s} = %v, want N = %d (relayed sends counted once, by the leader)", topic, v, sent)
	}
	if v := one(t, lm, "rocketmq_throughput_in_total", in); v != float64(storedBytes) {
		t.Errorf("throughput_in = %v, want %d (the stored records' bytes)", v, storedBytes)
	}
	if h := find(lm, "rocketmq_message_size", in); len(h) != 1 || h[0].GetHistogram().GetSampleCount() != sent || h[0].GetHistogram().GetSampleSum() != float64(storedBytes) {
		t.Errorf("message_size{%s}: %v, want %d samples summing to %d", topic, h, sent, storedBytes)
	}
	for typ, want := range map[string]struct {
		topic string
		n     float64
	}{"delay": {"MeteredDelay", 2}, "fifo": {"MeteredFifo", 3}, "transaction": {"MeteredTx", 1}} {
		if v := one(t, lm, "rocketmq_messages_in_total", with(node, "topic", want.topic, "message_type", typ)); v != want.n {
			t.Errorf("messages_in{%s, message_type=%s} = %v, want %v", want.topic, typ, v, want.n)
		}
	}
	if s := find(lm, "rocketmq_messages_in_total", map[string]string{"topic": "%RETRY%" + group}); len(s) != 0 {
		t.Errorf("a send to a retry topic was counted as producer traffic: %v", s)
	}

	out := with(node, "topic", topic, "consumer_group", group, "is_retry", "false", "is_system", "false")
	if v := one(t, lm, "rocketmq_messages_out_total", out); v != inQ0+pulledQ1 {
		t.Errorf("messages_out = %v, want %d pulled", v, inQ0+pulledQ1)
	}
	if v := one(t, lm, "rocketmq_throughput_out_total", out); v != float64(pulledBytes) {
		t.Errorf("throughput_out = %v, want %d", v, pulledBytes)
	}
	lag := with(node, "topic", topic, "consumer_group", group, "is_retry", "false", "is_system", "false")
	for name, want := range map[string]float64{
		"rocketmq_consumer_lag_messages":      sent - consumed,              // N − M
		"rocketmq_consumer_ready_messages":    sent - (inQ0 + pulledQ1),     // not pulled yet
		"rocketmq_consumer_inflight_messages": (inQ0 + pulledQ1) - consumed, // pulled, not committed
	} {
		if v := one(t, lm, name, lag); v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
	if v := one(t, lm, "rocketmq_consumer_lag_latency", lag) * 1000; v < float64(before-oldestUncommitted)-1 || v > float64(after-oldestUncommitted)+1 {
		t.Errorf("lag_latency = %v ms, want now − store time of queue 0 offset %d, in [%d, %d] ms",
			v, commitQ0, before-oldestUncommitted, after-oldestUncommitted)
	}
	if v := one(t, lm, "rocketmq_topic_number", node); v != float64(len(leader.rep.Topics())) || v < 5 {
		t.Errorf("topic_number = %v, want %d (the replicated table)", v, len(leader.rep.Topics()))
	}
	if v := one(t, lm, "rocketmq_consumer_group_number", node); v != float64(len(leader.rep.SubscriptionGroups())) || v < 1 {
		t.Errorf("consumer_group_number = %v, want %d", v, len(leader.rep.SubscriptionGroups()))
	}
	rpc := func(n *brokerNode, code, resp string) float64 {
		return one(t, byNode[n.id], "rocketmq_rpc_latency", with(nodeLabels(n), "protocol_type", "remoting",
			"request_code", code, "response_code", resp, "is_long_polling", "false"))
	}
	for _, c := range []struct {
		n          *brokerNode
		code, resp string
		want       int
	}{
		{leader, "send_message", "success", singleSendsOnLeader},
		{leader, "send_batch_message", "success", 1},
		{leader, "pull_message", "success", 2},
		{leader, "update_consumer_offset", "success", 2},
		{leader, "heart_beat", "success", 1},
		{follower, "send_message", "success", viaFollower},
	} {
		if v := rpc(c.n, c.code, c.resp); v != float64(c.want) {
			t.Errorf("%s rpc_latency{%s, %s} count = %v, want %d", c.n.id, c.code, c.resp, v, c.want)
		}
	}
	if v := one(t, lm, "rocketraft_broker_forwarded_requests_received_total", node); v != float64(viaFollower) {
		t.Errorf("forwarded requests received = %v, want %d", v, viaFollower)
	}

	for _, n := range g.nodes {
		m := byNode[n.id]
		checkNames(t, n, m)
		if n == leader {
			continue
		}
		// A follower applied every message too, and counts none of them; the
		// group's consumer gauges come from the leader alone.
		for _, s := range find(m, "rocketmq_messages_in_total", nil) {
			if value(s) != 0 {
				t.Errorf("follower %s counts messages_in %v", n.id, labelsOf(s))
			}
		}
		for _, name := range []string{"rocketmq_consumer_lag_messages", "rocketmq_consumer_ready_messages", "rocketmq_consumer_inflight_messages",
			"rocketmq_consumer_lag_latency", "rocketmq_topic_number", "rocketmq_consumer_group_number"} {
			if _, ok := m[name]; ok {
				t.Errorf("follower %s exports %s", n.id, name)
			}
		}
		if v := one(t, m, "rocketraft_raft_applied_index", nodeLabels(n)); v <= 0 {
			t.Errorf("follower %s applied index %v", n.id, v)
		}
	}
	// Group commit: every send above went through the leader's proposer (the
	// follower relayed its sends there), in at least one entry.
	gcMsgs, gcEntries := one(t, lm, "rocketraft_group_commit_messages_total", node), one(t, lm, "rocketraft_group_commit_entries_total", node)
	if gcMsgs < sent || gcEntries < 1 || gcEntries > gcMsgs {
		t.Errorf("leader's group commit: %v messages in %v entries, want ≥ %d messages in 1..messages entries", gcMsgs, gcEntries, sent)
	}
	// The leader's log fsyncs run alongside replication (decision 0015); every
	// send it answered waited for one of those rounds.
	if n, secs := one(t, lm, "rocketraft_raft_log_deferred_fsyncs_total", node), one(t, lm, "rocketraft_raft_log_deferred_fsync_seconds_total", node); n < 1 || secs <= 0 {
		t.Errorf("leader's deferred raft log fsyncs: %v rounds in %v s, want at least one round taking some time", n, secs)
	}
	if v := one(t, lm, "rocketraft_raft_role", with(node, "role", "LEADER")); v != 1 {
		t.Errorf("leader's role gauge LEADER = %v", v)
	}
	if v := one(t, byNode[follower.id], "rocketraft_raft_role", with(nodeLabels(follower), "role", "FOLLOWER")); v != 1 {
		t.Errorf("follower's role gauge FOLLOWER = %v", v)
	}
	// raft's own instrumentation, renamed and in seconds.
	raftM := byNode[g.nodes[0].id]
	if h := find(raftM, "rocketraft_raft_commit_duration_seconds", nil); len(h) == 0 || h[0].GetHistogram().GetSampleCount() == 0 {
		t.Errorf("rocketraft_raft_commit_duration_seconds has no samples after the writes: %v", h)
	}

	ns := scrape(t, g.nsAdmin)
	nsLabels := map[string]string{"node_type": "nameserver"}
	if v := one(t, ns, "rocketraft_namesrv_brokers", nsLabels); v != 3 {
		t.Errorf("nameserver brokers = %v, want 3", v)
	}
	if v := one(t, ns, "rocketraft_namesrv_broker_groups", with(nsLabels, "cluster", testCluster)); v != 1 {
		t.Errorf("nameserver broker groups = %v, want 1", v)
	}
	if v := one(t, ns, "rocketraft_namesrv_broker_groups_without_master", with(nsLabels, "cluster", testCluster)); v != 0 {
		t.Errorf("groups without master = %v, want 0", v)
	}
	if v := one(t, ns, "rocketraft_namesrv_requests_total", with(nsLabels, "request_code", "register_broker", "response_code", "success")); v < 3 {
		t.Errorf("register_broker requests = %v, want ≥ 3", v)
	}
	for _, addr := range append([]string{g.nsAdmin}, g.nodes[0].adminAt, leader.adminAt) {
		for _, path := range []string{"/healthz", "/readyz"} {
			resp, err := http.Get("http://" + addr + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s%s = %d %s", addr, path, resp.StatusCode, body)
			}
		}
	}
}

// rocketmqMetrics are RocketMQ 5's names (BrokerMetricsConstant) that issue 13
// requires; every one must be on the leader's scrape.
var rocketmqMetrics = []string{
	"rocketraft_broker_requests_total", // and the request counter, which has no series before a request
	"rocketmq_messages_in_total", "rocketmq_messages_out_total", "rocketmq_throughput_in_total", "rocketmq_throughput_out_total",
	"rocketmq_message_size", "rocketmq_consumer_ready_messages", "rocketmq_consumer_lag_messages", "rocketmq_consumer_lag_latency",
	"rocketmq_consumer_inflight_messages", "rocketmq_rpc_latency", "rocketmq_topic_number", "rocketmq_consumer_group_number",
}

// ownMetrics are the raft and store gauges, in Prometheus conventions, that
// every node exports.
var ownMetrics = []string{
	"rocketraft_raft_term", "rocketraft_raft_role", "rocketraft_raft_applied_index", "rocketraft_raft_commit_index",
	"rocketraft_raft_last_index", "rocketraft_raft_last_contact_seconds", "rocketraft_raft_term_changes_total",
	"rocketraft_store_commitlog_max_offset_bytes", "rocketraft_store_commitlog_min_offset_bytes", "rocketraft_store_disk_used_ratio",
	"rocketraft_store_disk_free_bytes", "rocketraft_store_dispatch_lag_bytes", "rocketraft_store_unflushed_bytes",
	"rocketraft_store_flush_duration_seconds", "rocketraft_broker_long_poll_waiters",
	"rocketraft_metrics_label_values", "rocketraft_metrics_label_overflow_total",
}

var (
	snakeCase   = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	timeInName  = regexp.MustCompile(`(duration|latency|time|contact)`)
	nonBaseUnit = regexp.MustCompile(`_(ms|millis|milliseconds|us|microseconds|ns|kb|mb|kib|mib)(_|$)`)
)

// checkNames: every family is snake_case in base units, counters end in
// _total, timings of our own are _seconds, and every rocketraft_ and
// rocketmq_ series carries the node's constant labels.
func checkNames(t *testing.T, n *brokerNode, families map[string]*dto.MetricFamily) {
	t.Helper()
	want := ownMetrics
	if n.b.Status().Role.String() == "LEADER" {
		want = append(append([]string(nil), ownMetrics...), rocketmqMetrics...)
	}
	for _, name := range want {
		if _, ok := families[name]; !ok {
			t.Errorf("%s: /metrics lacks %s", n.id, name)
		}
	}
	for name, f := range families {
		if !snakeCase.MatchString(name) || nonBaseUnit.MatchString(name) {
			t.Errorf("%s: %s is not snake_case in base units", n.id, name)
		}
		if f.GetType() == dto.MetricType_COUNTER && !strings.HasSuffix(name, "_total") {
			t.Errorf("%s: counter %s does not end in _total", n.id, name)
		}
		if strings.HasPrefix(name, "rocketraft_") && timeInName.MatchString(name) && !strings.HasSuffix(name, "_seconds") &&
			!strings.HasSuffix(name, "_total") {
			t.Errorf("%s: timing %s is not in _seconds", n.id, name)
		}
		if !strings.HasPrefix(name, "rocketraft_") && !strings.HasPrefix(name, "rocketmq_") {
			continue
		}
		for _, m := range f.GetMetric() {
			l := labelsOf(m)
			for k, v := range nodeLabels(n) {
				if l[k] != v {
					t.Errorf("%s: %s%v lacks %s=%q", n.id, name, l, k, v)
					break
				}
			}
		}
	}
}
