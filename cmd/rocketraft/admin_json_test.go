package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/internal/admin"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/transport"
)

// jsonCluster is a nameserver and one three-node group (broker-a) as real
// processes, with ACL on and loopback on the global allow-list, so the acl
// commands have something to do and every other request passes unsigned.
type jsonCluster struct {
	*proctest.Group
}

func startJSONCluster(t *testing.T) *jsonCluster {
	t.Helper()
	dir := t.TempDir()
	bin, err := proctest.Binary(filepath.Join("..", ".."), dir)
	if err != nil {
		t.Fatal(err)
	}
	aclFile := filepath.Join(dir, "plain_acl.yml")
	acl := "globalWhiteRemoteAddresses:\n  - 127.0.0.1\naccounts:\n  - accessKey: jsonAdmin\n    secretKey: json-admin-secret\n    admin: true\n"
	if err := os.WriteFile(aclFile, []byte(acl), 0o600); err != nil {
		t.Fatal(err)
	}
	return &jsonCluster{proctest.StartGroup(t, bin, dir, "aclEnable=true", "aclFile="+aclFile)}
}

// adminRun runs `rocketraft admin -n NS args…` in this process and returns
// its stdout.
func (jc *jsonCluster) adminRun(args ...string) (string, error) {
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"admin", "-n", jc.Namesrv, "--timeout", "5s"}, args...))
	err := root.Execute()
	if err != nil {
		err = fmt.Errorf("%w (stderr %s)", err, errOut.String())
	}
	return out.String(), err
}

// eventually reruns an admin command until it succeeds and ok accepts its output.
func (jc *jsonCluster) eventually(t *testing.T, ok func(string) bool, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := jc.adminRun(args...)
		if err == nil && ok(out) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("admin %s: never as expected (err %v):\n%s", strings.Join(args, " "), err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// oneSettledLeader reports whether `admin cluster -o json` shows exactly one
// LEADER and every node naming it as leader. (Counting "LEADER" in the text
// table cannot work: the header has a LEADER column.)
func oneSettledLeader(out string) bool {
	var nodes []struct {
		Node, Role, Leader string
	}
	if json.Unmarshal([]byte(out), &nodes) != nil || len(nodes) == 0 {
		return false
	}
	leader := ""
	for _, n := range nodes {
		if n.Role == "LEADER" {
			if leader != "" {
				return false
			}
			leader = n.Node
		}
	}
	for _, n := range nodes {
		if leader == "" || n.Leader != leader {
			return false
		}
	}
	return true
}

// leaves lists the path (below admin) of every runnable command with no
// subcommands.
func leaves(c *cobra.Command, prefix []string) [][]string {
	var out [][]string
	for _, sub := range c.Commands() {
		p := append(slices.Clone(prefix), sub.Name())
		if sub.HasSubCommands() {
			out = append(out, leaves(sub, p)...)
		} else if sub.Runnable() {
			out = append(out, p)
		}
	}
	return out
}

// fakeConsumer is a consumer client of group over our own transport: it
// heartbeats every node and answers GET_CONSUMER_RUNNING_INFO the way the Go
// client shapes it, so running-info has a client to ask.
func fakeConsumer(ctx context.Context, t *testing.T, jc *jsonCluster, group, topic string) {
	t.Helper()
	h := func(_ context.Context, _ *transport.Conn, req *transport.Command) *transport.Command {
		if req.RequestCode() != transport.GetConsumerRunningInfo {
			return nil
		}
		r := transport.NewResponse(transport.Success, "")
		r.Body = []byte(`{"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY"},"subscriptionSet":[{"topic":"` + topic +
			`","subString":"*","expressionType":"TAG"}],"mqTable":{{"topic":"` + topic + `","queueId":0}:{"commitOffset":1}}}`)
		return r
	}
	tc := transport.NewClient(transport.ClientConfig{OnRequest: transport.HandlerFunc(h)})
	t.Cleanup(func() { _ = tc.Close() })
	body := fmt.Sprintf(`{"clientID":"json-test@1","producerDataSet":[],"consumerDataSet":[{"groupName":%q,"consumeType":"CONSUME_PASSIVELY",`+
		`"messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[{"topic":%q,"subString":"*"}],"unitMode":false}]}`,
		group, topic)
	for _, addr := range jc.ClientAddr {
		invoke(ctx, t, tc, addr, transport.NewRequest(transport.HeartBeat, nil, []byte(body)))
	}
}

func invoke(ctx context.Context, t *testing.T, tc *transport.Client, addr string, req *transport.Command) *transport.Command {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := tc.Invoke(cctx, addr, req)
	if err != nil || resp.ResponseCode() != transport.Success {
		t.Fatalf("%s to %s: %v %v", req.RequestCode(), addr, err, resp)
	}
	return resp
}

// TestAdminEveryCommandPrintsJSON walks the admin command tree and runs every
// command against real processes with -o json: each must print one JSON
// document that encoding/json parses and that is not empty. A command added
// without a line below fails the test, so the list stays complete.
func TestAdminEveryCommandPrintsJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the process-level admin JSON test")
	}
	jc := startJSONCluster(t)
	ctx := context.Background()
	const topic, group = "JsonT", "json-consumers"

	// A leader, a topic with two keyed messages, a consumer with an offset.
	jc.eventually(t, oneSettledLeader, "cluster", "-o", "json")
	jc.eventually(t, func(string) bool { return true }, "topic", "create", topic, "-r", "2", "-w", "2")
	jc.eventually(t, func(out string) bool { return strings.Contains(out, topic) }, "topic", "route", topic)
	ac := admin.New(admin.Config{NamesrvAddrs: []string{jc.Namesrv}})
	defer ac.Close()
	leaderAddr := func() string {
		t.Helper()
		nodes, err := ac.Cluster(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			if n.Role == "LEADER" {
				return n.Addr
			}
		}
		t.Fatalf("no leader in %+v", nodes)
		return ""
	}
	tc := transport.NewClient(transport.ClientConfig{})
	defer tc.Close()
	var offsetMsgID string
	for i := range 2 {
		resp := invoke(ctx, t, tc, leaderAddr(), transport.NewRequest(transport.SendMessage, map[string]string{
			"producerGroup": "pg", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "2", "queueId": "0",
			"sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10), "flag": "0",
			"properties": fmt.Sprintf("KEYS\x01key-%d\x02WAIT\x01true\x02", i), "reconsumeTimes": "0", "unitMode": "false", "batch": "false",
		}, []byte("json body")))
		offsetMsgID = resp.Field("msgId")
	}
	fakeConsumer(ctx, t, jc, group, topic)
	// A producer group for connections producer: a heartbeat to every node.
	for _, addr := range jc.ClientAddr {
		invoke(ctx, t, tc, addr, transport.NewRequest(transport.HeartBeat, nil,
			[]byte(`{"clientID":"json-producer@1","producerDataSet":[{"groupName":"json-producers"}],"consumerDataSet":[]}`)))
	}
	invoke(ctx, t, tc, leaderAddr(), transport.NewRequest(transport.UpdateConsumerOffset, map[string]string{
		"consumerGroup": group, "topic": topic, "queueId": "0", "commitOffset": "1"}, nil))

	// follower picks a member that is not the leader, for the membership changes.
	var follower string
	followerID := func() []string {
		_, peers, err := ac.RaftPeers(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range peers {
			if !p.Leader {
				follower = p.ID
				return []string{p.ID}
			}
		}
		t.Fatalf("no follower in %+v", peers)
		return nil
	}
	rejoin := func() []string { return []string{follower, jc.RaftAddr[follower]} }
	fixed := func(args ...string) func() []string { return func() []string { return args } }

	// In order: state-changing commands come where the state they need exists.
	runs := []struct {
		path string
		args func() []string
	}{
		{"cluster", fixed()},
		{"topic create", fixed("JsonT2", "-r", "1", "-w", "1")},
		{"topic update", fixed(topic, "-w", "4")},
		{"topic list", fixed()},
		{"topic route", fixed(topic)},
		{"topic status", fixed("-t", topic)},
		{"group list", fixed()},
		{"group progress", fixed("-g", group, "-t", topic)},
		{"group running-info", fixed("-g", group)},
		{"group reset-offset", fixed("-g", group, "-t", topic, "-s", "-1")},
		{"group update", fixed("json-sub", "--max-retries", "3")},
		{"group delete", fixed("json-sub", "--clean-offsets")},
		{"connections consumer", fixed("-g", group)},
		{"connections producer", fixed("json-producers", "-t", topic)},
		{"message key", fixed(topic, "key-1")},
		{"message id", func() []string { return []string{offsetMsgID} }},
		// A trace record as Java writes one, on JsonT as the trace topic.
		{"message send", fixed(topic, "--body", "Pub\x011700000000000\x01DefaultRegion\x01pg\x01"+topic+"\x01json-traced\x01\x01\x01h:1\x011\x012\x010\x01off\x01true\x02",
			"--keys", "json-traced", "-B", "broker-a", "--queue", "1")},
		{"message offset", fixed(topic, "-B", "broker-a", "--queue", "0", "--offset", "0")},
		{"message print", fixed(topic)},
		{"message consume", fixed(topic, "--count", "1")},
		{"message trace", fixed("json-traced", "--trace-topic", topic)},
		{"acl list", fixed()},
		{"acl set", fixed("jsonUser1", "--account-secret", "json-user-secret", "--default-topic-perm", "SUB")},
		{"acl delete", fixed("jsonUser1")},
		{"acl whitelist", fixed("127.0.0.1,10.9.9.*")},
		{"broker status", fixed()},
		{"broker config get", fixed("-B", "broker-a")},
		{"broker config set", fixed("logLevel=info")},
		{"version", fixed()},
		{"raft peers", fixed()},
		{"raft snapshot", fixed()},
		{"raft transfer-leader", fixed()},
		{"raft remove", followerID},
		{"raft add-nonvoter", rejoin},
		{"raft add-voter", rejoin},
		{"topic delete", fixed("JsonT2")},
	}
	var listed []string
	for _, r := range runs {
		listed = append(listed, r.path)
	}
	for _, l := range leaves(newAdminCommand(), nil) {
		if p := strings.Join(l, " "); !slices.Contains(listed, p) {
			t.Errorf("admin %s has no -o json run in this test: add one", p)
		}
	}
	for _, r := range runs {
		args := append(append(strings.Fields(r.path), r.args()...), "-o", "json")
		var doc any
		jc.eventually(t, func(out string) bool {
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("admin %s: not JSON: %v\n%s", strings.Join(args, " "), err, out)
			}
			switch d := doc.(type) {
			case []any:
				return len(d) > 0
			case map[string]any:
				return len(d) > 0
			}
			return false
		}, args...)
		if r.path == "raft transfer-leader" {
			// The next commands address the group's leader: let the new one settle.
			jc.eventually(t, oneSettledLeader, "cluster", "-o", "json")
		}
	}
}
