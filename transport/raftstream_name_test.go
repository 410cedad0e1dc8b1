package transport

import (
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// A host-name advertise address is kept as written (not resolved to today's
// IP) and refused only when no one could dial it.
func TestStreamLayerAdvertiseHostName(t *testing.T) {
	const name = "broker-a-1.broker-a.rocketraft.svc.cluster.local:40911"
	sl, err := NewTCPStreamLayer("127.0.0.1:0", HostPort(name))
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Close()
	if sl.Addr().String() != name || sl.Addr().Network() != "tcp" {
		t.Fatalf("Addr() = %s/%s, want tcp/%s", sl.Addr().Network(), sl.Addr(), name)
	}
	for _, bad := range []string{"0.0.0.0:40911", "[::]:40911", "broker-a-1:0", "broker-a-1:65536", "broker-a-1:x", "broker-a-1", ":40911"} {
		sl, err := NewTCPStreamLayer("127.0.0.1:0", HostPort(bad))
		if !errors.Is(err, ErrInvalidAdvertise) {
			if sl != nil {
				_ = sl.Close()
			}
			t.Errorf("advertise %q: err = %v, want ErrInvalidAdvertise", bad, err)
		}
	}
}

// Raft's RPCs travel between two stream layers that advertise "localhost"
// names: the name is what raft hands the dialler, and the dial resolves it.
func TestStreamLayerCarriesRaftRPCByName(t *testing.T) {
	layer := func() *StreamLayer {
		port := freeLoopbackPort(t)
		sl, err := NewTCPStreamLayer(fmt.Sprintf("127.0.0.1:%d", port), HostPort(fmt.Sprintf("localhost:%d", port)))
		if err != nil {
			t.Fatal(err)
		}
		return sl
	}
	t1 := raft.NewNetworkTransport(layer(), 2, time.Second, io.Discard)
	t2 := raft.NewNetworkTransport(layer(), 2, time.Second, io.Discard)
	defer t1.Close()
	defer t2.Close()
	if host, _, _ := net.SplitHostPort(string(t2.LocalAddr())); host != "localhost" {
		t.Fatalf("LocalAddr() = %s, want the advertised name", t2.LocalAddr())
	}
	go func() {
		select {
		case rpc := <-t2.Consumer():
			rpc.Respond(&raft.RequestVoteResponse{Term: 3, Granted: true}, nil)
		case <-time.After(5 * time.Second):
		}
	}()
	var resp raft.RequestVoteResponse
	if err := t1.RequestVote("n2", t2.LocalAddr(), &raft.RequestVoteRequest{Term: 3}, &resp); err != nil {
		t.Fatalf("RequestVote to %s: %v", t2.LocalAddr(), err)
	}
	if !resp.Granted || resp.Term != 3 {
		t.Fatalf("response %+v", resp)
	}
}

// freeLoopbackPort returns a port that was free on 127.0.0.1 a moment ago.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
