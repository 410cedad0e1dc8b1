package integration

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/devcert"
)

// TestRaftPortRefusesACertificateNamingNoPeer: with raftTlsEnable a group of real
// processes replicates over mutual TLS with certificates naming their raft host
// (127.0.0.1), while a certificate of the same CA that names another host (an
// application's client certificate) is refused at n0's raft port, and n0 logs why.
func TestRaftPortRefusesACertificateNamingNoPeer(t *testing.T) {
	caFile, issue := groupCA(t)
	nodeCert, nodeKey := issue("node", []string{"127.0.0.1", "localhost"})
	appCert, appKey := issue("app", []string{"app.example"})

	c := startClusterWith(t, "127.0.0.1", []string{"raftTlsEnable=true",
		"tlsServerCertPath=" + nodeCert, "tlsServerKeyPath=" + nodeKey, "tlsServerTrustCertPath=" + caFile})
	out, err := exec.Command(binPath, "bench", "produce", "--namesrv", c.nsAddr, "--topic", "RaftTLS",
		"--count", "200", "--producers", "2").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "summary: 200 ok, 0 failed") {
		t.Fatalf("sends to a group replicating over raft TLS: %v\n%s", err, out)
	}

	sl, err := transport.NewTLSStreamLayer("127.0.0.1:0", nil, transport.StreamTLS{CertFile: appCert, KeyFile: appKey, CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	tr := raft.NewNetworkTransport(sl, 1, 2*time.Second, io.Discard)
	defer tr.Close()
	var resp raft.RequestVoteResponse
	target := raftAddr(t, c, 0)
	// A well-formed request with a stale term: a node that let it through
	// would answer it (not granted, no error) and nothing in the group changes.
	req := &raft.RequestVoteRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax,
		ID: []byte("intruder"), Addr: []byte(sl.Addr().String())}, Term: 0}
	if err := tr.RequestVote("intruder", raft.ServerAddress(target), req, &resp); err == nil {
		t.Fatalf("RequestVote to n0 (%s) with a certificate naming app.example succeeded: %+v", target, resp)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(c.nodes[0].Tail(50), "none of the group's raft peers") {
		if time.Now().After(deadline) {
			t.Fatalf("n0 did not log the refused certificate:\n%s", c.nodes[0].Tail(30))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := c.waitLeader(10*time.Second, "", groupSize); err != nil {
		t.Fatalf("the group after the refused dial: %v", err)
	}
}

// raftAddr is node i's raft address, from its broker.conf (dLegerPeers).
func raftAddr(t *testing.T, c *cluster, i int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, "conf", fmt.Sprintf("n%d.conf", i)))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(line, "dLegerPeers=")
		if !ok {
			continue
		}
		for _, p := range strings.Split(v, ";") {
			if id, addr, ok := strings.Cut(p, "-"); ok && id == fmt.Sprintf("n%d", i) {
				return addr
			}
		}
	}
	t.Fatalf("n%d.conf has no dLegerPeers entry for n%d:\n%s", i, i, b)
	return ""
}

// TestRaftTLSAcceptsANodeAddedLater: a fourth node on another host (127.0.0.2,
// its certificate naming only that address) joins a group running raft TLS
// whose broker.conf files do not list it, becomes a voter and then the leader.
// The first three accept its connections because it is in the group's raft
// configuration; with only dLegerPeers they would refuse the new leader.
func TestRaftTLSAcceptsANodeAddedLater(t *testing.T) {
	caFile, issue := groupCA(t)
	nodeCert, nodeKey := issue("node", []string{"127.0.0.1"})
	n3Cert, n3Key := issue("n3", []string{"127.0.0.2"})
	c := startClusterWith(t, "127.0.0.1", []string{"raftTlsEnable=true",
		"tlsServerCertPath=" + nodeCert, "tlsServerKeyPath=" + nodeKey, "tlsServerTrustCertPath=" + caFile})
	leader, err := c.waitLeader(30*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}

	ports, err := proctest.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	clientAddr, raftAddr := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.2:%d", ports[1])
	conf := joinerConf(t, c, ports[0], clientAddr, raftAddr, map[string]string{"tlsServerCertPath": n3Cert, "tlsServerKeyPath": n3Key})
	n3 := newProc("n3", filepath.Join(c.dir, "logs", "n3.log"), "broker", "-c", conf)
	if err := n3.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("n3 log:\n%s", n3.Tail(40))
		}
		n3.Stop(5 * time.Second)
	})
	if err := waitListening(clientAddr, 20*time.Second); err != nil {
		t.Fatalf("n3: %v\n%s", err, n3.Tail(20))
	}
	invoke := func(addr string, code transport.RequestCode, ext map[string]string) *transport.Command {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := c.tc.Invoke(ctx, addr, transport.NewRequest(code, ext, nil))
		if err != nil {
			t.Fatalf("code %d to %s: %v", code, addr, err)
		}
		return resp
	}
	for _, code := range []transport.RequestCode{transport.RaftAddNonvoter, transport.RaftAddVoter} {
		if r := invoke(c.clientAddrs[leader], code, map[string]string{"id": "n3", "address": raftAddr}); r.ResponseCode() != transport.Success {
			t.Fatalf("code %d: %s %s", code, r.ResponseCode(), r.Remark)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for runtimeInfo(t, c, clientAddr)["role"] != "LEADER" {
		if time.Now().After(deadline) {
			t.Fatalf("n3 did not become the leader: %v", runtimeInfo(t, c, clientAddr))
		}
		if r := invoke(c.clientAddrs[leader], transport.RaftTransferLeader, map[string]string{"id": "n3"}); r.ResponseCode() != transport.Success {
			t.Logf("transfer-leader to n3: %s %s", r.ResponseCode(), r.Remark)
		}
		time.Sleep(2 * time.Second)
		if l, err := c.waitLeader(10*time.Second, "", 1); err == nil {
			leader = l
		}
	}
	// n3 leads: its appends reach the others, which accepted its certificate.
	out, err := exec.Command(binPath, "bench", "produce", "--namesrv", c.nsAddr, "--topic", "RaftTLSJoin",
		"--count", "200", "--producers", "2").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "summary: 200 ok, 0 failed") {
		t.Fatalf("sends with n3 leading: %v\n%s", err, out)
	}
}

// groupCA makes a CA for a test group, writes its certificate and returns the
// file with a function that issues and writes a pair for hosts (cert, key).
func groupCA(t *testing.T) (caFile string, issue func(name string, hosts []string) (string, string)) {
	t.Helper()
	dir := t.TempDir()
	ca, err := devcert.NewCA("group CA", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	issue = func(name string, hosts []string) (string, string) {
		t.Helper()
		certPEM, keyPEM, err := ca.Issue(name, hosts, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".pem", certPEM), write(name+".key", keyPEM)
	}
	return write("ca.pem", ca.CertPEM()), issue
}

// TestRaftTLSRollingMigration moves a running group of real processes from a
// plaintext raft port to TLS without a full stop: every node restarted with
// raftTlsMode=permissive, one at a time, then every node with enforcing. Sends
// are acknowledged after every restart, and at the end a plaintext raft peer is
// refused by every node.
func TestRaftTLSRollingMigration(t *testing.T) {
	caFile, issue := groupCA(t)
	cert, key := issue("node", []string{"127.0.0.1"})
	c := startCluster(t)
	step := 0
	produce := func(what string) {
		t.Helper()
		step++
		out, err := exec.Command(binPath, "bench", "produce", "--namesrv", c.nsAddr, "--topic", "RaftTLSMigration",
			"--count", "200", "--producers", "2").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "summary: 200 ok, 0 failed") {
			t.Fatalf("sends after %s: %v\n%s", what, err, out)
		}
	}
	produce("the start, in plaintext")
	for _, mode := range []string{"permissive", "enforcing"} {
		for i, n := range c.nodes {
			setConf(t, filepath.Join(c.dir, "conf", fmt.Sprintf("n%d.conf", i)), map[string]string{
				"raftTlsEnable": "true", "raftTlsMode": mode,
				"tlsServerCertPath": cert, "tlsServerKeyPath": key, "tlsServerTrustCertPath": caFile,
			})
			if !n.Stop(15 * time.Second) {
				t.Fatalf("n%d did not stop on SIGTERM", i)
			}
			if err := n.Start(); err != nil {
				t.Fatal(err)
			}
			waitInStep(t, c)
			produce(fmt.Sprintf("n%d's restart with raftTlsMode=%s", i, mode))
		}
	}
	tr := raft.NewNetworkTransport(mustTCPStreamLayer(t), 1, 2*time.Second, io.Discard)
	defer tr.Close()
	for i := range c.nodes {
		var resp raft.RequestVoteResponse
		req := &raft.RequestVoteRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("plain"), Addr: []byte("127.0.0.1:1")}}
		if err := tr.RequestVote("plain", raft.ServerAddress(raftAddr(t, c, i)), req, &resp); err == nil {
			t.Errorf("n%d answered a plaintext raft peer after the migration: %+v", i, resp)
		}
	}
}

// setConf sets keys in a broker.conf, replacing their lines or appending them.
func setConf(t *testing.T, path string, keys map[string]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]bool{}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		k, _, _ := strings.Cut(l, "=")
		if v, ok := keys[k]; ok {
			l, done[k] = k+"="+v, true
		}
		lines = append(lines, l)
	}
	for k, v := range keys {
		if !done[k] {
			lines = append(lines, k+"="+v)
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mustTCPStreamLayer is a plaintext raft stream layer on a loopback port.
func mustTCPStreamLayer(t *testing.T) *transport.StreamLayer {
	t.Helper()
	sl, err := transport.NewTCPStreamLayer("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	return sl
}
