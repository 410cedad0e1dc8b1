package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/transport"
)

// TestJoinBrandNewNode starts a fourth node with dLegerJoin=true next to a running
// group, adds it as a non-voter and then as a voter through the leader, and checks
// that it catches up (same applied index and CommitLog as the leader) without
// having bootstrapped a configuration of its own.
func TestJoinBrandNewNode(t *testing.T) {
	requireLong(t)
	c := startCluster(t)
	leader, err := c.waitLeader(30*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}
	p := newProducer(t, c)
	topic := unique(t, "J")
	sendBodies(t, p, topic, bodies("before", 50))

	ports, err := proctest.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	clientAddr, raftAddr := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	conf := joinerConf(t, c, ports[0], clientAddr, raftAddr, nil)
	n3 := newProc("n3", filepath.Join(c.dir, "logs", "n3.log"), "broker", "-c", conf)
	if err := n3.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n3.Stop(5 * time.Second) })
	if err := waitListening(clientAddr, 20*time.Second); err != nil {
		t.Fatalf("n3: %v\n%s", err, n3.Tail(20))
	}
	time.Sleep(3 * time.Second) // longer than an election timeout: a joining node must not elect itself
	// Not bootstrapped: an empty raft log (a bootstrapped node holds its own
	// configuration at index 1, which could clash with the group's).
	if info := runtimeInfo(t, c, clientAddr); info["lastIndex"] != "0" || info["role"] == "LEADER" {
		t.Fatalf("the joining node acted on its own: %v", info)
	}

	invoke := func(code transport.RequestCode, ext map[string]string) *transport.Command {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := c.tc.Invoke(ctx, c.clientAddrs[leader], transport.NewRequest(code, ext, nil))
		if err != nil {
			t.Fatalf("code %d: %v", code, err)
		}
		return resp
	}
	if r := invoke(transport.RaftAddNonvoter, map[string]string{"id": "n3", "address": raftAddr}); r.ResponseCode() != transport.Success {
		t.Fatalf("add-nonvoter: %d %s\n%s", r.Code, r.Remark, n3.Tail(20))
	}
	sendBodies(t, p, topic, bodies("after", 50))
	if r := invoke(transport.RaftAddVoter, map[string]string{"id": "n3", "address": raftAddr}); r.ResponseCode() != transport.Success {
		t.Fatalf("add-voter: %d %s", r.Code, r.Remark)
	}
	var peers struct {
		Servers []struct {
			ID       string `json:"id"`
			Suffrage string `json:"suffrage"`
		} `json:"servers"`
	}
	_ = json.Unmarshal(invoke(transport.RaftPeers, nil).Body, &peers)
	voter := false
	for _, s := range peers.Servers {
		if s.ID == "n3" && strings.EqualFold(s.Suffrage, "voter") {
			voter = true
		}
	}
	if !voter || len(peers.Servers) != 4 {
		t.Fatalf("configuration after add-voter: %+v", peers.Servers)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		li, ni := runtimeInfo(t, c, c.clientAddrs[leader]), runtimeInfo(t, c, clientAddr)
		if li["commitLogMaxOffset"] != "" && li["commitLogMaxOffset"] == ni["commitLogMaxOffset"] && ni["role"] == "FOLLOWER" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("n3 did not catch up: leader %v, n3 %v\n%s", li, ni, n3.Tail(30))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runtimeInfo asks a broker for GET_BROKER_RUNTIME_INFO (28) and returns its table.
func runtimeInfo(t *testing.T, c *cluster, addr string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.tc.Invoke(ctx, addr, transport.NewRequest(transport.GetBrokerRuntimeInfo, nil, nil))
	if err != nil {
		t.Fatalf("runtime info %s: %v", addr, err)
	}
	var kv struct {
		Table map[string]string `json:"table"`
	}
	if err := json.Unmarshal(resp.Body, &kv); err != nil {
		t.Fatalf("runtime info %s: %v", addr, err)
	}
	return kv.Table
}

// joinerConf writes the broker.conf of n3, a node joining c with dLegerJoin=true:
// n0's config with n3's client port, directory and id, n3 appended to the peers
// (raftAddr, clientAddr), and the keys in replace set to their values. It
// returns the file's path.
func joinerConf(t *testing.T, c *cluster, clientPort int, clientAddr, raftAddr string, replace map[string]string) string {
	t.Helper()
	base, err := os.ReadFile(filepath.Join(c.dir, "conf", "n0.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(base), "\n") {
		key, _, _ := strings.Cut(l, "=")
		switch v, ok := replace[key]; {
		case ok:
			l = key + "=" + v
		case key == "listenPort":
			l = fmt.Sprintf("listenPort=%d", clientPort)
		case key == "storePathRootDir":
			l = "storePathRootDir=" + filepath.Join(c.dir, "n3")
		case key == "dLegerPeers":
			l += ";n3-" + raftAddr
		case key == "dLegerPeerClientAddrs":
			l += ";n3-" + clientAddr
		case key == "dLegerSelfId":
			l = "dLegerSelfId=n3\ndLegerJoin=true"
		}
		lines = append(lines, l)
	}
	conf := filepath.Join(c.dir, "conf", "n3.conf")
	if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}
