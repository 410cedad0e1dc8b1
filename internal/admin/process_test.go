package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/transport"
)

// TestAdminCLIAgainstProcesses builds the binary, runs a nameserver and a
// three-node group as processes on free loopback ports, and drives every admin
// subcommand through the CLI, asserting on its output. It takes about 5 s
// after the build, so it runs by default; -short skips it.
func TestAdminCLIAgainstProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the process-level admin test")
	}
	pc := startProcessCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// cluster: one leader, two followers, one term, registered under ids 0, 2, 3
	// or 0, 1, 3 (followers register as their peer index + 1).
	out := pc.eventually(t, 20*time.Second, func(out string) bool {
		n := 0
		for _, role := range roles(out) {
			if role == "LEADER" {
				n++
			}
		}
		return len(roles(out)) == 3 && n == 1
	}, "cluster")
	var leaderID string
	for id, role := range roles(out) {
		if role == "LEADER" {
			leaderID = id
		}
	}

	// topic create / route / list / update / status
	out = pc.admin(t, "topic", "create", "Orders", "-r", "2", "-w", "2")
	mustContain(t, out, "broker-a", "topic create Orders", "OK")
	pc.eventually(t, 10*time.Second, func(out string) bool { return strings.Contains(out, "Orders  broker-a  2") }, "topic", "route", "Orders")
	mustContain(t, pc.admin(t, "topic", "list"), "Orders", "TBW102")
	mustContain(t, pc.admin(t, "topic", "update", "Orders", "-r", "4", "-w", "4"), "OK")
	pc.eventually(t, 10*time.Second, func(out string) bool { return strings.Contains(out, "Orders  broker-a  4") }, "topic", "route", "Orders")

	// topic update changes only the flags given: -p keeps the queue counts
	// and the order flag, -w then keeps the perm; the broker's stored config
	// (the next update's "before") and the nameserver's route both show it.
	mustContain(t, pc.admin(t, "topic", "create", "-t", "Shapes", "-r", "3", "-w", "5", "--order"), "OK")
	first := updateDocs(t, pc.admin(t, "topic", "update", "Shapes", "-p", "4", "-o", "json"))
	if a := first[0].After; first[0].Result != "updated" || a.ReadQueueNums != 3 || a.WriteQueueNums != 5 || a.Perm != 4 || !a.Order {
		t.Fatalf("-p 4 wrote %+v (%s)", a, first[0].Result)
	}
	second := updateDocs(t, pc.admin(t, "topic", "update", "-t", "Shapes", "-w", "16", "-o", "json"))
	if b, a := second[0].Before, second[0].After; b != first[0].After || a.ReadQueueNums != 3 || a.WriteQueueNums != 16 || a.Perm != 4 || !a.Order {
		t.Fatalf("-w 16: before %+v after %+v, want before %+v", b, a, first[0].After)
	}
	pc.eventually(t, 10*time.Second, func(out string) bool {
		return strings.Join(strings.Fields(rowWith(t, out, "Shapes ")), " ") == "Shapes broker-a 3 16 R--(4) "+rowAddrs(t, out)
	}, "topic", "route", "Shapes")
	if out, err := pc.run("topic", "update", "Nope", "-p", "4"); err == nil || !strings.Contains(out, "Nope") || !strings.Contains(out, "topic create") {
		t.Fatalf("update of a missing topic: %v\n%s", err, out)
	}

	// Produce three messages with keys into queue 1 (to the leader; a follower
	// would forward) and commit a consumer offset of 1 for group g1.
	leaderAddr := pc.clientAddr[leaderID]
	var offsetMsgID string
	for i := range 3 {
		offsetMsgID = pc.send(ctx, t, leaderAddr, "Orders", 1, fmt.Sprintf("order-%d", i), fmt.Sprintf("body of order %d", i))
	}
	pc.heartbeat(ctx, t, leaderAddr, "g1")
	pc.commitOffset(ctx, t, leaderAddr, "g1", "Orders", 1, 1)

	out = pc.admin(t, "topic", "status", "Orders")
	mustContain(t, out, "total messages: 3 in 4 queues")
	if f := strings.Fields(rowWith(t, out, "Orders  broker-a  1 ")); f[4] != "3" {
		t.Fatalf("queue 1 max offset %q:\n%s", f[4], out)
	}
	pc.eventually(t, 10*time.Second, func(out string) bool { return strings.Contains(out, "g1") }, "group", "list")
	out = pc.eventually(t, 10*time.Second, func(out string) bool { return strings.Contains(out, "total lag 2 over 1 queues") }, "group", "progress", "g1")
	mustContain(t, out, "Orders  broker-a      1      3              1                2")

	// message key / id
	out = pc.admin(t, "message", "key", "Orders", "order-2")
	mustContain(t, out, "Keys             order-2", `Body             "body of order 2"`, "QueueOffset      2", "Tags             tagA")
	out = pc.admin(t, "message", "id", offsetMsgID)
	mustContain(t, out, "OffsetMsgId      "+offsetMsgID, "Keys             order-2", "Group            broker-a")

	// raft peers / snapshot / transfer-leader / remove / add-nonvoter / add-voter
	out = pc.admin(t, "raft", "peers")
	if strings.Count(out, "Voter") != 3 || !strings.Contains(rowWith(t, out, " "+leaderID+" "), "*") {
		t.Fatalf("peers:\n%s", out)
	}
	mustContain(t, pc.admin(t, "raft", "snapshot"), "snapshot taken")
	var target string
	for id := range pc.clientAddr {
		if id != leaderID {
			target = id
			break
		}
	}
	mustContain(t, pc.admin(t, "raft", "transfer-leader", target), "OK")
	pc.eventually(t, 15*time.Second, func(out string) bool {
		r := roles(out)
		return len(r) == 3 && r[target] == "LEADER"
	}, "cluster")
	victim := leaderID // the old leader, now a follower
	mustContain(t, pc.admin(t, "raft", "remove", victim), "raft remove "+victim, "OK")
	out = pc.admin(t, "raft", "peers")
	if strings.Contains(out, " "+victim+" ") {
		t.Fatalf("%s still a member:\n%s", victim, out)
	}
	mustContain(t, pc.admin(t, "raft", "add-nonvoter", victim, pc.raftAddr[victim]), "OK")
	mustContain(t, pc.admin(t, "raft", "peers"), victim+"  "+pc.raftAddr[victim]+"  Nonvoter")
	mustContain(t, pc.admin(t, "raft", "add-voter", victim, pc.raftAddr[victim]), "OK")
	if strings.Count(pc.admin(t, "raft", "peers"), "Voter ") != 3 {
		t.Fatal("victim not promoted back to voter")
	}
	// A refused change exits non-zero and names the problem.
	if out, err := pc.run("raft", "transfer-leader", "nope"); err == nil || !strings.Contains(out, "not a member") {
		t.Fatalf("transfer to unknown id: %v\n%s", err, out)
	}

	// topic delete, then the nameserver no longer routes it.
	mustContain(t, pc.admin(t, "topic", "delete", "Orders"), "(nameserver)", "OK")
	pc.eventually(t, 10*time.Second, func(out string) bool { return !strings.Contains(out, "Orders") }, "topic", "list")

	// HTTP admin: health, readiness and metrics on every node.
	for id, a := range pc.httpAddr {
		for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready", "/metrics": "rocketraft_raft_term"} {
			body := httpGet(t, "http://"+a+path)
			if !strings.Contains(body, want) {
				t.Errorf("%s %s lacks %q: %.200s", id, path, want, body)
			}
		}
	}
	// The three sends went to the first leader.
	sends := regexp.MustCompile(`rocketraft_broker_requests_total\{[^}]*code="SUCCESS\(0\)",[^}]*request="SEND_MESSAGE\(10\)"\} 3\n`)
	if body := httpGet(t, "http://"+pc.httpAddr[leaderID]+"/metrics"); !sends.MatchString(body) {
		t.Errorf("%s /metrics does not count 3 successful sends", leaderID)
	}
}

// updateDoc is the part of `topic update -o json` these tests read.
type updateDoc struct {
	BrokerName    string `json:"brokerName"`
	Result        string `json:"result"`
	Before, After struct {
		ReadQueueNums  int32 `json:"readQueueNums"`
		WriteQueueNums int32 `json:"writeQueueNums"`
		Perm           int32 `json:"perm"`
		Order          bool  `json:"order"`
	}
}

func updateDocs(t *testing.T, out string) []updateDoc {
	t.Helper()
	var ds []updateDoc
	if err := json.Unmarshal([]byte(out), &ds); err != nil || len(ds) != 1 || ds[0].BrokerName != "broker-a" {
		t.Fatalf("topic update -o json: %v %+v\n%s", err, ds, out)
	}
	return ds
}

// rowAddrs is the BROKER-ADDRS cell of the one route row in out.
func rowAddrs(t *testing.T, out string) string {
	t.Helper()
	f := strings.Fields(strings.Split(strings.TrimSpace(out), "\n")[1])
	return strings.Join(f[5:], " ")
}

type processCluster struct {
	bin, namesrv string
	clientAddr   map[string]string // raft id → client address
	raftAddr     map[string]string
	httpAddr     map[string]string
	tc           *transport.Client
}

func startProcessCluster(t *testing.T) *processCluster {
	t.Helper()
	dir := t.TempDir()
	// ROCKETRAFT_BIN names a prebuilt binary (make test builds one for every suite).
	bin := os.Getenv("ROCKETRAFT_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "rocketraft")
		build := exec.Command("go", "build", "-o", bin, "github.com/rocketraft/rocketraft/cmd/rocketraft")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
	}
	ports := proctest.TestPorts(t, 10)
	pc := &processCluster{bin: bin, namesrv: fmt.Sprintf("127.0.0.1:%d", ports[0]),
		clientAddr: map[string]string{}, raftAddr: map[string]string{}, httpAddr: map[string]string{},
		tc: transport.NewClient(transport.ClientConfig{})}
	t.Cleanup(func() { _ = pc.tc.Close() })
	var peers, clients []string
	for i := range 3 {
		id := fmt.Sprintf("n%d", i)
		pc.clientAddr[id] = fmt.Sprintf("127.0.0.1:%d", ports[1+i])
		pc.raftAddr[id] = fmt.Sprintf("127.0.0.1:%d", ports[4+i])
		pc.httpAddr[id] = fmt.Sprintf("127.0.0.1:%d", ports[7+i])
		peers = append(peers, id+"-"+pc.raftAddr[id])
		clients = append(clients, id+"-"+pc.clientAddr[id])
	}
	nsConf := filepath.Join(dir, "namesrv.conf")
	writeFile(t, nsConf, fmt.Sprintf("listenAddr=127.0.0.1\nlistenPort=%d\nadminListen=\n", ports[0]))
	start := func(name string, args ...string) {
		logf, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
			_ = logf.Close()
			if t.Failed() {
				b, _ := os.ReadFile(logf.Name())
				t.Logf("--- %s log (tail) ---\n%s", name, tail(string(b), 3000))
			}
		})
	}
	start("namesrv", "namesrv", "-c", nsConf)
	for i := range 3 {
		id := fmt.Sprintf("n%d", i)
		conf := filepath.Join(dir, id+".conf")
		writeFile(t, conf, strings.Join([]string{
			"brokerClusterName=DefaultCluster", "brokerName=broker-a", "brokerIP1=127.0.0.1",
			"listenPort=" + strconv.Itoa(ports[1+i]), "namesrvAddr=" + pc.namesrv,
			"storePathRootDir=" + filepath.Join(dir, id), "dLegerGroup=broker-a",
			"dLegerPeers=" + strings.Join(peers, ";"), "dLegerPeerClientAddrs=" + strings.Join(clients, ";"),
			"dLegerSelfId=" + id, "mappedFileSizeCommitLog=8388608", "maxHashSlotNum=50000", "maxIndexNum=200000", "adminListen=" + pc.httpAddr[id],
			"raftHeartbeatTimeout=500ms", "raftElectionTimeout=500ms", "raftLeaderLeaseTimeout=250ms", "",
		}, "\n"))
		start(id, "broker", "-c", conf)
	}
	return pc
}

// run executes `rocketraft admin -n <namesrv> args…` and returns stdout+stderr.
func (pc *processCluster) run(args ...string) (string, error) {
	cmd := exec.Command(pc.bin, append([]string{"admin", "-n", pc.namesrv, "--timeout", "5s"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (pc *processCluster) admin(t *testing.T, args ...string) string {
	t.Helper()
	out, err := pc.run(args...)
	if err != nil {
		t.Fatalf("admin %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// eventually reruns an admin command until its output satisfies ok.
func (pc *processCluster) eventually(t *testing.T, within time.Duration, ok func(string) bool, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		out, err := pc.run(args...)
		if err == nil && ok(out) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("admin %s never as expected within %s (err %v):\n%s", strings.Join(args, " "), within, err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// send produces one message with KEYS and TAGS and returns its offset msgId.
func (pc *processCluster) send(ctx context.Context, t *testing.T, addr, topic string, queue int, key, body string) string {
	t.Helper()
	props := "KEYS\x01" + key + "\x02TAGS\x01tagA\x02WAIT\x01true\x02"
	req := transport.NewRequest(transport.SendMessage, map[string]string{
		"producerGroup": "pg", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": strconv.Itoa(queue), "sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10),
		"flag": "0", "properties": props, "reconsumeTimes": "0", "unitMode": "false", "batch": "false",
	}, []byte(body))
	resp := pc.invoke(ctx, t, addr, req)
	return resp.Field("msgId")
}

func (pc *processCluster) heartbeat(ctx context.Context, t *testing.T, addr, group string) {
	t.Helper()
	body := fmt.Sprintf(`{"clientID":"admin-test","producerDataSet":[],"consumerDataSet":[{"groupName":%q,"consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[],"unitMode":false}]}`, group)
	pc.invoke(ctx, t, addr, transport.NewRequest(transport.HeartBeat, nil, []byte(body)))
}

func (pc *processCluster) commitOffset(ctx context.Context, t *testing.T, addr, group, topic string, queue, off int) {
	t.Helper()
	pc.invoke(ctx, t, addr, transport.NewRequest(transport.UpdateConsumerOffset, map[string]string{
		"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(queue), "commitOffset": strconv.Itoa(off)}, nil))
}

func (pc *processCluster) invoke(ctx context.Context, t *testing.T, addr string, req *transport.Command) *transport.Command {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := pc.tc.Invoke(cctx, addr, req)
	if err != nil || resp.ResponseCode() != transport.Success {
		t.Fatalf("%s to %s: %v %v", req.RequestCode(), addr, err, resp)
	}
	return resp
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Fatalf("output lacks %q:\n%s", w, out)
		}
	}
}

// rowWith returns the first line of out containing s.
func rowWith(t *testing.T, out, s string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	t.Fatalf("no line with %q:\n%s", s, out)
	return ""
}

// roles maps node id → role from a cluster table.
func roles(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		if f := strings.Fields(l); len(f) > 5 {
			m[f[4]] = f[5]
		}
	}
	return m
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
