package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// DefaultShutdownTimeout bounds how long Server.Close waits for running handlers.
const DefaultShutdownTimeout = 5 * time.Second

// ServerConfig configures a Server. Zero values take the defaults named on each field.
type ServerConfig struct {
	Addr            string        // listen address, e.g. ":10911" or "127.0.0.1:0"
	MaxFrameSize    int           // default DefaultMaxFrameSize
	ReadIdleTimeout time.Duration // default DefaultReadIdleTimeout; negative disables
	WriteTimeout    time.Duration // default DefaultWriteTimeout
	Logger          hclog.Logger  // default: discard
	OnConnClose     func(*Conn)   // called once per connection after it closed (client gone)

	MaxInFlightPerConn int           // default DefaultMaxInFlight
	ShutdownTimeout    time.Duration // default DefaultShutdownTimeout

	// TLS, when set, sniffs the first byte of every connection and applies its
	// Mode (tls.go); nil serves plaintext only, exactly as before TLS existed.
	TLS *TLSConfig
}

// Server accepts remoting connections and dispatches their requests to a Handler.
type Server struct {
	cfg     ServerConfig
	handler Handler
	logger  hclog.Logger

	ctx    context.Context // parent of every connection's context
	cancel context.CancelFunc

	handlers   sync.WaitGroup // running handler goroutines of every connection
	accept     sync.WaitGroup
	handshakes sync.WaitGroup // sniff goroutines (TLS configured only)
	tls        *tls.Config    // server side of the handshake; nil without TLS or when disabled
	certs      *CertSource    // behind tls.GetCertificate; nil when tls is

	mu       sync.Mutex
	ln       net.Listener
	conns    map[uint64]*Conn
	sniffing map[net.Conn]struct{} // accepted, not yet sniffed or handshaken
	started  bool
	closed   bool
}

// NewServer returns a server that is not listening yet; call Start.
func NewServer(cfg ServerConfig, h Handler) *Server {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.MaxFrameSize <= 0 {
		cfg.MaxFrameSize = DefaultMaxFrameSize
	}
	if cfg.ReadIdleTimeout == 0 {
		cfg.ReadIdleTimeout = DefaultReadIdleTimeout
	} else if cfg.ReadIdleTimeout < 0 {
		cfg.ReadIdleTimeout = 0
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.MaxInFlightPerConn <= 0 {
		cfg.MaxInFlightPerConn = DefaultMaxInFlight
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		cfg:      cfg,
		handler:  h,
		logger:   cfg.Logger.Named("remoting"),
		ctx:      ctx,
		cancel:   cancel,
		conns:    make(map[uint64]*Conn),
		sniffing: make(map[net.Conn]struct{}),
	}
}

// Start listens on cfg.Addr and serves in the background. Addr is valid once it returns.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return fmt.Errorf("start remoting server addr=%s: %w", s.cfg.Addr, ErrServerClosed)
	}
	if s.cfg.TLS != nil {
		tc, err := s.cfg.TLS.withDefaults()
		if err != nil {
			return fmt.Errorf("start remoting server addr=%s: %w", s.cfg.Addr, err)
		}
		if s.tls, err = tc.serverTLS(s); err != nil {
			return fmt.Errorf("start remoting server addr=%s: %w", s.cfg.Addr, err)
		}
		s.cfg.TLS = &tc
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen remoting addr=%s: %w", s.cfg.Addr, err)
	}
	s.ln = ln
	s.started = true
	if s.cfg.TLS != nil {
		s.logger.Info("listening", "addr", ln.Addr().String(), "tlsMode", s.cfg.TLS.Mode, "clientAuth", s.cfg.TLS.ClientAuth)
	} else {
		s.logger.Info("listening", "addr", ln.Addr().String())
	}
	s.accept.Add(1)
	go s.acceptLoop(ln)
	return nil
}

// Addr is the listening address ("ip:port"), or "" before Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

func (s *Server) acceptLoop(ln net.Listener) {
	defer s.accept.Done()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Typically EMFILE: back off like net/http instead of spinning.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.logger.Warn("accept failed, retrying", "error", err, "backoff", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if s.cfg.TLS == nil {
			s.serveConn(nc, nil, nil)
			continue
		}
		// The sniff reads from the socket, so it must not run on the accept loop.
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = nc.Close()
			continue
		}
		s.sniffing[nc] = struct{}{}
		s.handshakes.Add(1)
		s.mu.Unlock()
		go s.sniff(nc)
	}
}

// serveConn registers and starts a Conn over nc. reader, when set, replaces nc
// for reads (the sniffed plaintext case); state is the handshake's outcome on a
// TLS connection. It reports whether the connection was taken; if not, nc is
// closed by the caller (the accept loop's own path closes it here).
func (s *Server) serveConn(nc net.Conn, reader io.Reader, state *tls.ConnectionState) bool {
	c := newConn(s.ctx, nc, connOptions{
		maxFrame:     s.cfg.MaxFrameSize,
		readIdle:     s.cfg.ReadIdleTimeout,
		writeTimeout: s.cfg.WriteTimeout,
		maxInFlight:  s.cfg.MaxInFlightPerConn,
		handler:      s.handler,
		logger:       s.logger,
		handlers:     &s.handlers,
		onClose:      s.connClosed,
		reader:       reader,
		tlsState:     state,
	})
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = nc.Close()
		return false
	}
	s.conns[c.id] = c
	s.mu.Unlock()
	if state != nil {
		c.logger.Debug("connection accepted", "tls", tls.VersionName(state.Version), "cipher", tls.CipherSuiteName(state.CipherSuite),
			"clientCert", len(state.PeerCertificates) > 0)
	} else {
		c.logger.Debug("connection accepted")
	}
	c.start()
	return true
}

func (s *Server) connClosed(c *Conn) {
	s.mu.Lock()
	delete(s.conns, c.id)
	s.mu.Unlock()
	c.logger.Debug("connection closed")
	if s.cfg.OnConnClose != nil {
		s.cfg.OnConnClose(c)
	}
}

// Close stops accepting, closes every connection (their handlers' contexts are cancelled)
// and waits up to ShutdownTimeout for running handlers. Responses not yet written are
// dropped. Calling it again returns nil.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	ln := s.ln
	s.mu.Unlock()

	if ln != nil {
		_ = ln.Close()
	}
	s.accept.Wait() // nothing is accepted after this
	// Connections still sniffing or handshaking: close them and wait for their
	// goroutines, which then find s.closed set and register nothing.
	s.mu.Lock()
	for nc := range s.sniffing {
		_ = nc.Close()
	}
	s.mu.Unlock()
	s.handshakes.Wait() // every accepted connection is registered and started after this
	s.cancel()
	s.mu.Lock()
	conns := make([]*Conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	// Readers exit promptly once their socket is closed; after that no handler starts,
	// so waiting on s.handlers cannot race with an Add.
	for _, c := range conns {
		c.loops.Wait()
	}
	done := make(chan struct{})
	go func() {
		s.handlers.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(s.cfg.ShutdownTimeout):
		return fmt.Errorf("close remoting server addr=%s: handlers still running after %s: %w",
			s.Addr(), s.cfg.ShutdownTimeout, context.DeadlineExceeded)
	}
}
