package transport

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"
)

// asyncResult is what one InvokeAsync's done got.
type asyncResult struct {
	resp *Command
	err  error
}

// TestInvokeAsyncAnswersEveryCallOnce: 500 calls in flight on one
// connection, answered out of order by the server; every done runs exactly
// once with its own response.
func TestInvokeAsyncAnswersEveryCallOnce(t *testing.T) {
	s := startServer(t, ServerConfig{}, HandlerFunc(func(_ context.Context, _ *Conn, req *Command) *Command {
		n, _ := strconv.Atoi(req.Field("n"))
		time.Sleep(time.Duration(n%7) * time.Millisecond) // answers overtake each other
		resp := NewResponse(Success, "")
		resp.ExtFields = map[string]string{"n": req.Field("n")}
		return resp
	}))
	c := newClient(t, ClientConfig{})
	const calls = 500
	var mu sync.Mutex
	got := make(map[int]int)
	var wg sync.WaitGroup
	wg.Add(calls)
	for i := range calls {
		req := NewRequest(SendMessage, map[string]string{"n": strconv.Itoa(i)}, nil)
		err := c.InvokeAsync(ctxTimeout(t, 5*time.Second), s.Addr(), req, 5*time.Second, func(resp *Command, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			if resp.Field("n") != strconv.Itoa(i) {
				t.Errorf("call %d answered with n=%q", i, resp.Field("n"))
			}
			got[i]++
		})
		if err != nil {
			t.Fatalf("InvokeAsync %d: %v", i, err)
		}
	}
	wg.Wait()
	for i := range calls {
		if got[i] != 1 {
			t.Errorf("call %d: done ran %d times", i, got[i])
		}
	}
}

// TestInvokeAsyncTimesOut: a request the server never answers gets ErrTimeout
// within the timeout plus one sweep, and a late answer is then dropped
// without a second done.
func TestInvokeAsyncTimesOut(t *testing.T) {
	release := make(chan struct{})
	s := startServer(t, ServerConfig{}, HandlerFunc(func(ctx context.Context, _ *Conn, _ *Command) *Command {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return NewResponse(Success, "late")
	}))
	c := newClient(t, ClientConfig{})
	results := make(chan asyncResult, 2)
	start := time.Now()
	err := c.InvokeAsync(ctxTimeout(t, 5*time.Second), s.Addr(), NewRequest(SendMessage, nil, nil), 200*time.Millisecond,
		func(resp *Command, err error) { results <- asyncResult{resp, err} })
	if err != nil {
		t.Fatal(err)
	}
	r := <-results
	took := time.Since(start)
	if !errors.Is(r.err, ErrTimeout) || r.resp != nil {
		t.Fatalf("done(%v, %v), want ErrTimeout", r.resp, r.err)
	}
	if took < 200*time.Millisecond || took > 200*time.Millisecond+10*asyncSweepInterval {
		t.Errorf("timed out after %v, want 200 ms plus at most a few sweeps", took)
	}
	close(release)
	select {
	case r := <-results:
		t.Fatalf("done ran twice: second time (%v, %v)", r.resp, r.err)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestInvokeAsyncFailsOnClose: calls in flight when the connection closes get
// ErrConnClosed, and a call on a closed connection is refused at once.
func TestInvokeAsyncFailsOnClose(t *testing.T) {
	s := startServer(t, ServerConfig{}, HandlerFunc(func(ctx context.Context, _ *Conn, _ *Command) *Command {
		<-ctx.Done()
		return nil
	}))
	c := newClient(t, ClientConfig{})
	conn, err := c.conn(ctxTimeout(t, 5*time.Second), s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan asyncResult, 3)
	for range 3 {
		if err := conn.InvokeAsync(NewRequest(SendMessage, nil, nil), time.Minute, func(resp *Command, err error) {
			results <- asyncResult{resp, err}
		}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	_ = conn.Close()
	for i := range 3 {
		select {
		case r := <-results:
			if !errors.Is(r.err, ErrConnClosed) {
				t.Errorf("call %d: %v, want ErrConnClosed", i, r.err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("call %d never answered after the close", i)
		}
	}
	err = conn.InvokeAsync(NewRequest(SendMessage, nil, nil), time.Minute, func(*Command, error) {
		t.Error("done ran for a call refused on a closed connection")
	})
	if !errors.Is(err, ErrConnClosed) {
		t.Errorf("InvokeAsync on a closed connection: %v, want ErrConnClosed", err)
	}
}
