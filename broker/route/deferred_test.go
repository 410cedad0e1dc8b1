package route

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/transport"
)

// serveTable runs serve on a real remoting server and returns a client and
// the server's address.
func serveTable(t *testing.T, serve transport.Handler) (*transport.Client, string) {
	t.Helper()
	s := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0", Logger: hclog.NewNullLogger()}, serve)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c := transport.NewClient(transport.ClientConfig{Logger: hclog.NewNullLogger()})
	t.Cleanup(func() { _ = c.Close() })
	return c, s.Addr()
}

func invoke(t *testing.T, c *transport.Client, addr string, code transport.RequestCode) *transport.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Invoke(ctx, addr, transport.NewRequest(code, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// forwarderTo is node n0's forwarding stage, leading or not, in a group whose
// leader (n1 when n0 does not lead) is served by leader over TCP.
func forwarderTo(t *testing.T, leader transport.Handler, leading bool) *Forwarder {
	t.Helper()
	_, leaderAddr := serveTable(t, leader)
	relay := transport.NewClient(transport.ClientConfig{Logger: hclog.NewNullLogger()})
	t.Cleanup(func() { _ = relay.Close() })
	return &Forwarder{SelfID: "n0", BrokerName: "b", Leading: func() bool { return leading },
		Status:     func() replica.Status { return replica.Status{LeaderID: "n1"} },
		LeaderAddr: func(string) (string, error) { return leaderAddr, nil },
		Client:     relay, Logger: hclog.NewNullLogger()}
}

// recordingStage registers an After that notes its name, whether the request
// was deferred, and the answer it saw, then tags the remark.
func recordingStage(name string, mu *sync.Mutex, trace *[]string) Stage {
	return func(next Handler) Handler {
		return func(ctx context.Context, req *Request) (*transport.Command, error) {
			req.After(AfterFunc(func(req *Request, resp *transport.Command, err error) (*transport.Command, error) {
				mu.Lock()
				*trace = append(*trace, fmt.Sprintf("%s deferred=%v err=%v", name, req.Deferred(), err))
				mu.Unlock()
				if err == nil {
					resp.Remark += "<" + name
				}
				return resp, err
			}))
			return next(ctx, req)
		}
	}
}

// A handler that defers answers from another goroutine; the stages' afters
// run then, innermost first, and the client gets what they return. A
// handler that answers at once runs the same afters, not deferred.
func TestDeferredRequestRunsTheStagesAfters(t *testing.T) {
	var mu sync.Mutex
	var trace []string
	tbl := NewTable()
	tbl.Handle(Local, func(_ context.Context, req *Request) (*transport.Command, error) {
		if !req.CanDefer() {
			t.Error("a request over a connection cannot be deferred")
		}
		resp, err := req.Defer()
		go func() {
			time.Sleep(20 * time.Millisecond)
			req.Answer(OK(nil, nil), nil)
		}()
		return resp, err
	}, transport.HeartBeat)
	tbl.Handle(Local, func(context.Context, *Request) (*transport.Command, error) {
		return OK(nil, nil), nil
	}, transport.GetMaxOffset)
	fwd := func(next Handler) Handler { return next }
	c, addr := serveTable(t, tbl.Serve(fwd, recordingStage("outer", &mu, &trace), recordingStage("inner", &mu, &trace)))

	if resp := invoke(t, c, addr, transport.HeartBeat); resp.Remark != "<inner<outer" {
		t.Fatalf("deferred answer remark %q, want both afters, innermost first", resp.Remark)
	}
	if resp := invoke(t, c, addr, transport.GetMaxOffset); resp.Remark != "<inner<outer" {
		t.Fatalf("direct answer remark %q", resp.Remark)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"inner deferred=true err=<nil>", "outer deferred=true err=<nil>",
		"inner deferred=false err=<nil>", "outer deferred=false err=<nil>"}
	if strings.Join(trace, "|") != strings.Join(want, "|") {
		t.Fatalf("afters ran %q, want %q", trace, want)
	}
}

// A deferred send that fails with ErrNotLeader (leadership moved while its
// entry was in flight) is relayed to the new leader from a goroutine, and
// the outer stages see the leader's answer.
func TestDeferredNotLeaderIsRelayed(t *testing.T) {
	leader := transport.HandlerFunc(func(_ context.Context, _ *transport.Conn, req *transport.Command) *transport.Command {
		if !Forwarded(req) {
			return transport.NewResponse(transport.SystemError, "not marked as forwarded")
		}
		return transport.NewResponse(transport.Success, "from the leader")
	})
	f := forwarderTo(t, leader, true)

	var mu sync.Mutex
	var trace []string
	tbl := NewTable()
	tbl.Handle(Leader, func(_ context.Context, req *Request) (*transport.Command, error) {
		resp, err := req.Defer()
		go req.Answer(nil, fmt.Errorf("%w: lost it", replica.ErrNotLeader))
		return resp, err
	}, transport.SendMessage)
	c, addr := serveTable(t, tbl.Serve(f.Stage, recordingStage("metrics", &mu, &trace)))
	resp := invoke(t, c, addr, transport.SendMessage)
	if resp.ResponseCode() != transport.Success || resp.Remark != "from the leader<metrics" {
		t.Fatalf("relayed answer %s %q", resp.ResponseCode(), resp.Remark)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(trace) != 1 || trace[0] != "metrics deferred=true err=<nil>" {
		t.Fatalf("outer stage saw %q", trace)
	}
}

// An inline route runs on the connection's reader (Request.Inline); on a
// follower the forwarding stage relays it from a goroutine, so the reader
// never waits on the network.
func TestInlineRouteRelayedFromAGoroutine(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	leader := transport.HandlerFunc(func(_ context.Context, _ *transport.Conn, req *transport.Command) *transport.Command {
		close(arrived)
		<-release // the leader holds the relayed send
		return transport.NewResponse(transport.Success, "from the leader")
	})
	f := forwarderTo(t, leader, false)
	var inline sync.Map
	seen := func(next Handler) Handler {
		return func(ctx context.Context, req *Request) (*transport.Command, error) {
			inline.Store(req.RequestCode(), req.Inline())
			return next(ctx, req)
		}
	}
	tbl := NewTable()
	tbl.HandleInline(Leader, func(context.Context, *Request) (*transport.Command, error) {
		t.Error("a follower ran the leader's handler")
		return nil, nil
	}, transport.SendMessage)
	tbl.Handle(Local, func(context.Context, *Request) (*transport.Command, error) { return OK(nil, nil), nil }, transport.HeartBeat)
	c, addr := serveTable(t, tbl.Serve(f.Stage, seen))
	done := make(chan *transport.Command, 1)
	go func() { done <- invoke(t, c, addr, transport.SendMessage) }()
	// A heartbeat behind the relayed send on the same connection is answered
	// while the relay still waits for the leader.
	<-arrived
	if resp := invoke(t, c, addr, transport.HeartBeat); resp.ResponseCode() != transport.Success {
		t.Fatalf("heartbeat behind the relay: %s", resp.ResponseCode())
	}
	close(release)
	if resp := <-done; resp.ResponseCode() != transport.Success || resp.Remark != "from the leader" {
		t.Fatalf("relayed send: %s %q", resp.ResponseCode(), resp.Remark)
	}
	if v, _ := inline.Load(transport.SendMessage); v != true {
		t.Fatal("the send did not run inline")
	}
	if v, _ := inline.Load(transport.HeartBeat); v != false {
		t.Fatal("the heartbeat ran inline")
	}
}
