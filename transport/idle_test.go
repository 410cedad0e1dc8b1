package transport

import (
	"bufio"
	"errors"
	"os"
	"testing"
	"time"
)

// TestReadIdleKeepsATricklingFrame: a peer whose one frame takes three idle
// timeouts to arrive, a few bytes at a time, is still being heard, so its
// connection stays open and the frame is answered. Once it falls silent the
// connection is closed within the idle timeout and one check period (plus
// scheduling slack).
func TestReadIdleKeepsATricklingFrame(t *testing.T) {
	const idle = 160 * time.Millisecond
	closed := make(chan time.Time, 1)
	s := startServer(t, ServerConfig{ReadIdleTimeout: idle, OnConnClose: func(*Conn) { closed <- time.Now() }}, echo)
	nc := rawDial(t, s.Addr())
	frame, err := AppendFrame(nil, NewRequest(HeartBeat, map[string]string{"k": "v"}, make([]byte, 64)))
	if err != nil {
		t.Fatal(err)
	}
	chunks := 12
	step := 3 * idle / time.Duration(chunks)
	var lastByte time.Time
	for i := range chunks {
		lo, hi := i*len(frame)/chunks, (i+1)*len(frame)/chunks
		if _, err := nc.Write(frame[lo:hi]); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		lastByte = time.Now()
		select {
		case <-closed:
			t.Fatalf("connection closed after chunk %d while bytes kept arriving every %v", i, step)
		case <-time.After(step):
		}
	}
	resp, err := DecodeFrame(bufio.NewReader(nc), 0)
	if err != nil {
		t.Fatalf("answer to the trickled frame: %v", err)
	}
	if !resp.IsResponse() {
		t.Fatalf("got %+v, want the answer", resp)
	}
	select {
	case at := <-closed:
		if d := at.Sub(lastByte); d < idle {
			t.Fatalf("closed %v after the last byte, before the idle timeout %v", d, idle)
		}
	case <-time.After(10 * idle):
		t.Fatalf("silent connection still open after %v (idle timeout %v)", 10*idle, idle)
	}
}

// TestIdleReaderCountsSilentPeriods drives idleReader with a fake source:
// periods with bytes reset the count, and the timeout surfaces only after
// idleChecks silent periods in a row.
func TestIdleReaderCountsSilentPeriods(t *testing.T) {
	src := &scriptedReader{}
	armed := 0
	ir := newIdleReader(src, func(time.Time) error { armed++; return nil }, 16*time.Millisecond)
	// 5 silent periods, then bytes arriving with the sixth deadline, then 15
	// silent periods: no error yet.
	src.script = append(src.script, repeatTimeouts(5)...)
	src.script = append(src.script, step{n: 3, timeout: true})
	src.script = append(src.script, repeatTimeouts(15)...)
	src.script = append(src.script, step{n: 1})
	buf := make([]byte, 8)
	if n, err := ir.Read(buf); n != 3 || err != nil {
		t.Fatalf("first read = %d, %v; want the 3 bytes that came with a deadline, no error", n, err)
	}
	if n, err := ir.Read(buf); n != 1 || err != nil {
		t.Fatalf("second read = %d, %v; want 1 byte after 15 silent periods", n, err)
	}
	// The period in which that byte came counts as heard; then idleChecks
	// silent ones end the read with the timeout.
	src.script = append(src.script, repeatTimeouts(1+idleChecks)...)
	if _, err := ir.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read after %d silent periods = %v, want the deadline error", idleChecks, err)
	}
	if len(src.script) != 0 {
		t.Fatalf("%d steps left: the timeout came early", len(src.script))
	}
	if want := 5 + 1 + 15 + idleChecks; armed != want {
		t.Fatalf("deadline armed %d times, want %d", armed, want)
	}
}

type step struct {
	n       int
	timeout bool
}

func repeatTimeouts(n int) []step {
	s := make([]step, n)
	for i := range s {
		s[i].timeout = true
	}
	return s
}

// scriptedReader answers each Read with the next step: n bytes, and the
// deadline error when timeout is set.
type scriptedReader struct{ script []step }

func (r *scriptedReader) Read(p []byte) (int, error) {
	if len(r.script) == 0 {
		panic("scriptedReader: read past the script")
	}
	s := r.script[0]
	r.script = r.script[1:]
	if s.timeout {
		return s.n, os.ErrDeadlineExceeded
	}
	return s.n, nil
}

// TestReadIdleOverTLS: on a TLS connection the idle deadline passes inside
// crypto/tls's read many times while a client sends a request every half idle
// timeout; each pass is re-armed, no record is lost, and every request is
// answered on the one connection. Then the silent connection is closed.
func TestReadIdleOverTLS(t *testing.T) {
	const idle = 160 * time.Millisecond
	p := newPKI(t)
	closed := make(chan struct{}, 1)
	s := startServer(t, ServerConfig{TLS: p.tlsConfig(TLSEnforcing), ReadIdleTimeout: idle,
		OnConnClose: func(*Conn) { closed <- struct{}{} }}, echo)
	c := newClient(t, ClientConfig{TLS: p.verifying(), DialTimeout: 2 * time.Second})
	for i := range 6 {
		if err := heartbeat(t, c, s.Addr()); err != nil {
			t.Fatalf("request %d, %v into the connection: %v", i, time.Duration(i)*idle/2, err)
		}
		select {
		case <-closed:
			t.Fatalf("connection closed after request %d while requests came every %v", i, idle/2)
		case <-time.After(idle / 2):
		}
	}
	select {
	case <-closed:
	case <-time.After(10 * idle):
		t.Fatalf("silent TLS connection still open after %v (idle timeout %v)", 10*idle, idle)
	}
}
