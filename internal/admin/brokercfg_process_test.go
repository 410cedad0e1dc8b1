package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/config"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/transport"
)

// cfgCluster is a nameserver and one three-node group (broker-a) as real
// processes, each broker with its broker.conf at conf[id], so a test can
// restart a node and read its file.
type cfgCluster struct {
	*proctest.Group
	tc *transport.Client
}

func startCfgCluster(t *testing.T) *cfgCluster {
	t.Helper()
	dir := t.TempDir()
	bin, err := proctest.Binary(filepath.Join("..", ".."), dir)
	if err != nil {
		t.Fatal(err)
	}
	cc := &cfgCluster{Group: proctest.StartGroup(t, bin, dir), tc: transport.NewClient(transport.ClientConfig{})}
	t.Cleanup(func() { _ = cc.tc.Close() })
	return cc
}

// admin runs `rocketraft admin -n NS args…` and returns stdout and stderr apart.
func (cc *cfgCluster) admin(args ...string) (string, string, error) {
	cmd := exec.Command(cc.Bin, append([]string{"admin", "-n", cc.Namesrv, "--timeout", "5s"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

func (cc *cfgCluster) mustAdmin(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := cc.admin(args...)
	if err != nil {
		t.Fatalf("admin %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// leader waits until the cluster view shows one leader and three nodes and
// returns the leader's raft id.
func (cc *cfgCluster) leader(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _, err := cc.admin("cluster", "-o", "json")
		var nodes []struct{ Node, Role, Leader string }
		if err == nil && json.Unmarshal([]byte(out), &nodes) == nil && len(nodes) == 3 {
			leaders := 0
			var id string
			for _, n := range nodes {
				if n.Role == "LEADER" {
					leaders++
					id = n.Node
				}
			}
			settled := leaders == 1
			for _, n := range nodes {
				settled = settled && n.Leader == id
			}
			if settled {
				return id
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no settled leader: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (cc *cfgCluster) invoke(t *testing.T, addr string, req *transport.Command) *transport.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cc.tc.Invoke(ctx, addr, req)
	if err != nil {
		t.Fatalf("%s to %s: %v", req.RequestCode(), addr, err)
	}
	return resp
}

// send stores one message of body bytes in topic through addr and returns the
// response code.
func (cc *cfgCluster) send(t *testing.T, addr, topic string, body int) transport.ResponseCode {
	t.Helper()
	req := transport.NewRequest(transport.SendMessage, map[string]string{
		"producerGroup": "pg", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4", "queueId": "0",
		"sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10), "flag": "0",
		"properties": "WAIT\x01true\x02", "reconsumeTimes": "0", "unitMode": "false", "batch": "false",
	}, bytes.Repeat([]byte("x"), body))
	return cc.invoke(t, addr, req).ResponseCode()
}

// configDocs decodes `broker config get -o json`.
type configDoc struct {
	BrokerName string            `json:"brokerName"`
	Addr       string            `json:"addr"`
	Config     map[string]string `json:"config"`
	Version    struct{ Counter int64 }
	Error      string `json:"error"`
}

func (cc *cfgCluster) configs(t *testing.T, args ...string) map[string]configDoc {
	t.Helper()
	out := cc.mustAdmin(t, append([]string{"broker", "config", "get", "-o", "json"}, args...)...)
	var docs []configDoc
	if err := json.Unmarshal([]byte(out), &docs); err != nil {
		t.Fatalf("broker config get -o json: %v\n%s", err, out)
	}
	byAddr := map[string]configDoc{}
	for _, d := range docs {
		byAddr[d.Addr] = d
	}
	return byAddr
}

// TestBrokerConfigAndRuntimeAgainstProcesses drives GET_BROKER_CONFIG,
// UPDATE_BROKER_CONFIG, GET_BROKER_RUNTIME_INFO and VIEW_BROKER_STATS_DATA
// over real TCP against a real three-node group, through the CLI and on the
// wire as mqadmin sends them.
func TestBrokerConfigAndRuntimeAgainstProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the process-level broker config test")
	}
	cc := startCfgCluster(t)
	leaderID := cc.leader(t)
	leader := cc.ClientAddr[leaderID]
	const topic = "CfgT"
	cc.mustAdmin(t, "topic", "create", topic, "-r", "1", "-w", "1")

	// 26: every node answers every key with its own values, as properties text
	// with the DataVersion in ext version.
	cfgs := cc.configs(t)
	if len(cfgs) != 3 {
		t.Fatalf("config of %d nodes, want 3: %v", len(cfgs), cfgs)
	}
	for id, addr := range cc.ClientAddr {
		c := cfgs[addr].Config
		_, port, _ := strings.Cut(addr, ":")
		for k, want := range map[string]string{"brokerName": "broker-a", "brokerClusterName": "DefaultCluster", "dLegerSelfId": id,
			"listenPort": port, "mappedFileSizeCommitLog": strconv.Itoa(proctest.SegmentSize), "maxMessageSize": "4194304",
			"raftElectionTimeout": "500ms", "deleteWhen": "04"} {
			if c[k] != want {
				t.Errorf("%s: %s=%q, want %q", id, k, c[k], want)
			}
		}
		if len(c) != len(config.BrokerKeys()) {
			t.Errorf("%s: %d keys, want every one of the %d broker keys", id, len(c), len(config.BrokerKeys()))
		}
	}
	resp := cc.invoke(t, leader, transport.NewRequest(transport.GetBrokerConfig, nil, nil))
	var version map[string]int64
	if resp.ResponseCode() != transport.Success || !bytes.Contains(resp.Body, []byte("\nbrokerName=broker-a\n")) ||
		json.Unmarshal([]byte(resp.Field("version")), &version) != nil || version["timestamp"] == 0 {
		t.Fatalf("GET_BROKER_CONFIG: %v ext %v body %.200s", resp.ResponseCode(), resp.Fields(), resp.Body)
	}

	// 25 on one node (-b): a live key changes behaviour there and only there.
	if code := cc.send(t, leader, topic, 3000); code != transport.Success {
		t.Fatalf("a 3000-byte send before the change: %s", code)
	}
	out := cc.mustAdmin(t, "-b", leader, "broker", "config", "set", "maxMessageSize=2048", "-o", "json")
	var ups []struct {
		Addr    string
		OK      bool
		Changes []ConfigChange
	}
	if err := json.Unmarshal([]byte(out), &ups); err != nil || len(ups) != 1 || !ups[0].OK ||
		len(ups[0].Changes) != 1 || ups[0].Changes[0] != (ConfigChange{"maxMessageSize", "4194304", "2048"}) {
		t.Fatalf("set maxMessageSize: %v\n%s", err, out)
	}
	if code := cc.send(t, leader, topic, 3000); code != transport.MessageIllegal {
		t.Errorf("a 3000-byte send after maxMessageSize=2048: %s, want MESSAGE_ILLEGAL", code)
	}
	if code := cc.send(t, leader, topic, 1000); code != transport.Success {
		t.Errorf("a 1000-byte send after maxMessageSize=2048: %s", code)
	}
	cfgs = cc.configs(t)
	for id, addr := range cc.ClientAddr {
		want, counter := "4194304", int64(0)
		if id == leaderID {
			want, counter = "2048", 1
		}
		if got := cfgs[addr].Config["maxMessageSize"]; got != want || cfgs[addr].Version.Counter != counter {
			t.Errorf("%s after a change on the leader only: maxMessageSize=%s version %d, want %s and %d", id, got, cfgs[addr].Version.Counter, want, counter)
		}
	}

	// A key that cannot change live is refused naming it, on the wire as
	// mqadmin sends it and through the CLI, and nothing of the update applies.
	req := transport.NewRequest(transport.UpdateBrokerConfig, nil, []byte("maxMessageSize=1000\nlistenPort=20000\n"))
	resp = cc.invoke(t, leader, req)
	if resp.ResponseCode() != transport.NoPermission || !strings.Contains(resp.Remark, "listenPort") || !strings.Contains(resp.Remark, "restart") {
		t.Errorf("listenPort: %s %q, want NO_PERMISSION naming the key", resp.ResponseCode(), resp.Remark)
	}
	_, errOut, err := cc.admin("broker", "config", "set", "-B", "broker-a", "mappedFileSizeCommitLog=16777216")
	if err == nil || !strings.Contains(errOut, "mappedFileSizeCommitLog") || !strings.Contains(errOut, "files on disk") {
		t.Errorf("mappedFileSizeCommitLog: err %v, stderr %s", err, errOut)
	}
	_, errOut, err = cc.admin("broker", "config", "set", "maxMesageSize=1")
	if err == nil || !strings.Contains(errOut, "did you mean maxMessageSize") || !strings.Contains(errOut, "INVALID_PARAMETER") {
		t.Errorf("unknown key: err %v, stderr %s", err, errOut)
	}
	if got := cc.configs(t, "-b", leader)[leader].Config["maxMessageSize"]; got != "2048" {
		t.Errorf("a refused update changed maxMessageSize to %s", got)
	}

	// 28: every key mqadmin and the exporter read, and putTps moves after sends.
	for range 20 {
		if code := cc.send(t, leader, topic, 100); code != transport.Success {
			t.Fatalf("send: %s", code)
		}
	}
	var table map[string]string
	tps := regexp.MustCompile(`^(\d+\.\d+) \d+\.\d+ \d+\.\d+$`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp := cc.invoke(t, leader, transport.NewRequest(transport.GetBrokerRuntimeInfo, nil, nil))
		var body struct{ Table map[string]string }
		if err := json.Unmarshal(resp.Body, &body); err != nil {
			t.Fatalf("runtime info: %v %s", err, resp.Body)
		}
		table = body.Table
		if m := tps.FindStringSubmatch(table["putTps"]); m != nil && m[1] != "0.0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("putTps never moved: %q", table["putTps"])
		}
		time.Sleep(300 * time.Millisecond)
	}
	for _, k := range []string{"putTps", "getTransferedTps", "getTransferredTps", "msgPutTotalTodayNow", "msgGetTotalTodayNow",
		"msgPutTotalYesterdayMorning", "msgPutTotalTodayMorning", "msgGetTotalYesterdayMorning", "msgGetTotalTodayMorning",
		"commitLogDiskRatio", "bootTimestamp", "brokerVersionDesc", "earliestMessageTimeStamp", "pageCacheLockTimeMills",
		"dispatchBehindBytes", "remainHowManyDataToFlush", "commitLogDirCapacity", "sendThreadPoolQueueSize",
		"sendThreadPoolQueueHeadWaitTimeMills", "pullThreadPoolQueueSize", "pullThreadPoolQueueHeadWaitTimeMills",
		"putMessageDistributeTime", "brokerVersion", "getTotalTps", "brokerActive", "rocketraftVersion"} {
		if table[k] == "" {
			t.Errorf("runtime info lacks %s", k)
		}
	}
	if table["msgPutTotalTodayNow"] != "22" || table["brokerActive"] != "true" {
		t.Errorf("leader: msgPutTotalTodayNow=%s (want the 22 stored sends) brokerActive=%s", table["msgPutTotalTodayNow"], table["brokerActive"])
	}
	if ts, _ := strconv.ParseInt(table["earliestMessageTimeStamp"], 10, 64); time.Since(time.UnixMilli(ts)) > time.Minute {
		t.Errorf("earliestMessageTimeStamp %s is not the first send", table["earliestMessageTimeStamp"])
	}
	// broker status prints the same table for every node.
	status := cc.mustAdmin(t, "broker", "status")
	if n := strings.Count(status, " putTps "); n != 3 {
		t.Errorf("broker status shows putTps for %d nodes, want 3:\n%.2000s", n, status)
	}

	// 315: the topic's put count, as statsAll reads it from the master.
	resp = cc.invoke(t, leader, transport.NewRequest(transport.ViewBrokerStatsData, map[string]string{"statsName": "TOPIC_PUT_NUMS", "statsKey": topic}, nil))
	var bsd struct {
		StatsMinute, StatsHour, StatsDay struct {
			Sum int64
			TPS float64
		}
	}
	if resp.ResponseCode() != transport.Success || json.Unmarshal(resp.Body, &bsd) != nil || bsd.StatsDay.Sum != 22 || bsd.StatsMinute.TPS <= 0 {
		t.Errorf("VIEW_BROKER_STATS_DATA: %s %s", resp.ResponseCode(), resp.Body)
	}

	// 300: a group that subscribes through a heartbeat consumes the topic
	// (statsAll asks before its per-group numbers).
	hb := fmt.Sprintf(`{"clientID":"cfg-test@1","producerDataSet":[],"consumerDataSet":[{"groupName":"cfg-readers","consumeType":"CONSUME_PASSIVELY",`+
		`"messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[{"topic":%q,"subString":"*"}],"unitMode":false}]}`, topic)
	cc.invoke(t, leader, transport.NewRequest(transport.HeartBeat, nil, []byte(hb)))
	resp = cc.invoke(t, leader, transport.NewRequest(transport.QueryTopicConsumeByWho, map[string]string{"topic": topic}, nil))
	if resp.ResponseCode() != transport.Success || string(resp.Body) != `{"groupList":["cfg-readers"]}` {
		t.Errorf("QUERY_TOPIC_CONSUME_BY_WHO: %s %s", resp.ResponseCode(), resp.Body)
	}

	// A live change is not persisted: broker.conf is untouched, and the node
	// restarted on it is back to the file's value.
	before, err := os.ReadFile(cc.Conf[leaderID])
	if err != nil {
		t.Fatal(err)
	}
	cc.mustAdmin(t, "-b", leader, "broker", "config", "set", "logLevel=debug", "fileReservedTime=24")
	if after, _ := os.ReadFile(cc.Conf[leaderID]); !bytes.Equal(before, after) {
		t.Errorf("broker.conf changed by a live update:\n%s", after)
	}
	p := cc.Procs[leaderID]
	if !p.Stop(10 * time.Second) {
		t.Fatalf("%s did not stop", leaderID)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		out, _, err := cc.admin("-b", leader, "broker", "config", "get", "-o", "json")
		var docs []configDoc
		if err == nil && json.Unmarshal([]byte(out), &docs) == nil && len(docs) == 1 {
			c := docs[0].Config
			if c["maxMessageSize"] != "4194304" || c["logLevel"] != "info" || c["fileReservedTime"] != "72" || docs[0].Version.Counter != 0 {
				t.Fatalf("after a restart: %v version %d, want the file's values", c, docs[0].Version.Counter)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("restarted %s never answered: %v %s", leaderID, err, out)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
