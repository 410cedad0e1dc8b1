package transport

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/internal/proctest"
)

func testLogger(t *testing.T, out *proctest.SyncBuffer) hclog.Logger {
	t.Helper()
	opts := &hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug}
	if out != nil {
		opts.Output = out
	} else {
		opts.Output = testWriter{t}
	}
	return hclog.New(opts)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

func startServer(t *testing.T, cfg ServerConfig, h Handler) *Server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t, nil)
	}
	s := NewServer(cfg, h)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newClient(t *testing.T, cfg ClientConfig) *Client {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t, nil)
	}
	c := NewClient(cfg)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// echo answers every request with SUCCESS and its ext fields and body.
var echo = HandlerFunc(func(_ context.Context, _ *Conn, req *Command) *Command {
	resp := NewResponse(Success, "")
	resp.ExtFields = req.Fields()
	resp.Body = req.Body
	return resp
})

// rawDial opens a plain TCP connection for tests that write frames by hand.
func rawDial(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	return nc
}

// TestOutOfOrderResponses: 100 requests in flight at once on one connection, answered
// in reverse order, each with its own opaque and the response flag.
func TestOutOfOrderResponses(t *testing.T) {
	const n = 100
	var arrived sync.WaitGroup
	arrived.Add(n)
	release := make([]chan struct{}, n)
	for i := range release {
		release[i] = make(chan struct{})
	}
	h := HandlerFunc(func(_ context.Context, _ *Conn, req *Command) *Command {
		i, _ := strconv.Atoi(req.Field("i"))
		arrived.Done()
		<-release[i]
		resp := NewResponse(Success, "")
		resp.ExtFields = map[string]string{"i": req.Field("i")}
		return resp
	})
	s := startServer(t, ServerConfig{}, h)
	nc := rawDial(t, s.Addr())
	for i := range n {
		req := NewRequest(SendMessage, map[string]string{"i": strconv.Itoa(i)}, nil)
		req.Opaque = int32(1000 + i)
		if err := EncodeFrame(nc, req); err != nil {
			t.Fatal(err)
		}
	}
	waitGroupTimeout(t, &arrived, 5*time.Second) // all 100 handlers run concurrently
	for i := n - 1; i >= 0; i-- {
		close(release[i])
		resp, err := DecodeFrame(nc, 0)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		if resp.Opaque != int32(1000+i) || resp.Field("i") != strconv.Itoa(i) || !resp.IsResponse() {
			t.Fatalf("released %d, got opaque=%d ext=%v flag=%d", i, resp.Opaque, resp.Fields(), resp.Flag)
		}
	}
}

func waitGroupTimeout(t *testing.T, wg *sync.WaitGroup, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("timed out after %v", d)
	}
}

// TestBlockedHandlerDoesNotBlockOthers: a long-polled PULL holds its handler; a
// HEART_BEAT on the same connection is answered meanwhile.
func TestBlockedHandlerDoesNotBlockOthers(t *testing.T) {
	unblock := make(chan struct{})
	pullStarted := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, _ *Conn, req *Command) *Command {
		if req.RequestCode() == PullMessage {
			close(pullStarted)
			select {
			case <-unblock:
			case <-time.After(2 * time.Second):
			}
			return NewResponse(PullNotFound, "")
		}
		return NewResponse(Success, "")
	})
	s := startServer(t, ServerConfig{}, h)
	c := newClient(t, ClientConfig{})

	pullDone := make(chan *Command, 1)
	go func() {
		resp, err := c.Invoke(ctxTimeout(t, 5*time.Second), s.Addr(), NewRequest(PullMessage, nil, nil))
		if err != nil {
			t.Error(err)
		}
		pullDone <- resp
	}()
	<-pullStarted
	start := time.Now()
	for range 5 {
		resp, err := c.Invoke(ctxTimeout(t, time.Second), s.Addr(), NewRequest(HeartBeat, nil, []byte("{}")))
		if err != nil || resp.ResponseCode() != Success {
			t.Fatalf("heartbeat: resp=%v err=%v", resp, err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("heartbeats took %v behind a blocked pull", d)
	}
	select {
	case <-pullDone:
		t.Fatal("pull answered before it was released")
	default:
	}
	close(unblock)
	if resp := <-pullDone; resp == nil || resp.ResponseCode() != PullNotFound {
		t.Fatalf("pull response %v", resp)
	}
}

// TestServerInitiatedInvoke: the broker calls the client on the client's own connection
// (GET_CONSUMER_RUNNING_INFO is answered, NOTIFY_CONSUMER_IDS_CHANGED is oneway).
func TestServerInitiatedInvoke(t *testing.T) {
	connCh := make(chan *Conn, 1)
	s := startServer(t, ServerConfig{}, HandlerFunc(func(_ context.Context, conn *Conn, req *Command) *Command {
		if req.RequestCode() == HeartBeat {
			select {
			case connCh <- conn:
			default:
			}
		}
		return NewResponse(Success, "")
	}))
	notified := make(chan *Command, 1)
	c := newClient(t, ClientConfig{OnRequest: HandlerFunc(func(_ context.Context, _ *Conn, req *Command) *Command {
		switch req.RequestCode() {
		case GetConsumerRunningInfo:
			resp := NewResponse(Success, "")
			resp.Body = []byte(`{"running":` + req.Field("consumerGroup") + `}`)
			return resp
		case NotifyConsumerIDsChanged:
			notified <- req
			return NewResponse(Success, "must not be sent: oneway")
		}
		return nil
	})})
	if _, err := c.Invoke(ctxTimeout(t, time.Second), s.Addr(), NewRequest(HeartBeat, nil, nil)); err != nil {
		t.Fatal(err)
	}
	conn := <-connCh
	resp, err := conn.Invoke(ctxTimeout(t, time.Second), NewRequest(GetConsumerRunningInfo, map[string]string{"consumerGroup": "7"}, nil))
	if err != nil {
		t.Fatalf("server-initiated invoke: %v", err)
	}
	if string(resp.Body) != `{"running":7}` || !resp.IsResponse() {
		t.Fatalf("response %v body %q", resp, resp.Body)
	}
	if err := conn.InvokeOneway(NewRequest(NotifyConsumerIDsChanged, map[string]string{"consumerGroup": "g"}, nil)); err != nil {
		t.Fatal(err)
	}
	select {
	case req := <-notified:
		if !req.IsOneway() || req.Field("consumerGroup") != "g" {
			t.Fatalf("notify request %v", req)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("oneway request never reached the client")
	}
}

// TestOnewayRequestNotAnswered: a request with flag bit1 gets no response even though
// the handler returns one (Java semantics).
func TestOnewayRequestNotAnswered(t *testing.T) {
	var calls atomic.Int32
	s := startServer(t, ServerConfig{}, HandlerFunc(func(_ context.Context, _ *Conn, req *Command) *Command {
		calls.Add(1)
		return NewResponse(Success, req.Field("n"))
	}))
	nc := rawDial(t, s.Addr())
	oneway := NewRequest(UpdateConsumerOffset, map[string]string{"n": "oneway"}, nil)
	oneway.Opaque, oneway.Flag = 1, flagOneway
	normal := NewRequest(HeartBeat, map[string]string{"n": "normal"}, nil)
	normal.Opaque = 2
	for _, c := range []*Command{oneway, normal} {
		if err := EncodeFrame(nc, c); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := DecodeFrame(nc, 0)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Opaque != 2 || resp.Remark != "normal" {
		t.Fatalf("first response opaque=%d remark=%q, want the normal request's", resp.Opaque, resp.Remark)
	}
	_ = nc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if extra, err := DecodeFrame(nc, 0); err == nil {
		t.Fatalf("unexpected extra frame %v", extra)
	}
	if calls.Load() != 2 {
		t.Fatalf("handler ran %d times, want 2", calls.Load())
	}
}

func TestNilResponseSendsNothing(t *testing.T) {
	s := startServer(t, ServerConfig{}, HandlerFunc(func(_ context.Context, _ *Conn, req *Command) *Command {
		if req.RequestCode() == EndTransaction {
			return nil
		}
		return NewResponse(Success, "")
	}))
	nc := rawDial(t, s.Addr())
	first := NewRequest(EndTransaction, nil, nil)
	first.Opaque = 1
	second := NewRequest(HeartBeat, nil, nil)
	second.Opaque = 2
	_ = EncodeFrame(nc, first)
	_ = EncodeFrame(nc, second)
	resp, err := DecodeFrame(nc, 0)
	if err != nil || resp.Opaque != 2 {
		t.Fatalf("resp=%v err=%v, want only the answer to opaque 2", resp, err)
	}
}

func TestOnConnClose(t *testing.T) {
	seen := make(chan uint64, 1)
	closed := make(chan *Conn, 1)
	s := startServer(t, ServerConfig{OnConnClose: func(c *Conn) { closed <- c }},
		HandlerFunc(func(_ context.Context, conn *Conn, _ *Command) *Command {
			seen <- conn.ID()
			return NewResponse(Success, "")
		}))
	c := NewClient(ClientConfig{Logger: testLogger(t, nil)})
	if _, err := c.Invoke(ctxTimeout(t, time.Second), s.Addr(), NewRequest(HeartBeat, nil, nil)); err != nil {
		t.Fatal(err)
	}
	id := <-seen
	_ = c.Close()
	select {
	case conn := <-closed:
		if conn.ID() != id {
			t.Fatalf("OnConnClose for conn %d, want %d", conn.ID(), id)
		}
		select {
		case <-conn.Closed():
		default:
			t.Fatal("Closed() not closed in OnConnClose")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("OnConnClose did not fire")
	}
}

func TestClientReconnectsAfterServerRestart(t *testing.T) {
	s1 := NewServer(ServerConfig{Addr: "127.0.0.1:0", Logger: testLogger(t, nil)}, echo)
	if err := s1.Start(); err != nil {
		t.Fatal(err)
	}
	addr := s1.Addr()
	c := newClient(t, ClientConfig{})
	if _, err := c.Invoke(ctxTimeout(t, time.Second), addr, NewRequest(HeartBeat, nil, nil)); err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	// With the server gone the call fails (connection closed or dial refused)...
	if _, err := c.Invoke(ctxTimeout(t, time.Second), addr, NewRequest(HeartBeat, nil, nil)); err == nil {
		t.Fatal("invoke succeeded with the server down")
	}
	s2 := startServer(t, ServerConfig{Addr: addr}, echo)
	// ...and the next call after the restart dials again.
	resp, err := c.Invoke(ctxTimeout(t, time.Second), s2.Addr(), NewRequest(HeartBeat, map[string]string{"x": "1"}, nil))
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if resp.Field("x") != "1" {
		t.Fatalf("response %v", resp)
	}
}

// TestMalformedFrameClosesOnlyThatConn: garbage closes the offending connection with a
// log line; the server keeps serving other connections.
func TestMalformedFrameClosesOnlyThatConn(t *testing.T) {
	var logs proctest.SyncBuffer
	s := startServer(t, ServerConfig{Logger: testLogger(t, &logs), MaxFrameSize: 1 << 20}, echo)
	c := newClient(t, ClientConfig{})
	if _, err := c.Invoke(ctxTimeout(t, time.Second), s.Addr(), NewRequest(HeartBeat, nil, nil)); err != nil {
		t.Fatal(err)
	}
	garbage := map[string][]byte{
		"bad json":          rawFrame(SerializeJSON, []byte("{nope"), nil),
		"header past frame": {0, 0, 0, 8, 0, 0, 1, 0, 'x', 'x', 'x', 'x'},
		"oversize":          {0x40, 0, 0, 0},
		"http":              []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
	}
	for name, b := range garbage {
		nc := rawDial(t, s.Addr())
		if _, err := nc.Write(b); err != nil {
			t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := nc.Read(make([]byte, 1)); err == nil || isTimeout(err) {
			t.Fatalf("%s: connection not closed by the server: %v", name, err)
		}
		resp, err := c.Invoke(ctxTimeout(t, time.Second), s.Addr(), NewRequest(HeartBeat, map[string]string{"after": name}, nil))
		if err != nil || resp.Field("after") != name {
			t.Fatalf("after %s: resp=%v err=%v", name, resp, err)
		}
	}
	if got := logs.String(); !bytes.Contains([]byte(got), []byte("undecodable frame")) {
		t.Fatalf("no log line for the undecodable frames:\n%s", got)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestPendingInvokeFailsWhenConnDies(t *testing.T) {
	started := make(chan struct{})
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Logger: testLogger(t, nil), ShutdownTimeout: 100 * time.Millisecond},
		HandlerFunc(func(ctx context.Context, _ *Conn, _ *Command) *Command {
			close(started)
			<-ctx.Done() // cancelled when the connection closes
			return nil
		}))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, ClientConfig{})
	errCh := make(chan error, 1)
	go func() {
		_, err := c.Invoke(context.Background(), s.Addr(), NewRequest(PullMessage, nil, nil))
		errCh <- err
	}()
	<-started
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v (handler ctx must be cancelled on close)", err)
	}
	select {
	case err := <-errCh:
		if !errors.Is(err, ErrConnClosed) {
			t.Fatalf("err = %v, want ErrConnClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("pending invoke did not fail")
	}
}

func TestInvokeTimeoutAndLateResponse(t *testing.T) {
	release := make(chan struct{})
	s := startServer(t, ServerConfig{}, HandlerFunc(func(_ context.Context, _ *Conn, req *Command) *Command {
		if req.RequestCode() == PullMessage {
			<-release
		}
		return NewResponse(Success, req.RequestCode().String())
	}))
	c := newClient(t, ClientConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Invoke(ctx, s.Addr(), NewRequest(PullMessage, nil, nil)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	close(release) // the late response is dropped; the connection stays usable
	resp, err := c.Invoke(ctxTimeout(t, time.Second), s.Addr(), NewRequest(HeartBeat, nil, nil))
	if err != nil || resp.Remark != HeartBeat.String() {
		t.Fatalf("resp=%v err=%v", resp, err)
	}
}

func TestHandlerPanicAnswersSystemError(t *testing.T) {
	var logs proctest.SyncBuffer
	s := startServer(t, ServerConfig{Logger: testLogger(t, &logs)}, HandlerFunc(func(context.Context, *Conn, *Command) *Command {
		panic("boom")
	}))
	c := newClient(t, ClientConfig{})
	resp, err := c.Invoke(ctxTimeout(t, time.Second), s.Addr(), NewRequest(HeartBeat, nil, nil))
	if err != nil || resp.ResponseCode() != SystemError {
		t.Fatalf("resp=%v err=%v", resp, err)
	}
	if !bytes.Contains([]byte(logs.String()), []byte("handler panicked")) {
		t.Fatal("panic not logged")
	}
}

// TestBodyPartsWrittenAndReleased: Body then BodyParts arrive as one body; OnWritten
// runs once per response.
func TestBodyPartsWrittenAndReleased(t *testing.T) {
	var released atomic.Int32
	s := startServer(t, ServerConfig{}, HandlerFunc(func(context.Context, *Conn, *Command) *Command {
		resp := NewResponse(Success, "")
		resp.Body = []byte("head-")
		resp.BodyParts = [][]byte{bytes.Repeat([]byte("m"), 100000), []byte("-tail")}
		resp.OnWritten = func() { released.Add(1) }
		return resp
	}))
	c := newClient(t, ClientConfig{})
	const n = 20
	for range n {
		resp, err := c.Invoke(ctxTimeout(t, time.Second), s.Addr(), NewRequest(PullMessage, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Body) != 5+100000+5 || string(resp.Body[:5]) != "head-" || string(resp.Body[len(resp.Body)-5:]) != "-tail" {
			t.Fatalf("body %d bytes", len(resp.Body))
		}
	}
	// OnWritten runs after the write returns, which may be just after the client read it.
	deadline := time.Now().Add(2 * time.Second)
	for released.Load() < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := released.Load(); got != n {
		t.Fatalf("OnWritten ran %d times for %d responses", got, n)
	}
}

func TestReadIdleTimeoutClosesConn(t *testing.T) {
	closed := make(chan struct{})
	s := startServer(t, ServerConfig{ReadIdleTimeout: 100 * time.Millisecond, OnConnClose: func(*Conn) { close(closed) }}, echo)
	rawDial(t, s.Addr())
	select {
	case <-closed:
	case <-time.After(3 * time.Second):
		t.Fatal("idle connection not closed")
	}
}

func TestClientClosedAndDialErrors(t *testing.T) {
	c := NewClient(ClientConfig{Logger: testLogger(t, nil), DialTimeout: 200 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	if _, err := c.Invoke(ctxTimeout(t, time.Second), addr, NewRequest(HeartBeat, nil, nil)); err == nil {
		t.Fatal("invoke to a closed port succeeded")
	}
	_ = c.Close()
	if _, err := c.Invoke(ctxTimeout(t, time.Second), addr, NewRequest(HeartBeat, nil, nil)); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("err = %v, want ErrClientClosed", err)
	}
	if err := c.InvokeOneway(ctxTimeout(t, time.Second), addr, NewRequest(HeartBeat, nil, nil)); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("oneway err = %v, want ErrClientClosed", err)
	}
}

// TestConcurrentClientInvokes: many goroutines share one client connection; every call
// gets its own answer.
func TestConcurrentClientInvokes(t *testing.T) {
	s := startServer(t, ServerConfig{}, echo)
	c := newClient(t, ClientConfig{})
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				key := strconv.Itoa(g*1000 + i)
				resp, err := c.Invoke(ctxTimeout(t, 5*time.Second), s.Addr(), NewRequest(SendMessage, map[string]string{"k": key}, []byte(key)))
				if err != nil {
					errs <- err
					return
				}
				if resp.Field("k") != key || string(resp.Body) != key {
					errs <- errors.New("mismatched response for " + key)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c.mu.Lock()
	n := len(c.conns)
	c.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d connections to one address, want 1", n)
	}
}

func TestServerCloseIdempotentAndStartTwice(t *testing.T) {
	s := startServer(t, ServerConfig{}, echo)
	if err := s.Start(); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("second Start: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWriteTimeoutClosesStuckConn: a peer that stops reading cannot hold a writer (and
// the mmap'd BodyParts it pins) forever; OnWritten still runs.
func TestWriteTimeoutClosesStuckConn(t *testing.T) {
	released := make(chan struct{})
	closed := make(chan struct{})
	big := make([]byte, 8<<20)
	s := startServer(t, ServerConfig{WriteTimeout: 100 * time.Millisecond, OnConnClose: func(*Conn) { close(closed) }},
		HandlerFunc(func(context.Context, *Conn, *Command) *Command {
			resp := NewResponse(Success, "")
			resp.BodyParts = [][]byte{big, big, big, big} // 32 MiB: more than loopback buffers hold
			resp.OnWritten = func() { close(released) }
			return resp
		}))
	nc := rawDial(t, s.Addr())
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	req := NewRequest(PullMessage, nil, nil)
	req.Opaque = 1
	if err := EncodeFrame(nc, req); err != nil {
		t.Fatal(err)
	}
	// Never read.
	for name, ch := range map[string]chan struct{}{"OnWritten": released, "OnConnClose": closed} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s did not run for a peer that stopped reading", name)
		}
	}
}
