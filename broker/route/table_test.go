package route

import (
	"context"
	"errors"
	"testing"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/transport"
)

// TestChainOrderAndUnroutedCodes: stages run in order around the forwarding
// stage and the handler, an error becomes its table code, and a code nobody
// registered still passes through the stages before REQUEST_CODE_NOT_SUPPORTED.
func TestChainOrderAndUnroutedCodes(t *testing.T) {
	var trace []string
	stage := func(name string) Stage {
		return func(next Handler) Handler {
			return func(ctx context.Context, req *Request) (*transport.Command, error) {
				trace = append(trace, name+">"+req.Route.Policy.String())
				return next(ctx, req)
			}
		}
	}
	tbl := NewTable()
	tbl.Handle(Local, func(context.Context, *Request) (*transport.Command, error) {
		trace = append(trace, "handler")
		return nil, errors.New("wrapped: " + replica.ErrBusy.Error())
	}, transport.GetMaxOffset)
	tbl.Handle(Local, func(context.Context, *Request) (*transport.Command, error) {
		return nil, replica.ErrBusy
	}, transport.GetMinOffset)
	serve := tbl.Serve(stage("fwd"), stage("metrics"), stage("auth")).ServeRemoting

	resp := serve(context.Background(), nil, transport.NewRequest(transport.GetMaxOffset, nil, nil))
	if got := trace; len(got) != 4 || got[0] != "metrics>local" || got[1] != "auth>local" || got[2] != "fwd>local" || got[3] != "handler" {
		t.Fatalf("order = %v", got)
	}
	if resp.ResponseCode() != transport.SystemError {
		t.Fatalf("an error matching no row answered %s, want SYSTEM_ERROR", resp.ResponseCode())
	}
	if resp := serve(context.Background(), nil, transport.NewRequest(transport.GetMinOffset, nil, nil)); resp.ResponseCode() != transport.SystemBusy {
		t.Fatalf("ErrBusy answered %s", resp.ResponseCode())
	}

	trace = nil
	resp = serve(context.Background(), nil, transport.NewRequest(transport.RequestCode(9999), nil, nil))
	if resp.ResponseCode() != transport.RequestCodeNotSupported || len(trace) != 3 {
		t.Fatalf("unrouted code: %s after stages %v", resp.ResponseCode(), trace)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("registering a code twice did not panic")
		}
	}()
	tbl.Handle(Leader, nil, transport.GetMaxOffset)
}

// TestWithoutLeavesTheOriginal: a table without some codes answers them
// REQUEST_CODE_NOT_SUPPORTED through its stages and serves the rest, while the
// table it was copied from still serves them all.
func TestWithoutLeavesTheOriginal(t *testing.T) {
	ok := func(context.Context, *Request) (*transport.Command, error) { return OK(nil, nil), nil }
	tbl := NewTable()
	tbl.Handle(Local, ok, transport.PullMessage, transport.HeartBeat)
	staged := 0
	stage := func(next Handler) Handler {
		return func(ctx context.Context, req *Request) (*transport.Command, error) {
			staged++
			return next(ctx, req)
		}
	}
	fwd := func(next Handler) Handler { return next }
	vip := tbl.Without(transport.PullMessage).Serve(fwd, stage).ServeRemoting
	full := tbl.Serve(fwd, stage).ServeRemoting
	for _, c := range []struct {
		serve transport.HandlerFunc
		code  transport.RequestCode
		want  transport.ResponseCode
	}{
		{vip, transport.PullMessage, transport.RequestCodeNotSupported},
		{vip, transport.HeartBeat, transport.Success},
		{full, transport.PullMessage, transport.Success},
	} {
		if got := c.serve(context.Background(), nil, transport.NewRequest(c.code, nil, nil)).ResponseCode(); got != c.want {
			t.Errorf("code %s answered %s, want %s", c.code, got, c.want)
		}
	}
	if staged != 3 {
		t.Errorf("the stage saw %d requests, want 3", staged)
	}
	if _, ok := tbl.Lookup(transport.PullMessage); !ok {
		t.Error("Without removed the code from the original table")
	}
}
