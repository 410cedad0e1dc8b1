package chaos

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// requireNetns skips with the reason when this machine cannot build a Network.
func requireNetns(t *testing.T) {
	t.Helper()
	if err := NetnsAvailable(); err != nil {
		t.Skipf("network-namespace scenario: %v", err)
	}
}

// inNS runs f on an OS thread inside namespace ns and waits for it. A socket
// keeps the namespace it was created in, so listeners and connections made by
// f serve on afterwards from any goroutine. The thread returns to its own
// namespace before it is unlocked; if that fails it stays locked, and Go
// discards it rather than reuse it in the wrong namespace.
func inNS(ns string, f func() error) error {
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			ch <- err
			return
		}
		defer home.Close()
		fd, err := os.Open("/run/netns/" + ns)
		if err != nil {
			ch <- err
			return
		}
		defer fd.Close()
		if err := unix.Setns(int(fd.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- err
			return
		}
		err = f()
		if unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- err
	}()
	return <-ch
}

// listenIn serves an echo on addr inside namespace ns until the test ends.
func listenIn(t *testing.T, ns, addr string) {
	t.Helper()
	var ln net.Listener
	if err := inNS(ns, func() (err error) { ln, err = net.Listen("tcp", addr); return err }); err != nil {
		t.Fatalf("listen %s in %s: %v", addr, ns, err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64)
				n, _ := c.Read(buf)
				_, _ = c.Write(buf[:n])
			}()
		}
	}()
}

// echo dials addr (from namespace ns, or the test's own when ns is "") and
// exchanges one word; the error says whether the dial timed out, was refused,
// or the answer never came.
func echo(ns, addr string, timeout time.Duration) error {
	var c net.Conn
	dial := func() (err error) { c, err = net.DialTimeout("tcp", addr, timeout); return err }
	var err error
	if ns == "" {
		err = dial()
	} else {
		err = inNS(ns, dial)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("ping")); err != nil {
		return err
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != "ping" {
		return errors.New("echo answered " + string(buf))
	}
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestNetworkFaultsAndCleanup builds a Network with a listener in each node's
// namespace and checks, from the test's own namespace over real TCP: every
// host is reachable; Blackhole makes a dial time out (no RST) and Unblackhole
// brings it back; DropFrom between two hosts cuts only that pair; Heal clears
// everything; Close leaves no namespace and no root link behind.
func TestNetworkFaultsAndCleanup(t *testing.T) {
	requireChaos(t, inShort)
	requireNetns(t)
	net0, err := NewNetwork(2)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = net0.Close()
		}
	})
	addr := func(i int) string { return net0.Node(i).IP + ":7000" }
	for i := range 2 {
		listenIn(t, net0.Node(i).NS, addr(i))
	}
	for i := range 2 {
		if err := echo("", addr(i), 2*time.Second); err != nil {
			t.Fatalf("n%d not reachable from the test's namespace: %v", i, err)
		}
	}

	if err := net0.Blackhole(0); err != nil {
		t.Fatal(err)
	}
	err = echo("", addr(0), 700*time.Millisecond)
	if !isTimeout(err) {
		t.Fatalf("blackholed n0: want a dial timeout (no RST), got %v", err)
	}
	if err := echo("", addr(1), 2*time.Second); err != nil {
		t.Fatalf("n1 while n0 is blackholed: %v", err)
	}
	if err := net0.Unblackhole(0); err != nil {
		t.Fatal(err)
	}
	if err := echo("", addr(0), 2*time.Second); err != nil {
		t.Fatalf("n0 after Unblackhole: %v", err)
	}

	// One-way: n0's packets to n1 dropped. n0 cannot reach n1 (its SYN is
	// lost), n1 cannot get an answer from n0 (n0's SYN-ACK is lost), and both
	// still talk to the test's namespace.
	if err := net0.DropFrom(0, 1, 100); err != nil {
		t.Fatal(err)
	}
	if err := echo(net0.Node(0).NS, addr(1), 700*time.Millisecond); !isTimeout(err) {
		t.Fatalf("n0 → n1 with n0's packets to n1 dropped: want a timeout, got %v", err)
	}
	if err := echo(net0.Node(1).NS, addr(0), 700*time.Millisecond); !isTimeout(err) {
		t.Fatalf("n1 → n0 with n0's packets to n1 dropped: want a timeout (answers lost), got %v", err)
	}
	for i := range 2 {
		if err := echo("", addr(i), 2*time.Second); err != nil {
			t.Fatalf("n%d from the test while n0 → n1 drops: %v", i, err)
		}
	}
	if err := net0.Unfilter(0); err != nil {
		t.Fatal(err)
	}
	if err := echo(net0.Node(0).NS, addr(1), 2*time.Second); err != nil {
		t.Fatalf("n0 → n1 after Unfilter: %v", err)
	}
	// The nameserver-only isolation: n1 cannot reach the nameserver's address
	// but still reaches n0.
	listenIn(t, net0.NamesrvHost().NS, net0.NamesrvHost().IP+":7000")
	if err := net0.IsolateFromNamesrv(1); err != nil {
		t.Fatal(err)
	}
	if err := echo(net0.Node(1).NS, net0.NamesrvHost().IP+":7000", 700*time.Millisecond); !isTimeout(err) {
		t.Fatalf("n1 → nameserver while isolated from it: want a timeout, got %v", err)
	}
	if err := echo(net0.Node(1).NS, addr(0), 2*time.Second); err != nil {
		t.Fatalf("n1 → n0 while n1 is isolated from the nameserver only: %v", err)
	}
	if err := net0.DropFrom(0, 1, 0); err == nil {
		t.Fatal("DropFrom pct=0 accepted")
	}

	st, err := net0.Flap(0, 100*time.Millisecond, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(450 * time.Millisecond)
	if err := net0.Heal(); err != nil {
		t.Fatal(err)
	}
	if st.Downs < 2 || st.Err != nil {
		t.Fatalf("flap: %d downs in 450 ms (want ≥ 2), error %v", st.Downs, st.Err)
	}
	for i := range 2 {
		if err := echo("", addr(i), 2*time.Second); err != nil {
			t.Fatalf("n%d after Heal: %v", i, err)
		}
	}

	names := append([]string{net0.bridgeNS}, net0.Node(0).NS, net0.Node(1).NS, net0.NamesrvHost().NS)
	closed = true
	if err := net0.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, ns := range names {
		if strings.Contains(string(out), ns) {
			t.Errorf("namespace %s still there after Close", ns)
		}
	}
	if linkExists(net0.rootLink) {
		t.Errorf("root link %s still there after Close", net0.rootLink)
	}
}

// TestSweepRemovesDeadRunsLeftovers: a namespace named for a pid that no
// longer runs (a crashed earlier run) is deleted by Sweep; one of a live pid
// is kept.
func TestSweepRemovesDeadRunsLeftovers(t *testing.T) {
	requireChaos(t, inShort)
	requireNetns(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid // exited and reaped: a pid no process has now
	deadNS := netnsPrefix + strconv.Itoa(dead) + "-1-n0"
	liveNS := netnsPrefix + strconv.Itoa(os.Getppid()) + "-1-n0"
	for _, ns := range []string{deadNS, liveNS} {
		if err := run("ip", "netns", "add", ns); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = run("ip", "netns", "del", liveNS); _ = run("ip", "netns", "del", deadNS) })
	Sweep()
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), deadNS) {
		t.Errorf("Sweep kept %s of dead pid %d", deadNS, dead)
	}
	if !strings.Contains(string(out), liveNS) {
		t.Errorf("Sweep deleted %s of live pid %d", liveNS, os.Getppid())
	}
}
