package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// startMeteredCluster is startCluster with every process's adminListen on: a
// nameserver and three broker nodes, each with its own HTTP port. It returns
// the cluster, the nameserver's admin address and each node's.
func startMeteredCluster(t *testing.T) (*cluster, string, []string) {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	ports, err := proctest.FreePorts(2 + 3*groupSize)
	if err != nil {
		t.Fatal(err)
	}
	addr := func(i int) string { return fmt.Sprintf("127.0.0.1:%d", ports[i]) }
	dir := t.TempDir()
	c := &cluster{dir: dir, nsAddr: addr(0)}
	nsAdmin := addr(1)
	conf := filepath.Join(dir, "conf")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	nsConf := filepath.Join(conf, "namesrv.conf")
	if err := (proctest.NamesrvConfig{Addr: c.nsAddr, AdminListen: nsAdmin}).Write(nsConf); err != nil {
		t.Fatal(err)
	}
	c.ns = newProc("namesrv", filepath.Join(dir, "namesrv.log"), "namesrv", "-c", nsConf)
	var peers, clients []proctest.Peer
	var admins []string
	for i := range groupSize {
		id := fmt.Sprintf("n%d", i)
		c.clientAddrs = append(c.clientAddrs, addr(2+i))
		peers = append(peers, proctest.Peer{ID: id, Addr: addr(2 + groupSize + i)})
		clients = append(clients, proctest.Peer{ID: id, Addr: addr(2 + i)})
		admins = append(admins, addr(2+2*groupSize+i))
	}
	for i := range groupSize {
		id := fmt.Sprintf("n%d", i)
		path := filepath.Join(conf, id+".conf")
		if err := (proctest.BrokerConfig{
			ClusterName: clusterName, BrokerName: groupName, ClientAddr: c.clientAddrs[i], NamesrvAddr: c.nsAddr,
			DataDir: filepath.Join(dir, id), Peers: peers, PeerClients: clients, SelfID: id,
			SegmentSize: proctest.SegmentSize, AutoCreateTopics: true, DefaultQueues: 4, AdminListen: admins[i],
		}).Write(path); err != nil {
			t.Fatal(err)
		}
		c.nodes = append(c.nodes, newProc(id, filepath.Join(dir, id+".log"), "broker", "-c", path))
	}
	c.tc = transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	c.nsClient = nameserver.NewClient(c.tc)
	t.Cleanup(func() {
		if t.Failed() {
			c.dumpLogs(t)
		}
		c.stopAll()
	})
	if err := c.ns.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitListening(nsAdmin, 10*time.Second); err != nil {
		t.Fatalf("nameserver adminListen %s: %v", nsAdmin, err)
	}
	for _, n := range c.nodes {
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.waitLeader(30*time.Second, "", groupSize); err != nil {
		t.Fatal(err)
	}
	return c, nsAdmin, admins
}

func scrapeMetrics(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("%s/metrics: %v", addr, err)
	}
	return families
}

// sampleValue is the value of the one sample of name with labels want; ok is
// false when there is none or more than one.
func sampleValue(families map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	var found []float64
	for _, m := range families[name].GetMetric() {
		match := true
		for k, v := range want {
			got := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == k {
					got = l.GetValue()
				}
			}
			if got != v {
				match = false
			}
		}
		if match {
			found = append(found, m.GetCounter().GetValue()+m.GetGauge().GetValue())
		}
	}
	if len(found) != 1 {
		return 0, false
	}
	return found[0], true
}

// TestMetricsOverRealProcesses checks the binary's wiring: labels from
// broker.conf, the nameserver's adminListen, and a known workload through the
// real Go producer (N sends) and a group that commits M: the leader's
// /metrics shows messages in = N and lag = N − M, followers neither.
func TestMetricsOverRealProcesses(t *testing.T) {
	c, nsAdmin, admins := startMeteredCluster(t)
	topic, group := unique(t, "Metered"), unique(t, "G")
	const n = 12
	p := newProducer(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range n {
		if _, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte("m"+strconv.Itoa(i)))); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	leaderIdx, err := c.waitLeader(10*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}
	leader := c.clientAddrs[leaderIdx]
	call := func(code transport.RequestCode, ext map[string]string, body []byte) *transport.Command {
		t.Helper()
		r, err := c.tc.Invoke(ctx, leader, transport.NewRequest(code, ext, body))
		if err != nil || r.ResponseCode() != transport.Success {
			t.Fatalf("%s: %v %v", code, r, err)
		}
		return r
	}
	hb, _ := json.Marshal(map[string]any{"clientID": "127.0.0.1@metrics", "producerDataSet": []any{},
		"consumerDataSet": []any{map[string]any{"groupName": group, "consumeType": "CONSUME_PASSIVELY", "messageModel": "CLUSTERING",
			"consumeFromWhere": "CONSUME_FROM_FIRST_OFFSET", "subscriptionDataSet": []any{
				map[string]any{"topic": topic, "subString": "*", "tagsSet": []string{}, "expressionType": "TAG", "subVersion": 1}}}}})
	call(transport.HeartBeat, nil, hb)
	// A message's ConsumeQueue entry is written after its send is answered (the
	// dispatch follows the CommitLog, as Apache's reput does): wait until the
	// queues hold all N before reading their max offsets.
	maxOffsets := make([]int, 4)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		sum := 0
		for q := range maxOffsets {
			r := call(transport.GetMaxOffset, map[string]string{"topic": topic, "queueId": strconv.Itoa(q)}, nil)
			maxOffsets[q], _ = strconv.Atoi(r.Field("offset"))
			sum += maxOffsets[q]
		}
		if sum == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("max offsets %v after 10 s, want %d messages in all", maxOffsets, n)
		}
	}
	// Commit queue 0 whole and queue 1 half: M of the N are consumed.
	committed := 0
	for q, maxOff := range maxOffsets {
		off := map[int]int{0: maxOff, 1: maxOff / 2}[q]
		committed += off
		call(transport.UpdateConsumerOffset, map[string]string{"consumerGroup": group, "topic": topic,
			"queueId": strconv.Itoa(q), "commitOffset": strconv.Itoa(off)}, nil)
	}

	node := func(i int) map[string]string {
		return map[string]string{"cluster": clusterName, "node_type": "broker", "broker_name": groupName,
			"node_id": fmt.Sprintf("%s-n%d", groupName, i)}
	}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	// The three nodes share this machine, so each schedules on its share of the
	// cores (decision 0023), unless the environment names GOMAXPROCS.
	wantProcs := float64(max(1, runtime.GOMAXPROCS(0)/groupSize))
	for i, a := range admins {
		m := scrapeMetrics(t, a)
		if procs, ok := sampleValue(m, "go_sched_gomaxprocs_threads", nil); os.Getenv("GOMAXPROCS") == "" && (!ok || procs != wantProcs) {
			t.Errorf("n%d GOMAXPROCS = %v (found %v), want %v: the cores divided among %d members on one host", i, procs, ok, wantProcs, groupSize)
		}
		in, inOK := sampleValue(m, "rocketmq_messages_in_total", with(node(i), "topic", topic, "message_type", "normal"))
		lag, lagOK := sampleValue(m, "rocketmq_consumer_lag_messages", with(node(i), "topic", topic, "consumer_group", group))
		if i != leaderIdx {
			if (inOK && in != 0) || lagOK {
				t.Errorf("follower n%d: messages_in %v (%v), lag exported %v", i, in, inOK, lagOK)
			}
			continue
		}
		if !inOK || in != n {
			t.Errorf("leader n%d messages_in = %v (found %v), want N = %d", i, in, inOK, n)
		}
		if !lagOK || lag != float64(n-committed) {
			t.Errorf("leader n%d lag = %v (found %v), want N − M = %d − %d", i, lag, lagOK, n, committed)
		}
	}
	ns := scrapeMetrics(t, nsAdmin)
	if v, ok := sampleValue(ns, "rocketraft_namesrv_brokers", map[string]string{"node_type": "nameserver"}); !ok || v != groupSize {
		t.Errorf("nameserver brokers = %v (%v), want %d", v, ok, groupSize)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + nsAdmin + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("nameserver %s = %d %s", path, resp.StatusCode, body)
		}
	}
}
