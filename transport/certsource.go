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

// CertReloadInterval bounds how often a CertSource stats its files: a handshake
// costs at most two stat calls per interval, and a replaced certificate is in use
// within one interval of the first handshake after it was written.
const CertReloadInterval = time.Second

// ErrNoCertificate: a PEM file holds no usable certificate.
var ErrNoCertificate = errors.New("transport: no certificate")

// CertSource serves a certificate and key pair from two PEM files and reloads
// them when either file changes, without a restart. Plug it into
// tls.Config.GetCertificate (server) or GetClientCertificate (client).
//
// A handshake stats both files at most once per CertReloadInterval; a changed
// modification time or size loads the pair again. A pair that fails to load
// (half-written, key not matching, garbage) is logged once and the previous pair
// stays in use; the next change is tried again. Safe for concurrent use.
type CertSource struct {
	certFile, keyFile string
	logger            hclog.Logger
	now               func() time.Time // time.Now; tests step it

	mu        sync.Mutex
	cert      *tls.Certificate // Invariant: never nil after NewCertSource
	seen      fileStamp        // stamp of the files last tried, loaded or not
	lastCheck time.Time
}

// fileStamp is what a reload compares: both files' mtime and size.
type fileStamp struct {
	certMod, keyMod   time.Time
	certSize, keySize int64
}

// NewCertSource loads certFile (PEM chain, leaf first) and keyFile (PEM key:
// PKCS#8, PKCS#1 or EC). A pair that does not load is an error here: the server
// must not start without a certificate.
func NewCertSource(certFile, keyFile string, logger hclog.Logger) (*CertSource, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	s := &CertSource{certFile: certFile, keyFile: keyFile, logger: logger, now: time.Now}
	stamp, err := s.stamp()
	if err != nil {
		return nil, err
	}
	cert, err := loadPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	s.cert, s.seen, s.lastCheck = cert, stamp, s.now()
	return s, nil
}

// GetCertificate implements tls.Config.GetCertificate.
func (s *CertSource) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return s.current(s.now()), nil
}

// GetClientCertificate implements tls.Config.GetClientCertificate: the same pair
// offered as a client certificate.
func (s *CertSource) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return s.current(s.now()), nil
}

// current returns the pair to use at now, reloading it first when the files
// changed and the last check is at least CertReloadInterval old.
func (s *CertSource) current(now time.Time) *tls.Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastCheck) < CertReloadInterval {
		return s.cert
	}
	s.lastCheck = now
	stamp, err := s.stamp()
	if err != nil {
		if stamp != s.seen {
			s.logger.Warn("certificate files unreadable; keeping the loaded certificate", "error", err)
			s.seen = stamp
		}
		return s.cert
	}
	if stamp == s.seen {
		return s.cert
	}
	s.seen = stamp
	cert, err := loadPair(s.certFile, s.keyFile)
	if err != nil {
		s.logger.Warn("reloading certificate failed; keeping the loaded certificate", "error", err)
		return s.cert
	}
	s.cert = cert
	s.logger.Info("certificate reloaded", "cert", s.certFile, "subject", cert.Leaf.Subject.String(),
		"notAfter", cert.Leaf.NotAfter)
	return s.cert
}

func (s *CertSource) stamp() (fileStamp, error) {
	var st fileStamp
	ci, err := os.Stat(s.certFile)
	if err != nil {
		return st, fmt.Errorf("stat certificate file=%s: %w", s.certFile, err)
	}
	ki, err := os.Stat(s.keyFile)
	if err != nil {
		return st, fmt.Errorf("stat key file=%s: %w", s.keyFile, err)
	}
	return fileStamp{certMod: ci.ModTime(), keyMod: ki.ModTime(), certSize: ci.Size(), keySize: ki.Size()}, nil
}

func loadPair(certFile, keyFile string) (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load certificate file=%s key=%s: %w", certFile, keyFile, err)
	}
	// Go 1.23+ fills Leaf; parse it ourselves when an older toolchain did not.
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("parse certificate file=%s: %w", certFile, err)
		}
	}
	return &cert, nil
}

// LoadCertPool reads PEM CA certificates from path (e.g. tlsServerTrustCertPath).
func LoadCertPool(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read CA file=%s: %w", path, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("CA file=%s: %w", path, ErrNoCertificate)
	}
	return pool, nil
}
