package proctest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shProc is a Proc running script under /bin/sh instead of rocketraft.
func shProc(t *testing.T, script string) *Proc {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("no sh: %v", err)
	}
	p := &Proc{Name: "sh", Bin: sh, Args: []string{"-c", script}, LogPath: filepath.Join(t.TempDir(), "sh.log")}
	t.Cleanup(p.Kill)
	return p
}

// waitLog waits until the log holds s n times: a process signalled before it ran
// its first command would leave nothing to check.
func waitLog(t *testing.T, p *Proc, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(p.Tail(100), s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("log never held %q %d times:\n%s", s, n, p.Tail(100))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProcRestartAppendsToOneLog(t *testing.T) {
	p := shProc(t, "echo hello; exec sleep 60")
	if p.Running() || p.Pid() != 0 {
		t.Fatal("a Proc never started reports running or a pid")
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("Exited of a Proc never started is not closed")
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	waitLog(t, p, "hello", 1)
	first := p.Pid()
	if err := p.Start(); !errors.Is(err, ErrRunning) {
		t.Fatalf("second Start while running: %v, want ErrRunning", err)
	}
	p.Kill()
	if p.Running() || p.ExitErr() == nil {
		t.Fatalf("after Kill: running %v, exit error %v", p.Running(), p.ExitErr())
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if p.Pid() == first {
		t.Fatal("restart kept the old pid")
	}
	waitLog(t, p, "hello", 2)
	if !p.Stop(10 * time.Second) {
		t.Fatal("sleep did not exit on SIGTERM")
	}
	log := p.Tail(10)
	if strings.Count(log, "=== proctest: start sh") != 2 || strings.Count(log, "hello") != 2 {
		t.Fatalf("log does not hold both incarnations:\n%s", log)
	}
	if !p.LogContains("hello") || p.LogContains("absent") {
		t.Fatal("LogContains disagrees with the log")
	}
	if got := p.Tail(1); strings.Contains(got, "\n") {
		t.Fatalf("Tail(1) returned several lines: %q", got)
	}
}

func TestStopEscalatesToKill(t *testing.T) {
	p := shProc(t, "trap '' TERM; echo ready; while :; do sleep 0.05; done")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	waitLog(t, p, "ready", 1) // the trap is set before the echo
	if p.Stop(200 * time.Millisecond) {
		t.Fatal("Stop reported a clean exit of a process that ignores SIGTERM")
	}
	if p.Running() {
		t.Fatal("still running after Stop")
	}
	if !p.Stop(time.Second) {
		t.Fatal("Stop of an exited process reports an unclean exit")
	}
}

func TestStopAll(t *testing.T) {
	a, b := shProc(t, "exec sleep 60"), shProc(t, "exec sleep 60")
	for _, p := range []*Proc{a, b} {
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
	}
	StopAll(10*time.Second, a, nil, b)
	if a.Running() || b.Running() {
		t.Fatal("StopAll left a process running")
	}
}

func TestFreePortsAndWaitListening(t *testing.T) {
	ports, err := FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p == 0 || seen[p] {
			t.Fatalf("ports %v: zero or repeated", ports)
		}
		seen[p] = true
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if err := WaitListening(ctx, addr); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("nothing listens: %v, want DeadlineExceeded", err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	defer l.Close()
	if err := WaitListening(context.Background(), addr); err != nil {
		t.Fatal(err)
	}
}

func readConf(t *testing.T, write func(string) error) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.conf")
	if err := write(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The texts below are what the integration and chaos harnesses wrote before they
// shared this package; a change here changes every test cluster.
func TestNamesrvConfig(t *testing.T) {
	got := readConf(t, NamesrvConfig{Addr: "127.0.0.1:9876", LogLevel: "debug"}.Write)
	if want := "listenAddr=127.0.0.1\nlistenPort=9876\nadminListen=\nlogLevel=debug\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got = readConf(t, NamesrvConfig{Addr: "127.0.0.1:9876"}.Write)
	if want := "listenAddr=127.0.0.1\nlistenPort=9876\nadminListen=\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if err := (NamesrvConfig{Addr: "no-port"}).Write(filepath.Join(t.TempDir(), "x")); err == nil {
		t.Error("an address without a port was accepted")
	}
}

func TestBrokerConfig(t *testing.T) {
	peers := []Peer{{"n0", "127.0.0.1:3000"}, {"n1", "127.0.0.1:3001"}}
	clients := []Peer{{"n0", "127.0.0.1:4000"}, {"n1", "127.0.0.1:4001"}}
	full := BrokerConfig{
		ClusterName: "C", BrokerName: "broker-a", ClientAddr: "127.0.0.1:4001", NamesrvAddr: "127.0.0.1:9876",
		DataDir: "data/n1", Group: "broker-a", Peers: peers, PeerClients: clients, SelfID: "n1",
		SegmentSize: SegmentSize, FlushDiskType: "SYNC_FLUSH", AutoCreateTopics: true, DefaultQueues: 4,
		AdminListen: "127.0.0.1:5001", LogLevel: "info", Extra: []string{"diskMaxUsedSpaceRatio=95"},
	}
	want := strings.Join([]string{
		"brokerClusterName=C", "brokerName=broker-a", "brokerIP1=127.0.0.1", "listenPort=4001",
		"namesrvAddr=127.0.0.1:9876", "storePathRootDir=data/n1", "dLegerGroup=broker-a",
		"dLegerPeers=n0-127.0.0.1:3000;n1-127.0.0.1:3001", "dLegerPeerClientAddrs=n0-127.0.0.1:4000;n1-127.0.0.1:4001",
		"dLegerSelfId=n1", "mappedFileSizeCommitLog=8388608", "flushDiskType=SYNC_FLUSH",
		"autoCreateTopicEnable=true", "defaultTopicQueueNums=4", "adminListen=127.0.0.1:5001",
		"maxHashSlotNum=50000", "maxIndexNum=200000", "logLevel=info", "diskMaxUsedSpaceRatio=95", "",
	}, "\n")
	if got := readConf(t, full.Write); got != want {
		t.Errorf("every key:\ngot\n%s\nwant\n%s", got, want)
	}

	minimal := BrokerConfig{ClusterName: "C", BrokerName: "broker-b", ClientAddr: "127.0.0.1:4001",
		NamesrvAddr: "127.0.0.1:9876", DataDir: "d", Peers: peers, PeerClients: clients, SelfID: "n1"}
	want = strings.Join([]string{
		"brokerClusterName=C", "brokerName=broker-b", "brokerIP1=127.0.0.1", "listenPort=4001",
		"namesrvAddr=127.0.0.1:9876", "storePathRootDir=d",
		"dLegerPeers=n0-127.0.0.1:3000;n1-127.0.0.1:3001", "dLegerPeerClientAddrs=n0-127.0.0.1:4000;n1-127.0.0.1:4001",
		"dLegerSelfId=n1", "adminListen=", "maxHashSlotNum=50000", "maxIndexNum=200000", "",
	}, "\n")
	if got := readConf(t, minimal.Write); got != want {
		t.Errorf("optional keys omitted:\ngot\n%s\nwant\n%s", got, want)
	}

	// A key in Extra replaces the line written for it (the broker refuses a
	// key set twice): the package's IndexFile sizing and a field's key alike.
	sized := minimal
	sized.Extra = []string{"maxIndexNum = 20000000", "maxHashSlotNum=5000000", "storePathRootDir=elsewhere"}
	want = strings.Replace(want, "storePathRootDir=d\n", "", 1)
	want = strings.Replace(want, "maxHashSlotNum=50000\nmaxIndexNum=200000\n", "maxIndexNum = 20000000\nmaxHashSlotNum=5000000\nstorePathRootDir=elsewhere\n", 1)
	if got := readConf(t, sized.Write); got != want {
		t.Errorf("keys replaced from Extra:\ngot\n%s\nwant\n%s", got, want)
	}
}

// TestFreePortsLeaveRoomForVIPChannels: a broker on any port handed out opens
// its VIP channel at that port-2, so no two ports are within 2 of each other
// and port-2 is free when they are returned.
func TestFreePortsLeaveRoomForVIPChannels(t *testing.T) {
	ports, err := FreePorts(40)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ports {
		for _, q := range ports[i+1:] {
			if d := p - q; d >= -2 && d <= 2 {
				t.Fatalf("ports %d and %d: one is the other's VIP channel", p, q)
			}
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p-2))
		if err != nil {
			t.Skipf("port %d taken meanwhile: %v", p-2, err)
		}
		_ = l.Close()
	}
}
