package console

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/admin"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/sign"
)

// fixture is a real nameserver and three-node group (processes) with a
// console served over real HTTP in front of it.
type fixture struct {
	*proctest.Group
	base string
	http *http.Client
	tc   *transport.Client
	adm  *admin.Client
}

func startFixture(t *testing.T, creds sign.Credentials, extra ...string) *fixture {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the process-level console test")
	}
	dir := t.TempDir()
	bin, err := proctest.Binary(filepath.Join(".."), dir)
	if err != nil {
		t.Fatal(err)
	}
	// Elections in about a second, not StartGroup's half: on a loaded machine
	// half a second lets groups change leaders on their own, and consumer
	// offsets buffered on a deposed leader are lost by design.
	// (Through the variables, which win over the file StartGroup writes.)
	t.Setenv("ROCKETRAFT_raftHeartbeatTimeout", "1s")
	t.Setenv("ROCKETRAFT_raftElectionTimeout", "1s")
	t.Setenv("ROCKETRAFT_raftLeaderLeaseTimeout", "500ms")
	g := proctest.StartGroup(t, bin, dir, extra...)
	adm := admin.New(admin.Config{NamesrvAddrs: []string{g.Namesrv}, Timeout: 2 * time.Second, Credentials: creds})
	srv, err := New(Config{Admin: adm, Listen: "127.0.0.1:0", Credentials: creds, Namesrv: []string{g.Namesrv},
		ClusterEvery: 250 * time.Millisecond, TopicsEvery: 500 * time.Millisecond, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	tc := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("console Run: %v", err)
		}
		_ = tc.Close()
		_ = adm.Close()
	})
	return &fixture{Group: g, base: "http://" + addr, http: newHTTPClient(t), tc: tc, adm: adm}
}

func newHTTPClient(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

// do sends one API request and decodes the JSON answer into a map; it
// fails the test on a transport error or an answer that is not JSON.
func (f *fixture) do(t *testing.T, c *http.Client, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, f.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s %s: %d with Content-Type %q: %s", method, path, resp.StatusCode, ct, raw)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s %s: %d, not a JSON object: %v: %s", method, path, resp.StatusCode, err, raw)
	}
	return resp.StatusCode, doc
}

func (f *fixture) ok(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	return f.okAs(t, f.http, method, path, body)
}

func (f *fixture) okAs(t *testing.T, c *http.Client, method, path string, body any) map[string]any {
	t.Helper()
	code, doc := f.do(t, c, method, path, body)
	if code != http.StatusOK {
		t.Fatalf("%s %s: %d %v", method, path, code, doc)
	}
	return doc
}

// wantError checks an error answer: status, code and (when not "") field.
func (f *fixture) wantError(t *testing.T, c *http.Client, method, path string, body any, status int, code, field string) map[string]any {
	t.Helper()
	got, doc := f.do(t, c, method, path, body)
	if got != status || doc["code"] != code || (field != "" && doc["field"] != field) || doc["error"] == "" {
		t.Fatalf("%s %s: %d %v, want %d code=%s field=%s", method, path, got, doc, status, code, field)
	}
	if s, _ := doc["error"].(string); strings.Contains(s, "goroutine ") || strings.Contains(s, ".go:") {
		t.Fatalf("%s %s: error text looks like a stack trace: %s", method, path, s)
	}
	return doc
}

// eventually polls fn until it returns true.
func eventually(t *testing.T, d time.Duration, what string, fn func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !fn() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// nodes returns the cluster document's nodes of the first group, by node id
// (down nodes by address).
func nodesOf(doc map[string]any) (group map[string]any, nodes map[string]map[string]any) {
	nodes = map[string]map[string]any{}
	gs, _ := doc["groups"].([]any)
	if len(gs) == 0 {
		return nil, nodes
	}
	group = gs[0].(map[string]any)
	for _, n := range group["nodes"].([]any) {
		m := n.(map[string]any)
		key, _ := m["node"].(string)
		if key == "" {
			key = m["addr"].(string)
		}
		nodes[key] = m
	}
	return group, nodes
}

// waitLeader waits for one group with three answering nodes and a leader and
// returns the leader's id.
func (f *fixture) waitLeader(t *testing.T) string {
	t.Helper()
	return f.waitLeaderAs(t, f.http)
}

func (f *fixture) waitLeaderAs(t *testing.T, c *http.Client) string {
	t.Helper()
	var leader string
	eventually(t, 30*time.Second, "a leader and three answering nodes", func() bool {
		code, doc := f.do(t, c, "GET", "/api/v1/cluster", nil)
		if code != http.StatusOK {
			return false
		}
		g, nodes := nodesOf(doc)
		if g == nil || len(nodes) != 3 {
			return false
		}
		leaders := 0
		for id, n := range nodes {
			if n["up"] != true || n["leader"] != g["leader"] || n["commitIndex"].(float64) < 1 {
				return false
			}
			if n["role"] == "LEADER" {
				leaders++
				leader = id
			}
		}
		return leaders == 1 && g["leader"] == leader
	})
	return leader
}

// send stores one message with key at the node addr (signed with creds).
func (f *fixture) send(t *testing.T, addr, topic string, queue int, key, body string, creds sign.Credentials) string {
	t.Helper()
	props := "KEYS\x01" + key + "\x02TAGS\x01tagA\x02UNIQ_KEY\x01" + uniqKey(key) + "\x02WAIT\x01true\x02"
	ext := map[string]string{
		"producerGroup": "pg", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": strconv.Itoa(queue), "sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10),
		"flag": "0", "properties": props, "reconsumeTimes": "0", "unitMode": "false", "batch": "false",
	}
	body2 := []byte(body)
	req := transport.NewRequest(transport.SendMessage, creds.SignExt(ext, body2), body2)
	return f.invoke(t, addr, req).Field("msgId")
}

// uniqKey is a fixed 32-hex producer msgId derived from key.
func uniqKey(key string) string {
	return fmt.Sprintf("%032X", []byte(key + "................")[:16])
}

func (f *fixture) invoke(t *testing.T, addr string, req *transport.Command) *transport.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := f.tc.Invoke(ctx, addr, req)
	if err != nil || resp.ResponseCode() != transport.Success {
		t.Fatalf("%s to %s: %v %v", req.RequestCode(), addr, err, resp)
	}
	return resp
}

func (f *fixture) commitOffset(t *testing.T, addr, group, topic string, queue, off int, creds sign.Credentials) {
	t.Helper()
	ext := map[string]string{"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(queue), "commitOffset": strconv.Itoa(off)}
	f.invoke(t, addr, transport.NewRequest(transport.UpdateConsumerOffset, creds.SignExt(ext, nil), nil))
}

// sse reads events from the stream until stop returns true or d passes.
func (f *fixture) sse(t *testing.T, c *http.Client, d time.Duration, stop func(name string, data map[string]any) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.base+"/api/v1/events", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var data map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data); err != nil {
				t.Fatalf("event %s: data is not JSON: %v", name, err)
			}
			if stop(name, data) {
				return
			}
		}
	}
	t.Fatalf("event stream ended before the condition held (%v)", ctx.Err())
}

// heartbeat registers a consumer of group at addr, which creates the group.
func (f *fixture) heartbeat(t *testing.T, addr, group string, creds sign.Credentials) {
	t.Helper()
	body := []byte(fmt.Sprintf(`{"clientID":"console-test","producerDataSet":[],"consumerDataSet":[{"groupName":%q,"consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[],"unitMode":false}]}`, group))
	f.invoke(t, addr, transport.NewRequest(transport.HeartBeat, creds.SignExt(nil, body), body))
}
