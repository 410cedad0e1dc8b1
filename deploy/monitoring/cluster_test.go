package monitoring

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rocketraft/rocketraft/broker"
	"github.com/rocketraft/rocketraft/broker/metrics"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Names of the test cluster, asserted on every series.
const (
	testCluster = "monitoring-test"
	testBroker  = "broker-a"
)

// brokerNode is one broker node of the test group with its admin listener.
type brokerNode struct {
	id      string
	m       *metrics.Metrics
	rep     replica.Replica
	st      *store.Store
	b       *broker.Broker
	adminAt string // host:port of /metrics
}

// testGroup is a nameserver and a three-node broker group in this process:
// raft over internal/testcluster, clients and brokers over real TCP, and the
// admin listeners over real HTTP, as cmd wires them.
type testGroup struct {
	t        *testing.T
	raft     *testcluster.Cluster
	ns       *nameserver.Server
	nsAdmin  string
	nodes    []*brokerNode
	client   *transport.Client
	raftSink *metrics.Metrics // the node whose registry ExportRaftInternals feeds
}

// startGroup starts the nameserver, the raft group (default timings: no
// spurious elections on a loaded machine) and a broker per node, and waits
// until a leader serves and every node registered.
func startGroup(t *testing.T) *testGroup {
	t.Helper()
	g := &testGroup{t: t}
	g.ns = nameserver.New(nameserver.Config{ListenAddr: "127.0.0.1:0"}, nil)
	if err := g.ns.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.ns.Close() })
	nsHTTP, err := metrics.StartAdminHTTP("127.0.0.1:0", g.ns.AdminHandler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nsHTTP.Close() })
	g.nsAdmin = nsHTTP.Addr()

	g.raft = testcluster.New(t, 3, testcluster.Options{})
	members := g.raft.Members()
	addrs := make([]string, len(members))
	var peers []broker.Peer
	for i, mem := range members {
		addrs[i] = proctest.TestAddr(t)
		peers = append(peers, broker.Peer{ID: string(mem.ID), ClientAddr: addrs[i]})
	}
	for i, mem := range members {
		id := string(mem.ID)
		m := metrics.New(metrics.Options{Cluster: testCluster, BrokerName: testBroker, SelfID: id})
		if i == 0 {
			// go-metrics has one process-wide sink: all three nodes' raft
			// internals land in n0's registry, which is enough to check names.
			if err := m.ExportRaftInternals(); err != nil {
				t.Fatal(err)
			}
			g.raftSink = m
		}
		rep := replica.NewNode(mem.Node(), replica.NodeOptions{ObserveApply: m.ObserveApply})
		b, err := broker.New(broker.Config{
			ClusterName: testCluster, BrokerName: testBroker, ListenAddr: addrs[i], ClientAddr: addrs[i],
			NamesrvAddrs: []string{g.ns.Addr()}, SelfID: id, SelfIndex: i, Peers: peers,
			MaxMessageSize: 1 << 20, AutoCreateTopicEnable: true, DefaultTopicQueueNums: 4, LongPollingEnable: true,
			Metrics: m,
		}, mem.Node().Store(), rep)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Start(); err != nil {
			t.Fatal(err)
		}
		adm, err := metrics.StartAdminHTTP("127.0.0.1:0", metrics.Handler(m, rep.Status, metrics.DefaultReadyMaxLag))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = adm.Close()
			_ = b.Close()
		})
		g.nodes = append(g.nodes, &brokerNode{id: id, m: m, rep: rep, st: mem.Node().Store(), b: b, adminAt: adm.Addr()})
	}
	g.client = transport.NewClient(transport.ClientConfig{DialTimeout: 2 * time.Second})
	t.Cleanup(func() { _ = g.client.Close() })
	deadline := time.Now().Add(15 * time.Second)
	for g.leader() == nil || g.ns.Registry().LiveCount() < len(g.nodes) {
		if time.Now().After(deadline) {
			t.Fatalf("no serving leader with every node registered (registered %d)", g.ns.Registry().LiveCount())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return g
}

// leader is the node whose broker serves as leader (after its barrier), or nil.
func (g *testGroup) leader() *brokerNode {
	for _, n := range g.nodes {
		if n.b.Status().Role == replica.RoleLeader {
			return n
		}
	}
	return nil
}

// follower is a node that does not lead.
func (g *testGroup) follower() *brokerNode {
	for _, n := range g.nodes {
		if n.b.Status().Role != replica.RoleLeader {
			return n
		}
	}
	g.t.Fatal("no follower")
	return nil
}

func (g *testGroup) call(n *brokerNode, code transport.RequestCode, ext map[string]string, body []byte) *transport.Command {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := g.client.Invoke(ctx, n.b.Addr(), transport.NewRequest(code, ext, body))
	if err != nil {
		g.t.Fatalf("%s to %s: %v", code, n.id, err)
	}
	return resp
}

// mustCall is call that fails the test unless the answer is SUCCESS.
func (g *testGroup) mustCall(n *brokerNode, code transport.RequestCode, ext map[string]string, body []byte) *transport.Command {
	g.t.Helper()
	r := g.call(n, code, ext, body)
	if r.ResponseCode() != transport.Success {
		g.t.Fatalf("%s to %s: %s %s", code, n.id, r.ResponseCode(), r.Remark)
	}
	return r
}

// sendExt is a Go producer's SEND_MESSAGE header.
func sendExt(topic string, queueID int, props string) map[string]string {
	return map[string]string{"producerGroup": "PG_monitoring", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": strconv.Itoa(queueID), "sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10), "flag": "0",
		"properties": props, "reconsumeTimes": "0", "unitMode": "false", "batch": "false"}
}

func props(kv ...string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return store.EncodeProperties(m)
}

// heartbeat registers a push consumer of group subscribed to topic (all tags).
func (g *testGroup) heartbeat(n *brokerNode, group, topic string) {
	g.t.Helper()
	body, _ := json.Marshal(map[string]any{
		"clientID": "127.0.0.1@monitoring", "producerDataSet": []any{},
		"consumerDataSet": []any{map[string]any{"groupName": group, "consumeType": "CONSUME_PASSIVELY", "messageModel": "CLUSTERING",
			"consumeFromWhere": "CONSUME_FROM_FIRST_OFFSET", "subscriptionDataSet": []any{
				map[string]any{"topic": topic, "subString": "*", "tagsSet": []string{}, "expressionType": "TAG", "subVersion": 1}}}},
	})
	g.mustCall(n, transport.HeartBeat, nil, body)
}

// pull pulls up to max messages of (topic, queue) from offset with the
// subscription of the group's heartbeat, and returns their stored sizes.
func (g *testGroup) pull(n *brokerNode, group, topic string, queue int, offset int64, max int) []int {
	g.t.Helper()
	r := g.mustCall(n, transport.PullMessage, map[string]string{"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(queue),
		"queueOffset": strconv.FormatInt(offset, 10), "maxMsgNums": strconv.Itoa(max), "sysFlag": "0", "commitOffset": "0",
		"suspendTimeoutMillis": "0", "subscription": "", "subVersion": "0", "expressionType": "TAG"}, nil)
	var sizes []int
	for b := r.Body; len(b) > 0; {
		size, _, err := store.RecordSize(b)
		if err != nil || size <= 0 || int(size) > len(b) {
			g.t.Fatalf("pull body: record size %d of %d bytes: %v", size, len(b), err)
		}
		sizes = append(sizes, int(size))
		b = b[size:]
	}
	return sizes
}

// commit sends UPDATE_CONSUMER_OFFSET.
func (g *testGroup) commit(n *brokerNode, group, topic string, queue int, offset int64) {
	g.t.Helper()
	g.mustCall(n, transport.UpdateConsumerOffset, map[string]string{"consumerGroup": group, "topic": topic,
		"queueId": strconv.Itoa(queue), "commitOffset": strconv.FormatInt(offset, 10)}, nil)
}

// scrape GETs http://addr/metrics and parses it as Prometheus text, the way a
// Prometheus server reads it.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/metrics: %s", addr, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("%s/metrics is not Prometheus text: %v", addr, err)
	}
	return families
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// find returns the samples of name whose labels include want.
func find(families map[string]*dto.MetricFamily, name string, want map[string]string) []*dto.Metric {
	var out []*dto.Metric
	f := families[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		l := labelsOf(m)
		match := true
		for k, v := range want {
			if l[k] != v {
				match = false
			}
		}
		if match {
			out = append(out, m)
		}
	}
	return out
}

// one is the value of the single sample of name matching want (a histogram's
// sample count), failing the test unless there is exactly one.
func one(t *testing.T, families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	ms := find(families, name, want)
	if len(ms) != 1 {
		t.Errorf("%s%v: %d samples, want 1", name, want, len(ms))
		return -1
	}
	return value(ms[0])
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	case m.Summary != nil:
		return float64(m.GetSummary().GetSampleCount())
	}
	return m.GetUntyped().GetValue()
}

func nodeLabels(n *brokerNode) map[string]string {
	return map[string]string{"cluster": testCluster, "node_type": "broker", "node_id": testBroker + "-" + n.id, "broker_name": testBroker}
}

func with(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func (n *brokerNode) String() string { return fmt.Sprintf("%s(%s)", n.id, n.b.Status().Role) }
