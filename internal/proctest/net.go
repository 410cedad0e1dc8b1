package proctest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
	"time"
)

// Test ports come from below the kernel's ephemeral range (32768–60999 on
// Linux): a port there can be taken at any moment by the local end of some
// outgoing connection, and a child process that binds it a second later then
// fails with "address already in use". Below it, only another test that picked
// the same port can collide.
const (
	portLow  = 12000
	portHigh = 32000
	// vipBelow is how far below a base port the ranges start: a broker's VIP
	// channel listens at listenPort-2.
	vipBelow = 2
)

// FreePorts reserves n distinct loopback ports below the ephemeral range by
// listening on random ones, and releases them before returning, so a process
// can bind them. Another test could pick one in between; that is unlikely.
func FreePorts(n int) ([]int, error) {
	return FreePortGroups(n, 0)
}

// FreePortGroups returns n distinct base ports such that base-2 … base+span
// are all free, for processes that derive further ports from a base (rocketraft
// dev: node i listens on base+10·i, its VIP channel on that -2 and its admin
// HTTP on that +2). base-2 is reserved because every broker opens its VIP
// channel at listenPort-2; the ranges of two bases never overlap, so no port
// handed out is another's VIP port.
func FreePortGroups(n, span int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for attempt := 0; len(ports) < n; attempt++ {
		if attempt > 1000 {
			return nil, fmt.Errorf("no %d free port groups of %d in %d–%d", n, span+1, portLow, portHigh)
		}
		base := portLow + vipBelow + rand.IntN(portHigh-portLow-vipBelow-span)
		held, ok := listenAll(base-vipBelow, span+vipBelow)
		ls = append(ls, held...)
		if ok {
			ports = append(ports, base)
		}
	}
	return ports, nil
}

// listenAll listens on base … base+span and reports whether every one was free;
// the listeners it opened are returned either way, for the caller to close.
func listenAll(base, span int) ([]net.Listener, bool) {
	var ls []net.Listener
	for p := base; p <= base+span; p++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			return ls, false
		}
		ls = append(ls, l)
	}
	return ls, true
}

// WaitListening dials addr every 50 ms until a TCP connection succeeds or ctx is
// done; the error then wraps both the last dial error and ctx's.
func WaitListening(ctx context.Context, addr string) error {
	for {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			return conn.Close()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not listening: %w: %w", addr, err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestPorts is FreePorts for a test that must name its ports before its
// processes listen (config files, raft peers); it fails t if none are free.
func TestPorts(t testing.TB, n int) []int {
	t.Helper()
	ports, err := FreePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// TestAddr is a loopback address from TestPorts, for an in-process broker: its
// VIP channel's port (two below) is free too.
func TestAddr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(TestPorts(t, 1)[0]))
}
