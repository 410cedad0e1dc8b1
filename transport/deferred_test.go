package transport

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/proctest"
)

// deferredAnswer is a request a handler deferred, with its connection.
type deferredAnswer struct {
	conn *Conn
	req  *Command
}

// deferAll defers every request and hands it to the test.
func deferAll(out chan<- deferredAnswer) Handler {
	return HandlerFunc(func(_ context.Context, conn *Conn, req *Command) *Command {
		out <- deferredAnswer{conn, req}
		return Deferred
	})
}

// A deferred request is answered later, from another goroutine, in any order,
// with its own opaque; until then it holds its in-flight slot.
func TestDeferredAnswersArriveOutOfOrder(t *testing.T) {
	got := make(chan deferredAnswer, 8)
	s := startServer(t, ServerConfig{MaxInFlightPerConn: 2}, deferAll(got))
	c := newClient(t, ClientConfig{})
	results := make(chan string, 3)
	for i := range 3 {
		go func() {
			resp, err := c.Invoke(ctxTimeout(t, 5*time.Second), s.Addr(),
				NewRequest(HeartBeat, map[string]string{"n": strconv.Itoa(i)}, nil))
			if err != nil {
				results <- "error: " + err.Error()
				return
			}
			results <- resp.Remark
		}()
	}
	a, b := <-got, <-got
	select {
	case d := <-got:
		t.Fatalf("a third request ran while two deferred ones held both slots: %v", d.req.Field("n"))
	case <-time.After(200 * time.Millisecond):
	}
	answer := func(d deferredAnswer) {
		d.conn.Answer(d.req, func() *Command { return NewResponse(Success, "n="+d.req.Field("n")) })
	}
	answer(b) // the later one first
	c3 := <-got
	answer(a)
	answer(c3)
	seen := map[string]bool{}
	for range 3 {
		seen[<-results] = true
	}
	for i := range 3 {
		if !seen["n="+strconv.Itoa(i)] {
			t.Fatalf("answers %v: n=%d missing", seen, i)
		}
	}
}

// A panic while a deferred request is answered is logged and answered
// SYSTEM_ERROR; an answer that defers again is completed by a later Answer.
func TestDeferredAnswerPanicAndRedeferral(t *testing.T) {
	var logs proctest.SyncBuffer
	got := make(chan deferredAnswer, 2)
	s := startServer(t, ServerConfig{Logger: testLogger(t, &logs)}, deferAll(got))
	c := newClient(t, ClientConfig{})
	errc := make(chan *Command, 1)
	go func() {
		resp, _ := c.Invoke(ctxTimeout(t, 5*time.Second), s.Addr(), NewRequest(HeartBeat, nil, nil))
		errc <- resp
	}()
	d := <-got
	d.conn.Answer(d.req, func() *Command { panic("boom") })
	if resp := <-errc; resp == nil || resp.ResponseCode() != SystemError {
		t.Fatalf("panicking answer: %v", resp)
	}
	if !bytes.Contains([]byte(logs.String()), []byte("handler panicked")) {
		t.Fatal("panic not logged")
	}

	go func() {
		resp, _ := c.Invoke(ctxTimeout(t, 5*time.Second), s.Addr(), NewRequest(HeartBeat, nil, nil))
		errc <- resp
	}()
	d = <-got
	d.conn.Answer(d.req, func() *Command { return Deferred })
	select {
	case resp := <-errc:
		t.Fatalf("answered although the answer deferred again: %v", resp)
	case <-time.After(100 * time.Millisecond):
	}
	d.conn.Answer(d.req, func() *Command { return NewResponse(Success, "late") })
	if resp := <-errc; resp == nil || resp.Remark != "late" {
		t.Fatalf("second answer: %v", resp)
	}
}

// Server.Close waits for a deferred request like for a running handler.
func TestServerCloseWaitsForDeferred(t *testing.T) {
	got := make(chan deferredAnswer, 1)
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Logger: testLogger(t, nil), ShutdownTimeout: 5 * time.Second}, deferAll(got))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, ClientConfig{})
	go func() { _, _ = c.Invoke(ctxTimeout(t, 5*time.Second), s.Addr(), NewRequest(HeartBeat, nil, nil)) }()
	d := <-got
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned while a deferred request was open: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	d.conn.Answer(d.req, func() *Command { return NewResponse(Success, "") }) // the connection is closed: dropped
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// inlineHandler serves HEART_BEAT on the reader goroutine and everything else
// on handler goroutines, recording what it saw.
type inlineHandler struct {
	mu       sync.Mutex
	inline   []bool // IsInline of each HEART_BEAT's ctx
	release  chan struct{}
	blocking bool // Blocking(ctx) of an inline ctx reads as not inline
}

func (h *inlineHandler) Inline(req *Command) bool { return req.RequestCode() == HeartBeat }

func (h *inlineHandler) ServeRemoting(ctx context.Context, _ *Conn, req *Command) *Command {
	if req.RequestCode() == HeartBeat {
		h.mu.Lock()
		h.inline = append(h.inline, IsInline(ctx))
		h.blocking = !IsInline(Blocking(ctx))
		h.mu.Unlock()
		return NewResponse(Success, "inline")
	}
	if IsInline(ctx) {
		return NewResponse(SystemError, "a handler goroutine's request looks inline")
	}
	<-h.release // blocks its handler goroutine, not the reader
	return NewResponse(Success, "worker")
}

// Requests an InlineHandler claims run on the reader goroutine with an
// inline context; the others keep their own goroutines, so one that blocks
// does not stop the inline ones behind it.
func TestInlineRequestsRunOnTheReader(t *testing.T) {
	h := &inlineHandler{release: make(chan struct{})}
	s := startServer(t, ServerConfig{}, h)
	c := newClient(t, ClientConfig{})
	blocked := make(chan *Command, 1)
	go func() {
		resp, _ := c.Invoke(ctxTimeout(t, 5*time.Second), s.Addr(), NewRequest(GetMaxOffset, nil, nil))
		blocked <- resp
	}()
	for range 3 {
		resp, err := c.Invoke(ctxTimeout(t, 5*time.Second), s.Addr(), NewRequest(HeartBeat, nil, nil))
		if err != nil || resp.Remark != "inline" {
			t.Fatalf("inline request behind a blocked one: %v %v", resp, err)
		}
	}
	close(h.release)
	if resp := <-blocked; resp == nil || resp.Remark != "worker" {
		t.Fatalf("the blocked request: %v", resp)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.inline) != 3 || !h.inline[0] || !h.inline[1] || !h.inline[2] || !h.blocking {
		t.Fatalf("inline contexts %v, Blocking cleared it: %v", h.inline, h.blocking)
	}
}
