package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TLSMode is RocketMQ's TlsMode (remoting TlsMode.java): what a server does with
// TLS and plaintext connections on the same port.
type TLSMode string

const (
	// TLSDisabled closes connections that open with a TLS handshake.
	TLSDisabled TLSMode = "disabled"
	// TLSPermissive serves TLS and plaintext connections on the same port
	// (RocketMQ's default).
	TLSPermissive TLSMode = "permissive"
	// TLSEnforcing closes plaintext connections.
	TLSEnforcing TLSMode = "enforcing"
)

// TLSClientAuth is RocketMQ's tls.server.need.client.auth.
type TLSClientAuth string

const (
	TLSClientAuthNone     TLSClientAuth = "none"     // no client certificate asked for
	TLSClientAuthOptional TLSClientAuth = "optional" // asked for; verified when given
	TLSClientAuthRequire  TLSClientAuth = "require"  // the handshake fails without a verified one
)

// DefaultHandshakeTimeout bounds the TLS handshake of one connection, and in
// enforcing mode the wait for its first byte: Netty's SslHandler default, which
// RocketMQ keeps.
const DefaultHandshakeTimeout = 10 * time.Second

// tlsRecordHandshake is the first byte of every TLS connection (a handshake
// record carrying the ClientHello). As a remoting frame's first length byte it
// would announce at least 0x16000000 bytes (369 MB), far above any MaxFrameSize,
// so a plaintext frame never starts with it and the sniff cannot misfire.
const tlsRecordHandshake = 0x16

// ErrInvalidTLSConfig: a TLSConfig names an unknown mode or client-auth value, or
// misses the certificate a mode needs.
var ErrInvalidTLSConfig = errors.New("transport: invalid TLS config")

// ParseTLSMode maps a tlsMode value to its TLSMode.
func ParseTLSMode(s string) (TLSMode, error) {
	switch m := TLSMode(s); m {
	case TLSDisabled, TLSPermissive, TLSEnforcing:
		return m, nil
	}
	return "", fmt.Errorf("tls mode=%q: must be disabled|permissive|enforcing: %w", s, ErrInvalidTLSConfig)
}

// ParseTLSClientAuth maps a tlsServerNeedClientAuth value to its TLSClientAuth.
func ParseTLSClientAuth(s string) (TLSClientAuth, error) {
	switch a := TLSClientAuth(s); a {
	case TLSClientAuthNone, TLSClientAuthOptional, TLSClientAuthRequire:
		return a, nil
	}
	return "", fmt.Errorf("tls client auth=%q: must be none|optional|require: %w", s, ErrInvalidTLSConfig)
}

// TLSConfig turns on TLS for a Server's port. Zero values take the defaults named
// on each field.
type TLSConfig struct {
	Mode TLSMode // default TLSPermissive
	// CertFile and KeyFile are the server's PEM certificate chain and key, reloaded
	// when they change (CertSource). Required unless Mode is TLSDisabled.
	CertFile, KeyFile string
	// ClientCAFile, when set, holds the PEM CAs client certificates are verified
	// against; it is read once, at Start. Without it a client certificate that
	// ClientAuth asks for is taken unverified (RocketMQ's authClient=false).
	ClientCAFile string
	ClientAuth   TLSClientAuth // default TLSClientAuthNone
	// HandshakeTimeout bounds the handshake, and in enforcing mode the wait for the
	// first byte too. Default DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
}

// withDefaults fills the zero fields and checks the enumerations.
func (c TLSConfig) withDefaults() (TLSConfig, error) {
	if c.Mode == "" {
		c.Mode = TLSPermissive
	}
	if c.ClientAuth == "" {
		c.ClientAuth = TLSClientAuthNone
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if _, err := ParseTLSMode(string(c.Mode)); err != nil {
		return c, err
	}
	if _, err := ParseTLSClientAuth(string(c.ClientAuth)); err != nil {
		return c, err
	}
	if c.Mode != TLSDisabled && (c.CertFile == "" || c.KeyFile == "") {
		return c, fmt.Errorf("tls mode=%s: certificate and key files are required: %w", c.Mode, ErrInvalidTLSConfig)
	}
	return c, nil
}

// serverTLS builds the server side: a reloading certificate and, when asked, the
// client-certificate policy. nil for TLSDisabled, which never handshakes.
func (c TLSConfig) serverTLS(s *Server) (*tls.Config, error) {
	if c.Mode == TLSDisabled {
		return nil, nil
	}
	src, err := NewCertSource(c.CertFile, c.KeyFile, s.logger.Named("tls"))
	if err != nil {
		return nil, err
	}
	s.certs = src
	cfg := &tls.Config{GetCertificate: src.GetCertificate, MinVersion: tls.VersionTLS12}
	if c.ClientCAFile != "" {
		cas, err := NewCASource(c.ClientCAFile, s.logger.Named("tls"))
		if err != nil {
			return nil, err
		}
		verifyClientsWith(cfg, cas) // a rotated CA file counts from its next handshake
	}
	verify := cfg.ClientCAs != nil
	switch {
	case c.ClientAuth == TLSClientAuthOptional && verify:
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case c.ClientAuth == TLSClientAuthOptional:
		cfg.ClientAuth = tls.RequestClientCert
	case c.ClientAuth == TLSClientAuthRequire && verify:
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	case c.ClientAuth == TLSClientAuthRequire:
		cfg.ClientAuth = tls.RequireAnyClientCert
	}
	return cfg, nil
}

// sniffedConn replays the byte the server peeked at before handing the
// connection on: tls.Server reads the whole ClientHello through it, a plaintext
// Conn reads its first frame through it.
type sniffedConn struct {
	net.Conn
	first []byte // Invariant: consumed before any read reaches Conn
}

func (c *sniffedConn) Read(p []byte) (int, error) {
	if len(c.first) > 0 {
		n := copy(p, c.first)
		c.first = c.first[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// sniffFirstByte reads nc's first byte by deadline (zero: no deadline) and
// returns nc replaying it, and whether it starts a TLS handshake (0x16: a
// remoting frame and a raft RPC never start with it). The read deadline is
// cleared again; the caller sets the handshake's own.
func sniffFirstByte(nc net.Conn, deadline time.Time) (*sniffedConn, bool, error) {
	_ = nc.SetReadDeadline(deadline)
	var first [1]byte
	_, err := io.ReadFull(nc, first[:])
	_ = nc.SetReadDeadline(time.Time{})
	if err != nil {
		return nil, false, err
	}
	return &sniffedConn{Conn: nc, first: first[:]}, first[0] == tlsRecordHandshake, nil
}

// sniff runs in its own goroutine per accepted connection when TLS is
// configured: it reads the first byte (RocketMQ's TlsModeHandler), closes what
// the mode refuses, handshakes TLS under HandshakeTimeout, and hands the result
// to serveConn. Plaintext keeps the raw socket for writes (vectored writes) and
// reads through the replaying wrapper.
func (s *Server) sniff(nc net.Conn) {
	defer s.handshakes.Done()
	tc := s.cfg.TLS
	log := s.logger.With("remote", nc.RemoteAddr().String())
	keep := false
	defer func() {
		s.mu.Lock()
		delete(s.sniffing, nc)
		s.mu.Unlock()
		if !keep {
			_ = nc.Close()
		}
	}()

	start := time.Now()
	firstByteDeadline := time.Time{}
	if tc.Mode == TLSEnforcing {
		firstByteDeadline = start.Add(tc.HandshakeTimeout)
	} else if s.cfg.ReadIdleTimeout > 0 {
		firstByteDeadline = start.Add(s.cfg.ReadIdleTimeout) // what a plaintext connection always had
	}
	pc, isTLS, err := sniffFirstByte(nc, firstByteDeadline)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			log.Info("closing connection: nothing received", "waited", time.Since(start).Round(time.Millisecond))
		} else {
			log.Debug("connection closed before its first byte", "error", err)
		}
		return
	}
	if !isTLS {
		if tc.Mode == TLSEnforcing {
			log.Warn("closing plaintext connection: tlsMode=enforcing")
			return
		}
		keep = s.serveConn(nc, pc, nil)
		return
	}
	if s.tls == nil { // TLSDisabled
		log.Warn("closing TLS connection: tlsMode=disabled")
		return
	}
	conn := tls.Server(pc, s.tls)
	_ = nc.SetDeadline(time.Now().Add(tc.HandshakeTimeout))
	ctx, cancel := context.WithTimeout(s.ctx, tc.HandshakeTimeout)
	err = conn.HandshakeContext(ctx)
	cancel()
	if err != nil {
		switch {
		case s.ctx.Err() != nil || errors.Is(err, net.ErrClosed):
			// server shutting down
		case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
			log.Info("closing connection: TLS handshake timed out", "timeout", tc.HandshakeTimeout)
		default:
			log.Warn("closing connection: TLS handshake failed", "error", err)
		}
		return
	}
	_ = nc.SetDeadline(time.Time{})
	state := conn.ConnectionState()
	keep = s.serveConn(conn, nil, &state)
}

// ClientTLS builds the tls.Config of this side's own outbound connections
// (ClientConfig.TLS). certFile and keyFile, when set, are offered as a client
// certificate (reloaded like the server's) for servers that ask for one. caFile,
// when set, verifies the server's certificate, including its IP or DNS name
// against the dialled address; empty trusts any certificate, as RocketMQ's
// clients do by default (tls.client.authServer=false) and the Go client always
// does: the connection is encrypted but the server is not authenticated.
func ClientTLS(certFile, keyFile, caFile string, logger hclog.Logger) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if certFile != "" || keyFile != "" {
		src, err := NewCertSource(certFile, keyFile, logger)
		if err != nil {
			return nil, err
		}
		cfg.GetClientCertificate = src.GetClientCertificate
	}
	if caFile == "" {
		cfg.InsecureSkipVerify = true
		return cfg, nil
	}
	cas, err := NewCASource(caFile, logger)
	if err != nil {
		return nil, err
	}
	// RootCAs verifies with the CAs of the start wherever cfg is used as it is
	// (a copy made by its holder, another dialer); Client.dial finds cas and
	// verifies with the CA file as it is at each dial (dialConfig).
	cfg.RootCAs = cas.Pool()
	clientCASources.Store(cfg, cas)
	return cfg, nil
}

// clientCASources maps each config ClientTLS built with a CA file to its
// CASource. A lookup keyed by the config keeps ClientConfig.TLS a plain
// *tls.Config for its many holders. It is never pruned: a process builds its
// few configs once, at start (broker, admin, console, bench).
var clientCASources sync.Map // *tls.Config → *CASource

// dialConfig is the config of one TLS dial to host: cfg itself, or, for a
// config ClientTLS built with a CA file, verifyingDial's copy, which checks the
// server against that file as it is now.
func dialConfig(cfg *tls.Config, host string) *tls.Config {
	if v, ok := clientCASources.Load(cfg); ok {
		return verifyingDial(cfg, v.(*CASource), host)
	}
	return cfg
}
