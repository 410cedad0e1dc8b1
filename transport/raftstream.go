package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// ErrInvalidAdvertise: the address a stream layer advertises cannot be dialled by peers.
var ErrInvalidAdvertise = errors.New("transport: advertise address not dialable")

// StreamLayer is a raft.StreamLayer over TCP on its own port (not the remoting
// port): raft's NetworkTransport frames its own RPCs on the connections it accepts and
// dials here. Wrap it with raft.NewNetworkTransport. Plain TCP from NewTCPStreamLayer,
// mutual TLS from NewTLSStreamLayer (raftstream_tls.go).
type StreamLayer struct {
	ln        net.Listener
	advertise net.Addr
	tls       *streamTLS // nil: plain TCP
}

var _ raft.StreamLayer = (*StreamLayer)(nil)

// HostPort is a TCP address written host:port whose host may be a DNS name, for
// a stream layer's advertise address. Raft puts the advertised text into the
// votes and AppendEntries it sends, and peers dial what they hold by name each
// time, so a name stays right when the address behind it changes (a
// Kubernetes pod restarted with a new IP) where a resolved IP would go stale.
type HostPort string

// Network is "tcp".
func (HostPort) Network() string { return "tcp" }

func (a HostPort) String() string { return string(a) }

// NewTCPStreamLayer listens on bindAddr. advertise is the address peers dial (it goes into
// the raft configuration); nil means the listener's address, which must then not be a
// wildcard like 0.0.0.0. A HostPort advertise keeps its host name as written: it is not
// resolved here, so the name, not the IP it has today, is what peers learn.
func NewTCPStreamLayer(bindAddr string, advertise net.Addr) (*StreamLayer, error) {
	ln, err := net.Listen("tcp", bindAddr)
	if err != nil {
		return nil, fmt.Errorf("raft stream listen addr=%s: %w", bindAddr, err)
	}
	if advertise == nil {
		advertise = ln.Addr()
	}
	if err := checkAdvertise(advertise); err != nil {
		_ = ln.Close()
		return nil, err
	}
	return &StreamLayer{ln: ln, advertise: advertise}, nil
}

// checkAdvertise refuses an address peers could not dial: no port, an empty
// host, or a wildcard IP. A host name passes unresolved; whether it resolves is
// the dialler's business at each dial.
func checkAdvertise(a net.Addr) error {
	if tcp, ok := a.(*net.TCPAddr); ok {
		if tcp.IP == nil || tcp.IP.IsUnspecified() || tcp.Port == 0 {
			return fmt.Errorf("raft stream advertise=%s: %w", a, ErrInvalidAdvertise)
		}
		return nil
	}
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return fmt.Errorf("raft stream advertise=%s: %v: %w", a, err, ErrInvalidAdvertise)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return fmt.Errorf("raft stream advertise=%s: port must be 1-65535: %w", a, ErrInvalidAdvertise)
	}
	if host == "" {
		return fmt.Errorf("raft stream advertise=%s: host must not be empty: %w", a, ErrInvalidAdvertise)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return fmt.Errorf("raft stream advertise=%s: a wildcard address cannot be dialled: %w", a, ErrInvalidAdvertise)
	}
	return nil
}

// Accept waits for the next inbound raft connection; with TLS, the next one
// whose handshake verified the peer.
func (s *StreamLayer) Accept() (net.Conn, error) {
	if s.tls != nil {
		return s.tls.accept()
	}
	return s.ln.Accept()
}

// Close stops listening (and with TLS, cancels the handshakes in progress).
// Established connections belong to raft's transport.
func (s *StreamLayer) Close() error {
	if s.tls != nil {
		s.tls.close()
	}
	return s.ln.Close()
}

// Addr is the advertised address.
func (s *StreamLayer) Addr() net.Addr { return s.advertise }

// Dial connects to a peer's stream layer; with TLS the handshake, which
// verifies the peer against the group's CA, is part of the dial and of its timeout.
func (s *StreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	if s.tls != nil {
		return s.tls.dial(address, timeout)
	}
	d := net.Dialer{Timeout: timeout}
	nc, err := d.Dial("tcp", string(address))
	if err != nil {
		return nil, fmt.Errorf("raft stream dial addr=%s: %w", address, err)
	}
	return nc, nil
}

// streamTLS is the TLS side of a StreamLayer. An accept loop of its own takes
// connections from the listener and handshakes each in its own goroutine, so a
// peer that stalls or fails its handshake never holds up raft's accept loop
// (which backs off after every Accept error) and never reaches raft at all.
type streamTLS struct {
	server, client *tls.Config
	cas            *CASource // the group's CA, for dialled peers (serverVerifier)
	timeout        time.Duration
	permissive     bool // StreamTLS.Permissive: plaintext peers too
	log            hclog.Logger

	ctx    context.Context // cancelled by close: stops the loop and pending handshakes
	cancel context.CancelFunc
	once   sync.Once
	// ready carries verified connections and listener errors to Accept.
	ready chan acceptResult
}

type acceptResult struct {
	conn net.Conn
	err  error
}

func (t *streamTLS) acceptLoop(ln net.Listener) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			if t.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Hand the error to raft, whose Accept loop backs off before it asks again.
			select {
			case t.ready <- acceptResult{err: err}:
			case <-t.ctx.Done():
				return
			}
			continue
		}
		go t.handshake(nc)
	}
}

func (t *streamTLS) handshake(nc net.Conn) {
	if t.permissive {
		// Plaintext peers too: the first byte tells them apart.
		pc, isTLS, err := sniffFirstByte(nc, time.Now().Add(t.timeout))
		if err != nil {
			_ = nc.Close()
			return
		}
		if !isTLS {
			t.log.Debug("raft peer connected in plaintext (raftTlsMode=permissive)", "remote", nc.RemoteAddr().String())
			t.deliver(pc)
			return
		}
		nc = pc
	}
	conn := tls.Server(nc, t.server)
	ctx, cancel := context.WithTimeout(t.ctx, t.timeout)
	err := conn.HandshakeContext(ctx)
	cancel()
	if err != nil {
		_ = nc.Close()
		if t.ctx.Err() == nil {
			t.log.Warn("raft peer refused: TLS handshake failed", "remote", nc.RemoteAddr().String(), "error", err)
		}
		return
	}
	t.deliver(conn)
}

// deliver hands an accepted connection to raft's Accept.
func (t *streamTLS) deliver(conn net.Conn) {
	select {
	case t.ready <- acceptResult{conn: conn}:
	case <-t.ctx.Done():
		_ = conn.Close()
	}
}

func (t *streamTLS) accept() (net.Conn, error) {
	select {
	case r := <-t.ready:
		return r.conn, r.err
	case <-t.ctx.Done():
		return nil, fmt.Errorf("raft stream accept: %w", net.ErrClosed)
	}
}

func (t *streamTLS) close() { t.once.Do(t.cancel) }

func (t *streamTLS) dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(t.ctx, timeout)
	defer cancel()
	d := net.Dialer{}
	nc, err := d.DialContext(ctx, "tcp", string(address))
	if err != nil {
		return nil, fmt.Errorf("raft stream dial addr=%s: %w", address, err)
	}
	host, _, err := net.SplitHostPort(string(address))
	if err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("raft stream dial addr=%s: %w", address, err)
	}
	conn := tls.Client(nc, verifyingDial(t.client, t.cas, host))
	hctx, hcancel := context.WithTimeout(ctx, t.timeout)
	err = conn.HandshakeContext(hctx)
	hcancel()
	if err != nil {
		_ = nc.Close()
		if t.permissive && ctx.Err() == nil {
			// A peer not on TLS yet closes a connection that starts with a
			// handshake record: dial it again in plaintext.
			if plain, perr := d.DialContext(ctx, "tcp", string(address)); perr == nil {
				t.log.Debug("raft peer did not complete TLS; dialled plaintext (raftTlsMode=permissive)", "remote", string(address), "error", err)
				return plain, nil
			}
		}
		if t.ctx.Err() == nil {
			t.log.Warn("raft peer refused: TLS handshake failed", "remote", string(address), "error", err)
		}
		return nil, fmt.Errorf("raft stream dial addr=%s: TLS handshake: %w", address, err)
	}
	return conn, nil
}
