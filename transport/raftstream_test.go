package transport

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func newStreamLayer(t *testing.T) *StreamLayer {
	t.Helper()
	sl, err := NewTCPStreamLayer("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	return sl
}

// TestStreamLayerCarriesRaftRPC runs a RequestVote between two raft NetworkTransports
// built on the stream layer.
func TestStreamLayerCarriesRaftRPC(t *testing.T) {
	t1 := raft.NewNetworkTransport(newStreamLayer(t), 2, time.Second, io.Discard)
	t2 := raft.NewNetworkTransport(newStreamLayer(t), 2, time.Second, io.Discard)
	defer t1.Close()
	defer t2.Close()

	go func() {
		select {
		case rpc := <-t2.Consumer():
			req, ok := rpc.Command.(*raft.RequestVoteRequest)
			if !ok {
				rpc.Respond(nil, errors.New("unexpected RPC"))
				return
			}
			rpc.Respond(&raft.RequestVoteResponse{Term: req.Term, Granted: true}, nil)
		case <-time.After(5 * time.Second):
		}
	}()
	var resp raft.RequestVoteResponse
	req := &raft.RequestVoteRequest{Term: 7, LastLogIndex: 3, LastLogTerm: 6}
	if err := t1.RequestVote("n2", t2.LocalAddr(), req, &resp); err != nil {
		t.Fatalf("RequestVote over the stream layer: %v", err)
	}
	if !resp.Granted || resp.Term != 7 {
		t.Fatalf("response %+v", resp)
	}
}

func TestStreamLayerAdvertise(t *testing.T) {
	if _, err := NewTCPStreamLayer("0.0.0.0:0", nil); !errors.Is(err, ErrInvalidAdvertise) {
		t.Fatalf("wildcard bind without advertise: err = %v, want ErrInvalidAdvertise", err)
	}
	adv := &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 9000}
	sl, err := NewTCPStreamLayer("127.0.0.1:0", adv)
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Close()
	if sl.Addr().String() != "10.1.2.3:9000" {
		t.Fatalf("Addr() = %s, want the advertised address", sl.Addr())
	}
}

func TestStreamLayerDialAccept(t *testing.T) {
	a := newStreamLayer(t)
	defer a.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := a.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	out, err := a.Dial(raft.ServerAddress(a.Addr().String()), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	in := <-accepted
	defer in.Close()
	if _, err := out.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	_ = in.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := io.ReadFull(in, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("read %q %v", buf, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Accept(); err == nil {
		t.Fatal("Accept after Close succeeded")
	}
}
