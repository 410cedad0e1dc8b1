package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// CASource serves the CA certificates of one PEM file (tlsServerTrustCertPath)
// and reloads them when the file changes, as CertSource does for a pair: a
// handshake stats the file at most once per CertReloadInterval, and a file that
// fails to load (half-written, no certificate) is logged once while the
// previous pool stays in use. So a CA is rotated without a restart: append the
// new CA to the file, roll the node certificates over to it, then drop the
// old one. Safe for concurrent use.
type CASource struct {
	file   string
	logger hclog.Logger
	now    func() time.Time

	mu     sync.Mutex
	pool   *x509.CertPool // Invariant: never nil after NewCASource
	reload reloadCheck    // stamps with certMod and certSize only
}

// NewCASource loads file; a file without a usable certificate is an error here.
func NewCASource(file string, logger hclog.Logger) (*CASource, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	s := &CASource{file: file, logger: logger, now: time.Now}
	stamp, err := s.stamp()
	if err != nil {
		return nil, err
	}
	pool, err := LoadCertPool(file)
	if err != nil {
		return nil, err
	}
	s.pool, s.reload = pool, reloadCheck{seen: stamp, lastCheck: s.now()}
	return s, nil
}

// Pool returns the CAs to verify with now, reloading the file first when it
// changed and the last check is at least CertReloadInterval old.
func (s *CASource) Pool() *x509.CertPool {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.reload.due(now, s.stamp, s.logger, "CA file unreadable; keeping the loaded CAs") {
		return s.pool
	}
	pool, err := LoadCertPool(s.file)
	if err != nil {
		s.logger.Warn("reloading CA file failed; keeping the loaded CAs", "error", err)
		return s.pool
	}
	s.pool = pool
	s.logger.Info("CA file reloaded", "file", s.file)
	return s.pool
}

func (s *CASource) stamp() (fileStamp, error) {
	fi, err := os.Stat(s.file)
	if err != nil {
		return fileStamp{}, fmt.Errorf("stat CA file=%s: %w", s.file, err)
	}
	return fileStamp{certMod: fi.ModTime(), certSize: fi.Size()}, nil
}

// verifyClientsWith makes the server cfg verify client certificates against
// cas as they are at each handshake: a handshake runs on a copy of cfg whose
// ClientCAs is the current pool. cfg.ClientCAs holds the pool of the moment
// too, for code that reads cfg itself.
func verifyClientsWith(cfg *tls.Config, cas *CASource) {
	cfg.ClientCAs = cas.Pool()
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		c := cfg.Clone()
		c.GetConfigForClient = nil
		c.ClientCAs = cas.Pool()
		return c, nil
	}
}

// verifyingDial is the config of one TLS dial to host from cfg: a copy that
// checks the server with serverVerifier against cas as they are now, in place
// of crypto/tls's own check of a fixed RootCAs (switched off). ServerName
// carries host as SNI when it is a DNS name.
func verifyingDial(cfg *tls.Config, cas *CASource, host string) *tls.Config {
	c := cfg.Clone()
	c.InsecureSkipVerify = true
	c.ServerName = host
	c.VerifyConnection = serverVerifier(cas, host)
	return c
}

// serverVerifier checks a server's certificate against cas as they are at the
// handshake, for a connection dialled to host: the chain must lead to one of
// its CAs, serve for serverAuth, and name host (an IP or DNS SAN). It stands in
// for crypto/tls's own check (turned off with InsecureSkipVerify), which would
// use a fixed RootCAs; it is made per dial because a connection's state does
// not carry the dialled host when that is an IP (no SNI is sent for one).
func serverVerifier(cas *CASource, host string) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("transport: the server sent no certificate")
		}
		intermediates := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: cas.Pool(), Intermediates: intermediates,
			DNSName: host, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		if err != nil {
			return &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err}
		}
		return nil
	}
}
