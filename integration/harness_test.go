package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// envIntegration enables the long suite (failover, kill loops, timestamps).
const envIntegration = "ROCKETRAFT_INTEGRATION"

// envBinary names a prebuilt rocketraft binary to test instead of building one.
const envBinary = "ROCKETRAFT_BIN"

const (
	groupName   = "broker-a"
	clusterName = "ITCluster"
	groupSize   = 3
	// segmentSize keeps CommitLog files small so three nodes fit on a test machine.
	segmentSize = 8 << 20
)

// binPath is the rocketraft binary built once by TestMain; empty when the build failed.
var binPath string

// buildErr says why binPath is empty; every test that needs processes fails with it.
var buildErr error

var (
	sharedOnce    sync.Once
	sharedCluster *cluster
	sharedErr     error
)

func TestMain(m *testing.M) {
	rlog.SetLogLevel("error")
	tmp, err := os.MkdirTemp("", "rocketraft-it-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: temp dir:", err)
		os.Exit(2)
	}
	if prebuilt := os.Getenv(envBinary); prebuilt != "" {
		binPath, buildErr = filepath.Abs(prebuilt)
	} else {
		binPath, buildErr = buildBinary(tmp)
	}
	code := m.Run()
	if sharedCluster != nil {
		sharedCluster.stopAll()
	}
	_ = os.RemoveAll(tmp)
	os.Exit(code)
}

// buildBinary compiles cmd/rocketraft from the repository root (the parent of this
// package's directory, where go test runs us).
func buildBinary(dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go tool not in PATH: %w", err)
	}
	out := filepath.Join(dir, "rocketraft")
	cmd := exec.Command(goTool, "build", "-o", out, "./cmd/rocketraft")
	cmd.Dir = ".."
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/rocketraft: %w\n%s", err, buf.String())
	}
	return out, nil
}

// requireLong skips a test unless the long integration suite was asked for.
func requireLong(t *testing.T) {
	t.Helper()
	if os.Getenv(envIntegration) == "" {
		t.Skipf("long integration test: set %s=1 (make integration) to run it", envIntegration)
	}
}

// proc is one rocketraft process (nameserver or broker node) with its own log file.
type proc struct {
	name    string
	args    []string
	logPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the current incarnation exited
}

func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		select {
		case <-p.done:
		default:
			return fmt.Errorf("%s: already running (pid %d)", p.name, p.cmd.Process.Pid)
		}
	}
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "=== harness: start %s at %s\n", p.name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(binPath, p.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = logf.Close()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	return nil
}

// stop sends SIGTERM and waits up to grace for a clean exit, then SIGKILLs.
// It reports whether the process exited on its own within grace.
func (p *proc) stop(grace time.Duration) bool {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return true
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return true
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
		return false
	}
}

// kill sends SIGKILL (kill -9) and waits until the process is gone.
func (p *proc) kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// tail returns the last n lines of the process log.
func (p *proc) tail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// cluster is a nameserver plus one three-node raft group "broker-a", all separate
// processes on loopback ports.
type cluster struct {
	dir         string
	nsAddr      string
	ns          *proc
	nodes       []*proc  // node i is dLegerSelfId n<i>
	clientAddrs []string // client address of node i
	nsClient    *nameserver.Client
	tc          *transport.Client
}

// freePorts reserves n distinct loopback ports by listening on port 0. The ports are
// released before the processes bind them; collisions are unlikely on loopback.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// newCluster writes the configs of a fresh cluster under dir and starts every process.
func newCluster(dir string) (*cluster, error) {
	if buildErr != nil {
		return nil, buildErr
	}
	ports, err := freePorts(1 + 2*groupSize)
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir, nsAddr: fmt.Sprintf("127.0.0.1:%d", ports[0])}
	confDir := filepath.Join(dir, "conf")
	logDir := filepath.Join(dir, "logs")
	for _, d := range []string{confDir, logDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	nsConf := filepath.Join(confDir, "namesrv.conf")
	nsText := fmt.Sprintf("listenAddr=127.0.0.1\nlistenPort=%d\nadminListen=\nlogLevel=debug\n", ports[0])
	if err := os.WriteFile(nsConf, []byte(nsText), 0o644); err != nil {
		return nil, err
	}
	c.ns = &proc{name: "namesrv", args: []string{"namesrv", "-c", nsConf}, logPath: filepath.Join(logDir, "namesrv.log")}

	var peers, clients []string
	for i := range groupSize {
		clientPort, raftPort := ports[1+i], ports[1+groupSize+i]
		addr := fmt.Sprintf("127.0.0.1:%d", clientPort)
		c.clientAddrs = append(c.clientAddrs, addr)
		peers = append(peers, fmt.Sprintf("n%d-127.0.0.1:%d", i, raftPort))
		clients = append(clients, fmt.Sprintf("n%d-%s", i, addr))
	}
	for i := range groupSize {
		conf := strings.Join([]string{
			"brokerClusterName=" + clusterName,
			"brokerName=" + groupName,
			"brokerIP1=127.0.0.1",
			fmt.Sprintf("listenPort=%d", ports[1+i]),
			"namesrvAddr=" + c.nsAddr,
			"storePathRootDir=" + filepath.Join(dir, fmt.Sprintf("n%d", i)),
			"dLegerGroup=" + groupName,
			"dLegerPeers=" + strings.Join(peers, ";"),
			"dLegerPeerClientAddrs=" + strings.Join(clients, ";"),
			fmt.Sprintf("dLegerSelfId=n%d", i),
			fmt.Sprintf("mappedFileSizeCommitLog=%d", segmentSize),
			"autoCreateTopicEnable=true",
			"defaultTopicQueueNums=4",
			"adminListen=",
			// Small IndexFiles: they are allocated whole (fallocate) at creation.
			"maxHashSlotNum=50000", "maxIndexNum=200000",
			"logLevel=debug",
			"",
		}, "\n")
		path := filepath.Join(confDir, fmt.Sprintf("n%d.conf", i))
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			return nil, err
		}
		c.nodes = append(c.nodes, &proc{
			name:    fmt.Sprintf("n%d", i),
			args:    []string{"broker", "-c", path},
			logPath: filepath.Join(logDir, fmt.Sprintf("n%d.log", i)),
		})
	}
	c.tc = transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	c.nsClient = nameserver.NewClient(c.tc)

	if err := c.ns.start(); err != nil {
		return nil, err
	}
	if err := waitListening(c.nsAddr, 10*time.Second); err != nil {
		c.stopAll()
		return nil, fmt.Errorf("nameserver: %w\n%s", err, c.ns.tail(20))
	}
	for _, n := range c.nodes {
		if err := n.start(); err != nil {
			c.stopAll()
			return nil, err
		}
	}
	return c, nil
}

func waitListening(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not listening after %v: %w", addr, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startCluster starts a private cluster for one test, registers its cleanup and
// waits for a leader with all three nodes listed.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	c, err := newCluster(t.TempDir())
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			c.dumpLogs(t)
		}
		c.stopAll()
	})
	if _, err := c.waitLeader(30*time.Second, "", groupSize); err != nil {
		t.Fatalf("cluster never elected a leader: %v", err)
	}
	return c
}

// shared returns the cluster shared by the short tests, starting it on first use.
func shared(t *testing.T) *cluster {
	t.Helper()
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rocketraft-it-shared-")
		if err != nil {
			sharedErr = err
			return
		}
		c, err := newCluster(dir)
		if err != nil {
			sharedErr = err
			return
		}
		sharedCluster = c
		if _, err := c.waitLeader(30*time.Second, "", groupSize); err != nil {
			sharedErr = fmt.Errorf("no leader: %w", err)
		}
	})
	if sharedErr != nil {
		if sharedCluster != nil {
			sharedCluster.dumpLogs(t)
		}
		t.Fatalf("shared cluster: %v", sharedErr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			sharedCluster.dumpLogs(t)
		}
	})
	return sharedCluster
}

func (c *cluster) stopAll() {
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); n.stop(10 * time.Second) }()
	}
	wg.Wait()
	c.ns.stop(5 * time.Second)
	_ = c.tc.Close()
	if strings.Contains(filepath.Base(c.dir), "rocketraft-it-shared-") {
		_ = os.RemoveAll(c.dir)
	}
}

func (c *cluster) dumpLogs(t *testing.T) {
	t.Helper()
	for _, p := range append([]*proc{c.ns}, c.nodes...) {
		t.Logf("---- tail of %s log (%s) ----\n%s", p.name, p.logPath, p.tail(60))
	}
}

// brokerAddrs asks the nameserver for the group's brokerAddrs (id → client address).
func (c *cluster) brokerAddrs() (map[int64]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ci, err := c.nsClient.GetClusterInfo(ctx, c.nsAddr)
	if err != nil {
		return nil, err
	}
	bd, ok := ci.BrokerAddrTable[groupName]
	if !ok {
		return map[int64]string{}, nil
	}
	out := make(map[int64]string, len(bd.BrokerAddrs))
	for id, addr := range bd.BrokerAddrs {
		out[int64(id)] = addr
	}
	return out, nil
}

var errNoLeader = errors.New("no leader listed")

// waitLeader polls the nameserver until brokerAddrs[0] is listed, differs from notAddr
// and at least minNodes addresses are listed. It returns the leader's node index.
func (c *cluster) waitLeader(timeout time.Duration, notAddr string, minNodes int) (int, error) {
	deadline := time.Now().Add(timeout)
	var last map[int64]string
	var lastErr error
	for time.Now().Before(deadline) {
		addrs, err := c.brokerAddrs()
		lastErr = err
		if err == nil {
			last = addrs
			if leader, ok := addrs[0]; ok && leader != notAddr && len(addrs) >= minNodes {
				if i := c.nodeIndex(leader); i >= 0 {
					return i, nil
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return -1, fmt.Errorf("%w after %v (last brokerAddrs %v, last error %v)", errNoLeader, timeout, last, lastErr)
}

func (c *cluster) nodeIndex(addr string) int {
	for i, a := range c.clientAddrs {
		if a == addr {
			return i
		}
	}
	return -1
}
