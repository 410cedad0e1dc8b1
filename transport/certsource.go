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

	mu     sync.Mutex
	cert   *tls.Certificate // Invariant: never nil after NewCertSource
	reload reloadCheck
}

// reloadCheck decides when a source reads its files again: at most once per
// CertReloadInterval, and only when their stamp changed since the last try.
type reloadCheck struct {
	seen      fileStamp // stamp of the files last tried, loaded or not
	lastCheck time.Time
}

// due reports whether to load the files at now. An unreadable file is logged
// (unreadable) once per new stamp and keeps what is loaded; a changed stamp is
// remembered whether or not the load that follows succeeds, so a broken file
// is tried once, not at every handshake.
func (r *reloadCheck) due(now time.Time, stamp func() (fileStamp, error), logger hclog.Logger, unreadable string) bool {
	if now.Sub(r.lastCheck) < CertReloadInterval {
		return false
	}
	r.lastCheck = now
	st, err := stamp()
	if err != nil {
		if st != r.seen {
			logger.Warn(unreadable, "error", err)
			r.seen = st
		}
		return false
	}
	if st == r.seen {
		return false
	}
	r.seen = st
	return true
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
	s.cert, s.reload = cert, reloadCheck{seen: stamp, lastCheck: s.now()}
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
	if !s.reload.due(now, s.stamp, s.logger, "certificate files unreadable; keeping the loaded certificate") {
		return s.cert
	}
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
