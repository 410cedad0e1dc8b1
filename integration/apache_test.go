package integration

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// Apache's conf/dledger/broker-n{0,1,2}.conf, as shipped but for relative store paths (config/testdata/apache).
const (
	apacheGroup       = "RaftNode00"
	apacheNamesrv     = "127.0.0.1:9876"
	apacheConfDir     = "../config/testdata/apache/dledger"
	apacheNamesrvConf = "../config/testdata/apache/namesrv.conf"
	apacheTraceTopic  = "RMQ_SYS_TRACE_TOPIC"
)

// apachePorts are the ports Apache's DLedger sample uses: the nameserver, each
// node's listenPort, its listenPort-2 (the VIP channel) and listenPort+2 (our
// adminListen default), and the raft ports of dLegerPeers.
var apachePorts = []int{9876, 30909, 30911, 30913, 30919, 30921, 30923, 30929, 30931, 30933, 40911, 40912, 40913}

// portsFree reports whether every port can be bound on loopback now.
func portsFree(ports []int) bool {
	for _, p := range ports {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return false
		}
		_ = l.Close()
	}
	return true
}

// TestApacheDLedgerSampleConfigsStartAGroup starts three brokers from Apache's
// own DLedger sample configs and a nameserver where they expect it. The files
// are used as they are; --set adds only what a test must: storePathRootDir (Apache's
// samples write to a fixed directory, shared by anything else on the machine),
// traceTopicEnable=true (for the trace check; Apache's default is false), and
// the test clusters' small CommitLog segments and IndexFiles (with Apache's
// defaults, 1 GiB segments written out with zeros and 420 MB IndexFiles, the
// first send costs three nodes about 4 GB of disk writes and seconds). When
// a sample port is taken on this machine, --set moves listenPort, dLegerPeers
// and namesrvAddr to free ports and the test says so.
//
// It checks that a leader is elected and registered, that every node logs one
// warning for each of the three keys without effect, that a send to a
// FOLLOWER's address succeeds (forwarded with no dLegerPeerClientAddrs: the
// leader announced its client address through raft), and that the trace topic
// exists and receives the official Go client's trace records (WithTrace).
func TestApacheDLedgerSampleConfigsStartAGroup(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	started := time.Now()
	dir := t.TempDir()
	nsAddr := apacheNamesrv
	clientAddrs := []string{"127.0.0.1:30911", "127.0.0.1:30921", "127.0.0.1:30931"}
	var moved []string // --set overrides for ports, when the sample's are taken
	if !portsFree(apachePorts) {
		ports, err := proctest.FreePorts(7)
		if err != nil {
			t.Fatal(err)
		}
		nsAddr = fmt.Sprintf("127.0.0.1:%d", ports[0])
		peers := fmt.Sprintf("n0-127.0.0.1:%d;n1-127.0.0.1:%d;n2-127.0.0.1:%d", ports[4], ports[5], ports[6])
		moved = []string{"--set", "namesrvAddr=" + nsAddr, "--set", "dLegerPeers=" + peers, "--set", "adminListen="}
		for i := range clientAddrs {
			clientAddrs[i] = fmt.Sprintf("127.0.0.1:%d", ports[1+i])
		}
		t.Logf("a port of Apache's sample is in use here: moved to nameserver %s, brokers %v, raft %s", nsAddr, clientAddrs, peers)
	}

	// The nameserver runs from a config with Apache's nameserver keys
	// (config/testdata/apache/namesrv.conf), moved to the test's address.
	nsConf, err := filepath.Abs(apacheNamesrvConf)
	if err != nil {
		t.Fatal(err)
	}
	nsHost, nsPort, _ := net.SplitHostPort(nsAddr)
	ns := newProc("namesrv", filepath.Join(dir, "namesrv.log"), "namesrv", "-c", nsConf,
		"--set", "listenPort="+nsPort, "--set", "bindAddress="+nsHost, "--set", "adminListen=")
	var nodes []*proctest.Proc
	for i := range 3 {
		conf, err := filepath.Abs(filepath.Join(apacheConfDir, fmt.Sprintf("broker-n%d.conf", i)))
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"broker", "-c", conf,
			"--set", "storePathRootDir=" + filepath.Join(dir, fmt.Sprintf("node0%d", i)),
			"--set", "traceTopicEnable=true",
			"--set", fmt.Sprintf("mappedFileSizeCommitLog=%d", proctest.SegmentSize),
			"--set", fmt.Sprintf("maxHashSlotNum=%d", proctest.IndexHashSlots),
			"--set", fmt.Sprintf("maxIndexNum=%d", proctest.IndexMaxEntries)}
		if moved != nil {
			_, port, _ := net.SplitHostPort(clientAddrs[i])
			args = append(append(args, moved...), "--set", "listenPort="+port)
		}
		nodes = append(nodes, newProc(fmt.Sprintf("n%d", i), filepath.Join(dir, fmt.Sprintf("n%d.log", i)), args...))
	}
	all := append([]*proctest.Proc{ns}, nodes...)
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range all {
				t.Logf("---- tail of %s log ----\n%s", p.Name, p.Tail(40))
			}
		}
		stopping := time.Now()
		proctest.StopAll(10*time.Second, nodes...)
		ns.Stop(5 * time.Second)
		t.Logf("processes stopped in %v", time.Since(stopping).Round(time.Millisecond))
	})
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitListening(nsAddr, 10*time.Second); err != nil {
		t.Fatalf("nameserver: %v", err)
	}
	for _, n := range nodes {
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
	}

	tc := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	t.Cleanup(func() { _ = tc.Close() })
	nsc := nameserver.NewClient(tc)
	addrs := waitApacheGroup(t, nsc, nsAddr)
	leader := addrs[0]
	follower := ""
	for id, a := range addrs {
		if id != 0 {
			follower = a
			break
		}
	}
	t.Logf("%v: group %s registered: %v (leader %s, sending through follower %s)", time.Since(started).Round(time.Millisecond), apacheGroup, addrs, leader, follower)

	for _, key := range []string{"rocketmqHome", "kvConfigPath", "orderMessageEnable", "serverWorkerThreads",
		"clientRequestThreadPoolNums", "enableControllerInNamesrv", "useTLS"} {
		if !ns.LogContains("config key has no effect: key=" + key + " ") {
			t.Errorf("nameserver: no warning line for %s", key)
		}
	}
	for _, n := range nodes {
		for _, key := range []string{"storePathCommitLog", "enableDLegerCommitLog", "sendMessageThreadPoolNums"} {
			if !n.LogContains("config key has no effect: broker=" + apacheGroup + " node=" + n.Name + " key=" + key + " ") {
				t.Errorf("%s: no warning line for %s", n.Name, key)
			}
		}
	}

	// A write sent to a follower is relayed to the leader and stored there.
	topic := unique(t, "ApacheDLedger")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	ext := map[string]string{"producerGroup": "apache-it", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": "0", "sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10), "flag": "0",
		"properties": "", "reconsumeTimes": "0", "unitMode": "false", "batch": "false"}
	resp, err := tc.Invoke(ctx, follower, transport.NewRequest(transport.SendMessage, ext, []byte("through a follower")))
	if err != nil {
		t.Fatalf("send to follower %s: %v", follower, err)
	}
	if resp.ResponseCode() != transport.Success {
		t.Fatalf("send to follower %s: %s %q (forwarding without dLegerPeerClientAddrs)", follower, resp.ResponseCode(), resp.Remark)
	}
	waitMaxOffset(t, tc, leader, topic, 1)
	t.Logf("%v: relayed send stored", time.Since(started).Round(time.Millisecond))

	// traceTopicEnable: the trace topic is routed, and the Go client's trace
	// dispatcher (which sends nothing while the topic has no route) delivers a
	// record naming the traced message.
	route, err := nsc.GetRoute(ctx, nsAddr, apacheTraceTopic)
	if err != nil || len(route.QueueDatas) != 1 || route.QueueDatas[0].WriteQueueNums != 1 {
		t.Fatalf("route of %s: %+v, %v (want one queue data with 1 write queue)", apacheTraceTopic, route, err)
	}
	before := maxOffset(t, tc, leader, apacheTraceTopic, 0)
	p, err := rocketmq.NewProducer(
		producer.WithNameServer([]string{nsAddr}),
		producer.WithGroupName(unique(t, "PGtrace")),
		producer.WithInstanceName(unique(t, "trace")),
		producer.WithTrace(&primitive.TraceConfig{GroupName: unique(t, "TG"), Access: primitive.Local, NamesrvAddrs: []string{nsAddr}}),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown() }()
	res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte("traced")))
	if err != nil || res.Status != primitive.SendOK {
		t.Fatalf("traced send: %v %v", res, err)
	}
	waitMaxOffset(t, tc, leader, apacheTraceTopic, before+1)
	if body := pullBody(t, tc, leader, apacheTraceTopic, before); !bytes.Contains(body, []byte(res.MsgID)) {
		t.Errorf("trace record does not name the traced message %s:\n%q", res.MsgID, body)
	}
	t.Logf("%v: relayed send and trace record checked", time.Since(started).Round(time.Millisecond))
}

// waitApacheGroup waits until the nameserver lists a leader (brokerId 0) and
// three nodes for RaftNode00.
func waitApacheGroup(t *testing.T, nsc *nameserver.Client, nsAddr string) map[int64]string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last map[int64]string
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		ci, err := nsc.GetClusterInfo(ctx, nsAddr)
		cancel()
		if bd, ok := ci.BrokerAddrTable[apacheGroup]; err == nil && ok {
			last = map[int64]string{}
			for id, a := range bd.BrokerAddrs {
				last[int64(id)] = a
			}
			if _, ok := last[0]; ok && len(last) == 3 && ci.ClusterAddrTable["RaftCluster"] != nil {
				return last
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("group %s never registered a leader and three nodes in cluster RaftCluster (last %v)", apacheGroup, last)
	return nil
}

// maxOffset asks addr for GET_MAX_OFFSET of one queue.
func maxOffset(t *testing.T, tc *transport.Client, addr, topic string, queueID int) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	resp, err := tc.Invoke(ctx, addr, transport.NewRequest(transport.GetMaxOffset,
		map[string]string{"topic": topic, "queueId": strconv.Itoa(queueID)}, nil))
	if err != nil {
		t.Fatalf("max offset of %s at %s: %v", topic, addr, err)
	}
	if resp.ResponseCode() != transport.Success {
		return 0 // the topic does not exist there yet
	}
	n, err := strconv.ParseInt(resp.Field("offset"), 10, 64)
	if err != nil {
		t.Fatalf("max offset of %s: %q", topic, resp.Field("offset"))
	}
	return n
}

// waitMaxOffset waits up to 10 s until queue 0 of topic at addr holds at least
// want messages (dispatch runs a moment after the apply that answered a send).
func waitMaxOffset(t *testing.T, tc *transport.Client, addr, topic string, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := maxOffset(t, tc, addr, topic, 0)
		if n >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s queue 0 at %s holds %d messages after 10 s, want %d", topic, addr, n, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pullBody pulls queue 0 of topic from offset and returns the stored records.
func pullBody(t *testing.T, tc *transport.Client, addr, topic string, offset int64) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := tc.Invoke(ctx, addr, transport.NewRequest(transport.PullMessage, map[string]string{
		"consumerGroup": "apache-it-check", "topic": topic, "queueId": "0", "queueOffset": strconv.FormatInt(offset, 10),
		"maxMsgNums": "32", "sysFlag": "4", "commitOffset": "0", "suspendTimeoutMillis": "0", "subscription": "*",
		"subVersion": "0", "expressionType": "TAG"}, nil))
	if err != nil || resp.ResponseCode() != transport.Success {
		t.Fatalf("pull %s at %s: %v %v", topic, addr, resp, err)
	}
	return resp.Body
}
