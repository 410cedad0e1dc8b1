package proctest

import (
	"context"
	"fmt"
	"net"
	"time"
)

// FreePorts reserves n distinct loopback ports by listening on port 0 and
// releases them before returning, so a process can bind them. Another process
// could take one in between; on loopback in a test run that is unlikely.
func FreePorts(n int) ([]int, error) {
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
