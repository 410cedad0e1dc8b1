package chaos

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Mode is what a Proxy does with the bytes of one direction.
type Mode int32

const (
	// Pass forwards bytes unchanged.
	Pass Mode = iota
	// Blackhole reads and discards bytes: the sender sees a healthy socket and no
	// answer, like a dropped route.
	Blackhole
	// Reset closes every connection with RST and refuses new ones, like a peer
	// whose port is closed.
	Reset
	// Delay forwards bytes after the direction's delay.
	Delay
)

func (m Mode) String() string {
	switch m {
	case Pass:
		return "pass"
	case Blackhole:
		return "blackhole"
	case Reset:
		return "reset"
	case Delay:
		return "delay"
	}
	return fmt.Sprintf("mode(%d)", int32(m))
}

// Direction is one half of a proxied connection.
type Direction int

const (
	// Forward is dialler → target (requests of the node that dials).
	Forward Direction = iota
	// Backward is target → dialler (the answers).
	Backward
)

// dirState is one direction's mode and delay, read by the copier on every chunk.
type dirState struct {
	mode  atomic.Int32
	delay atomic.Int64 // nanoseconds, used in Delay mode
}

// Proxy forwards TCP connections from its listen address to a target address with
// a per-direction Mode. Safe for concurrent use.
type Proxy struct {
	name   string
	target string
	ln     net.Listener
	log    hclog.Logger
	dirs   [2]dirState

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// ErrProxyClosed is returned by operations on a closed Proxy.
var ErrProxyClosed = errors.New("proxy closed")

// NewProxy listens on listen (e.g. "127.0.0.1:0") and forwards to target.
func NewProxy(name, listen, target string, log hclog.Logger) (*Proxy, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("proxy %s: listen %s: %w", name, listen, err)
	}
	p := &Proxy{name: name, target: target, ln: ln, log: log.Named("proxy").With("link", name), conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr is the address clients dial instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Name identifies the link in logs, e.g. "n0->n1".
func (p *Proxy) Name() string { return p.name }

// Set changes the mode of one direction. Reset on either direction also cuts the
// existing connections.
func (p *Proxy) Set(d Direction, m Mode, delay time.Duration) {
	p.dirs[d].delay.Store(int64(delay))
	p.dirs[d].mode.Store(int32(m))
	if m == Reset {
		p.cutAll()
	}
}

// SetBoth sets both directions to m.
func (p *Proxy) SetBoth(m Mode, delay time.Duration) {
	p.Set(Forward, m, delay)
	p.Set(Backward, m, delay)
}

// Mode returns the current mode of d.
func (p *Proxy) Mode(d Direction) Mode { return Mode(p.dirs[d].mode.Load()) }

// Close stops accepting, cuts every connection and waits for the goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrProxyClosed
	}
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.cutAll()
	p.wg.Wait()
	return err
}

func (p *Proxy) cutAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		resetConn(c)
	}
}

// resetConn closes with SO_LINGER 0 so the peer sees RST, not FIN.
func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.Mode(Forward) == Reset || p.Mode(Backward) == Reset {
			resetConn(in)
			continue
		}
		p.wg.Add(1)
		go p.serve(in)
	}
}

func (p *Proxy) serve(in net.Conn) {
	defer p.wg.Done()
	out, err := net.DialTimeout("tcp", p.target, 2*time.Second)
	if err != nil {
		resetConn(in)
		return
	}
	if !p.track(in) || !p.track(out) {
		resetConn(in)
		resetConn(out)
		return
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(&p.dirs[Forward], out, in) }()
	go func() { defer wg.Done(); p.pipe(&p.dirs[Backward], in, out) }()
	wg.Wait()
	p.untrack(in)
	p.untrack(out)
}

// pipe copies src to dst chunk by chunk, applying the direction's mode to each
// chunk as it is read, so a mode change takes effect on live connections. When
// either side ends, both are closed (RST if the mode says Reset).
func (p *Proxy) pipe(st *dirState, dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	defer func() {
		if Mode(st.mode.Load()) == Reset {
			resetConn(dst)
			resetConn(src)
			return
		}
		_ = dst.Close()
		_ = src.Close()
	}()
	for {
		n, err := src.Read(buf)
		if n > 0 {
			switch Mode(st.mode.Load()) {
			case Blackhole:
				// Dropped: the bytes are gone, as on a broken route.
			case Reset:
				return
			case Delay:
				time.Sleep(time.Duration(st.delay.Load()))
				fallthrough
			default:
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				p.log.Trace("read ended", "error", err)
			}
			return
		}
	}
}
