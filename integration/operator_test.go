package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/sign"
)

// TestBadBrokerConfigFailsStartup: a broker.conf with several mistakes stops the
// binary at once with one message that names every key, value and rule.
func TestBadBrokerConfigFailsStartup(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	conf := filepath.Join(t.TempDir(), "broker.conf")
	text := "brokerName=broker-a\nlistenPort=70000\nflushDiskType=SOMETIMES\nbrokerNmae=typo\ndLegerPeers=n0-127.0.0.1:40911\ndLegerSelfId=n9\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binPath, "broker", "-c", conf).CombinedOutput()
	if err == nil {
		t.Fatalf("broker started with a bad config:\n%s", out)
	}
	for _, want := range []string{`listenPort="70000"`, `flushDiskType="SOMETIMES"`, "brokerNmae", "unknown key", "dLegerSelfId", "n9"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("start-up error lacks %q:\n%s", want, out)
		}
	}
}

// devRun is a `rocketraft dev` process on free ports and what it printed.
type devRun struct {
	t   *testing.T
	dir string // --data-dir: configs, logs and data
	out *proctest.SyncBuffer
}

// startDev runs `rocketraft dev` (what `make run` runs) with extra flags on free
// ports, waits until it printed its example commands, and stops it (Ctrl-C)
// when the test ends.
func startDev(t *testing.T, extra ...string) *devRun {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	// Node i uses base+10*i (+2 for its admin HTTP), the nameserver port +2 too.
	ports, err := proctest.FreePortGroups(3, 22)
	if err != nil {
		t.Fatal(err)
	}
	nsPort, brokerBase, raftBase := ports[0], ports[1], ports[2]
	dir := filepath.Join(t.TempDir(), "dev")
	args := append([]string{"dev", "--data-dir", dir,
		"--namesrv-port", fmt.Sprint(nsPort), "--broker-port", fmt.Sprint(brokerBase), "--raft-port", fmt.Sprint(raftBase)}, extra...)
	d := &devRun{t: t, dir: dir, out: &proctest.SyncBuffer{}}
	dev := exec.Command(binPath, args...)
	dev.Stdout, dev.Stderr = d.out, d.out
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			d.logTails()
		}
		_ = dev.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = dev.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = dev.Process.Kill()
			t.Error("dev did not stop on Ctrl-C within 20 s")
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(d.out.String(), "bench consume") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	return d
}

// logTails logs the last lines of every process log dev wrote, so a failure
// that a child process caused (it exited, it refused a request) explains itself.
func (d *devRun) logTails() {
	logs, _ := filepath.Glob(filepath.Join(d.dir, "logs", "*"))
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		d.t.Logf("--- %s (last %d lines) ---\n%s", filepath.Base(f), min(len(lines), 30), strings.Join(lines[max(0, len(lines)-30):], "\n"))
	}
}

// example returns the printed command line of `rocketraft <words...>`: the
// environment assignments before the binary, and its arguments.
func (d *devRun) example(words ...string) (env, args []string) {
	for _, line := range strings.Split(d.out.String(), "\n") {
		f := strings.Fields(line)
		for i, w := range f {
			if !strings.HasSuffix(w, "rocketraft") || len(f) < i+1+len(words) {
				continue
			}
			if strings.Join(f[i+1:i+1+len(words)], " ") == strings.Join(words, " ") {
				return f[:i], f[i+1:]
			}
		}
	}
	d.t.Fatalf("dev printed no %q example:\n%s", strings.Join(words, " "), d.out.String())
	return nil, nil
}

// run runs the binary with args and env (retrying while the group elects and
// registers when retry is set) and returns its output and error.
func (d *devRun) run(env, args []string, retry bool) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var res []byte
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		cmd := exec.CommandContext(ctx, binPath, args...)
		cmd.Env = append(os.Environ(), env...)
		res, err = cmd.CombinedOutput()
		if err == nil || !retry {
			break
		}
		time.Sleep(time.Second)
	}
	return string(res), err
}

// mustRun is run that fails the test on an error.
func (d *devRun) mustRun(env, args []string) string {
	d.t.Helper()
	out, err := d.run(env, args, true)
	if err != nil {
		d.t.Fatalf("%v %v: %v\n%s\n--- dev output ---\n%s", env, args, err, out, d.out.String())
	}
	return out
}

// TestDevClusterPrintedExample runs `rocketraft dev` on free ports and then the
// produce and consume commands it prints, as a newcomer would.
func TestDevClusterPrintedExample(t *testing.T) {
	d := startDev(t)
	env, produce := d.example("bench", "produce")
	_, consume := d.example("bench", "consume")
	if got := d.mustRun(env, produce); !strings.Contains(got, "summary: 1000 ok, 0 failed") {
		t.Fatalf("produce example:\n%s", got)
	}
	if got := d.mustRun(env, consume); !strings.Contains(got, "summary: 1000 ok") {
		t.Fatalf("consume example:\n%s", got)
	}
}

// TestDevClusterWithACL: `rocketraft dev --acl` prints its accounts and signed
// examples that work; the same commands unsigned, or an admin code with the
// client's account, are refused by real broker processes.
func TestDevClusterWithACL(t *testing.T) {
	d := startDev(t, "--acl")
	clientEnv, produce := d.example("bench", "produce")
	adminEnv, _ := d.example("admin", "cluster")
	if len(clientEnv) != 2 || len(adminEnv) != 2 {
		t.Fatalf("examples carry no credentials: %v %v\n%s", clientEnv, adminEnv, d.out.String())
	}
	if got := d.mustRun(clientEnv, produce); !strings.Contains(got, "summary: 1000 ok, 0 failed") {
		t.Fatalf("signed produce:\n%s", got)
	}
	unsigned := append(append([]string{}, produce[:len(produce)-1]...), "10")
	if got, _ := d.run(nil, unsigned, false); !strings.Contains(got, "summary: 0 ok, 10 failed") {
		t.Fatalf("unsigned produce was not refused:\n%s", got)
	}
	ns := produce[3] // bench produce --namesrv <addr>
	create := []string{"admin", "topic", "create", "AclMade", "--namesrv", ns}
	if got, err := d.run(clientEnv, create, false); err == nil || !strings.Contains(got, "NO_PERMISSION") {
		t.Fatalf("client account created a topic (err=%v):\n%s", err, got)
	}
	d.mustRun(adminEnv, create)
	if got := d.mustRun(adminEnv, []string{"admin", "topic", "list", "--namesrv", ns}); !strings.Contains(got, "AclMade") {
		t.Fatalf("admin-created topic not listed:\n%s", got)
	}
	secrets := []string{strings.TrimPrefix(clientEnv[1], "ROCKETRAFT_SECRET_KEY="), strings.TrimPrefix(adminEnv[1], "ROCKETRAFT_SECRET_KEY=")}
	secrets = append(secrets, forgeRegistration(t, d, ns, adminEnv)...)
	d.noSecretsInMetricsOrAdmin(adminEnv, ns, secrets)
	for _, secret := range secrets {
		logs, err := filepath.Glob(filepath.Join(d.dir, "logs", "*.log"))
		if err != nil || len(logs) == 0 {
			t.Fatalf("no logs to check: %v", err)
		}
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			if strings.Contains(string(data), secret) {
				t.Errorf("%s contains a secret key", l)
			}
		}
	}
}

// noSecretsInMetricsOrAdmin scrapes every node's /metrics that dev printed and
// runs `admin acl list` and `admin cluster`, and fails if any secret appears.
func (d *devRun) noSecretsInMetricsOrAdmin(adminEnv []string, ns string, secrets []string) {
	d.t.Helper()
	var pages []string
	for _, f := range strings.Fields(d.out.String()) {
		if strings.HasPrefix(f, "http://") && strings.HasSuffix(f, "/metrics") {
			resp, err := http.Get(f)
			if err != nil {
				d.t.Fatalf("scrape %s: %v", f, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			pages = append(pages, f+"\n"+string(body))
		}
	}
	if len(pages) == 0 {
		d.t.Fatalf("dev printed no metrics URL:\n%s", d.out.String())
	}
	for _, args := range [][]string{{"admin", "acl", "list", "--namesrv", ns}, {"admin", "cluster", "--namesrv", ns}} {
		pages = append(pages, strings.Join(args, " ")+"\n"+d.mustRun(adminEnv, args))
	}
	for _, p := range pages {
		for _, secret := range secrets {
			if strings.Contains(p, secret) {
				d.t.Errorf("a secret appears in %s", strings.SplitN(p, "\n", 2)[0])
			}
		}
	}
}

// TestDevClusterWithACLAndTLS: with ACL and TLS both on, the printed examples
// work — bench produce (native client, signed, TLS verified against the dev CA)
// and bench consume (the official Go client with WithCredentials and WithTls).
func TestDevClusterWithACLAndTLS(t *testing.T) {
	d := startDev(t, "--acl", "--tls")
	env, produce := d.example("bench", "produce")
	_, consume := d.example("bench", "consume")
	if len(env) != 2 || !strings.Contains(strings.Join(consume, " "), "--tls") {
		t.Fatalf("examples lack credentials or TLS: %v %v\n%s", env, consume, d.out.String())
	}
	if got := d.mustRun(env, produce); !strings.Contains(got, "summary: 1000 ok, 0 failed") {
		t.Fatalf("signed TLS produce:\n%s", got)
	}
	if got := d.mustRun(env, consume); !strings.Contains(got, "summary: 1000 ok") {
		t.Fatalf("Go client consume with credentials and TLS:\n%s", got)
	}
}

// TestDevClusterWithTLS: `rocketraft dev --tls` prints examples that reach its
// enforcing ports (bench produce and admin verifying the servers against the
// dev CA, bench consume with the Go client's unverified TLS); the same produce
// without --tls is refused.
func TestDevClusterWithTLS(t *testing.T) {
	d := startDev(t, "--tls")
	env, produce := d.example("bench", "produce")
	_, consume := d.example("bench", "consume")
	_, cluster := d.example("admin", "cluster")
	for _, ex := range [][]string{produce, cluster} {
		if !strings.Contains(strings.Join(ex, " "), "--tls --tls-ca "+filepath.Join(d.dir, "tls", "ca.pem")) {
			t.Fatalf("example %v does not verify against the dev CA:\n%s", ex, d.out.String())
		}
	}
	if got := d.mustRun(env, produce); !strings.Contains(got, "summary: 1000 ok, 0 failed") {
		t.Fatalf("TLS produce example:\n%s", got)
	}
	if got := d.mustRun(env, consume); !strings.Contains(got, "summary: 1000 ok") {
		t.Fatalf("TLS consume example:\n%s", got)
	}
	if got := d.mustRun(env, cluster); !strings.Contains(got, "LEADER") {
		t.Fatalf("TLS admin cluster example:\n%s", got)
	}
	var plain []string
	for i := 0; i < len(produce); i++ {
		switch produce[i] {
		case "--tls":
			continue
		case "--tls-ca":
			i++
			continue
		}
		plain = append(plain, produce[i])
	}
	plain[len(plain)-1] = "10" // --count
	if got, err := d.run(env, plain, false); err == nil || strings.Contains(got, "summary: 10 ok") {
		t.Fatalf("plaintext produce against tlsMode=enforcing was not refused (err=%v):\n%s", err, got)
	}

	// The raft ports run mutual TLS: a plaintext peer is refused at the
	// handshake, and the node logs who and why.
	var raftAddr string
	for _, f := range strings.Fields(d.out.String()) {
		if raftAddr == "" && strings.HasPrefix(f, "127.0.0.1:") && strings.Contains(d.out.String(), "raft "+f) {
			raftAddr = f
		}
	}
	conn, err := net.DialTimeout("tcp", raftAddr, 2*time.Second)
	if err != nil {
		t.Fatalf("dial raft port %q: %v", raftAddr, err)
	}
	defer conn.Close()
	// rpcAppendEntries, then the start of a msgpack map: what a plain raft peer sends first.
	_, _ = conn.Write(append([]byte{0, 0x83, 0xa4}, "Term"...))
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := conn.Read(make([]byte, 64)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("raft port did not close a plaintext peer: read %d bytes, %v", n, err)
	}
	refusal := "remote=" + conn.LocalAddr().String()
	logged := func() bool {
		logs, _ := filepath.Glob(filepath.Join(d.dir, "logs", "broker-*.log"))
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			for _, line := range strings.Split(string(data), "\n") {
				if strings.Contains(line, "raft peer refused") && strings.Contains(line, refusal) {
					return true
				}
			}
		}
		return false
	}
	for deadline := time.Now().Add(5 * time.Second); !logged(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no broker logged the refused raft peer %s (raft port %s)", conn.LocalAddr(), raftAddr)
		}
	}
}

// forgeRegistration: the dev --acl brokers registered with their group's
// secret (the signed examples found routes), and a REGISTER_BROKER forged with
// our own client as brokerId 0 of broker-a — unsigned, signed with a guessed
// group secret, or with the admin account — is refused, and the route still
// names the real leader; an unsigned DELETE_TOPIC_IN_NAMESRV is refused too.
// It returns the group secrets dev wrote, for the log check.
func forgeRegistration(t *testing.T, d *devRun, ns string, adminEnv []string) []string {
	t.Helper()
	auth, err := os.ReadFile(filepath.Join(d.dir, "conf", "broker_auth.yml"))
	if err != nil {
		t.Fatalf("dev --acl wrote no brokerAuthFile: %v", err)
	}
	var groupSecrets []string
	for _, line := range strings.Split(string(auth), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "secret: "); ok {
			groupSecrets = append(groupSecrets, v)
		}
	}
	if len(groupSecrets) == 0 {
		t.Fatalf("no secrets in broker_auth.yml")
	}
	tc := transport.NewClient(transport.ClientConfig{DialTimeout: 2 * time.Second})
	defer tc.Close()
	nc := nameserver.NewClient(tc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	leaderOf := func() string {
		t.Helper()
		route, err := nc.GetRoute(ctx, ns, "TopicTest")
		if err != nil {
			t.Fatalf("route of TopicTest: %v", err)
		}
		for _, bd := range route.BrokerDatas {
			if bd.BrokerName == "broker-a" {
				return bd.BrokerAddrs[nameserver.MasterID]
			}
		}
		return ""
	}
	leader := leaderOf()
	if leader == "" {
		t.Fatalf("no broker-a leader in the route of TopicTest")
	}
	forged := nameserver.RegisterRequest{
		ClusterName: "DefaultCluster", BrokerName: "broker-a", BrokerAddr: "127.0.0.1:1", HAServerAddr: "127.0.0.1:1",
		BrokerID: nameserver.MasterID,
		Topics: map[string]nameserver.TopicConfig{"TopicTest": {TopicName: "TopicTest", ReadQueueNums: 8, WriteQueueNums: 8,
			Perm: nameserver.PermRead | nameserver.PermWrite}},
		// A term no real leader has reached: without authentication it wins.
		DataVersion: nameserver.DataVersion{StateVersion: 1 << 40},
	}
	admin := sign.Credentials{AccessKey: strings.TrimPrefix(adminEnv[0], "ROCKETRAFT_ACCESS_KEY="),
		SecretKey: strings.TrimPrefix(adminEnv[1], "ROCKETRAFT_SECRET_KEY=")}
	for name, c := range map[string]*nameserver.Client{
		"unsigned":       nc,
		"guessed secret": nc.WithCredentials(nameserver.BrokerCredentials("broker-a", "guessed-group-secret-0")),
		"admin account":  nc.WithCredentials(admin),
	} {
		_, err := c.RegisterBroker(ctx, ns, forged)
		if !errors.Is(err, nameserver.ErrResponse) || !strings.Contains(err.Error(), "NO_PERMISSION") {
			t.Fatalf("%s forged registration: err = %v, want NO_PERMISSION", name, err)
		}
		if got := leaderOf(); got != leader {
			t.Fatalf("%s forged registration moved broker-a's id 0 from %s to %s", name, leader, got)
		}
	}
	if err := nc.DeleteTopic(ctx, ns, "TopicTest", ""); err == nil || !strings.Contains(err.Error(), "NO_PERMISSION") {
		t.Fatalf("unsigned DELETE_TOPIC_IN_NAMESRV: err = %v, want NO_PERMISSION", err)
	}
	if got := leaderOf(); got != leader {
		t.Fatalf("route changed after refused writes: %s, want %s", got, leader)
	}
	return groupSecrets
}
