package devcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Validity of what this package issues. The backdate absorbs clock skew between
// the machine that made a certificate and the one checking it.
const (
	CAValidity   = 365 * 24 * time.Hour
	LeafValidity = 365 * 24 * time.Hour
	backdate     = time.Hour
)

// DefaultHosts are the SANs of the leaf Write issues: loopback by IP and name.
var DefaultHosts = []string{"127.0.0.1", "::1", "localhost"}

// CA is a self-signed certificate authority held in memory.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// NewCA makes a self-signed CA valid from now-1h for CAValidity.
func NewCA(commonName string, now time.Time) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("devcert: generate CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"rocketraft dev"}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("devcert: create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("devcert: parse CA certificate: %w", err)
	}
	return &CA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// CertPEM is the CA certificate, PEM-encoded: what a peer trusts.
func (ca *CA) CertPEM() []byte { return append([]byte(nil), ca.pem...) }

// Pool is a cert pool holding only this CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Issue signs a leaf certificate for hosts (IP addresses become IP SANs, anything
// else a DNS SAN), valid from now-1h for LeafValidity, usable by a server and a
// client. It returns the certificate and its PKCS#8 key, PEM-encoded.
func (ca *CA) Issue(commonName string, hosts []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	return ca.issue(commonName, hosts, now.Add(-backdate), now.Add(LeafValidity))
}

// IssueValidity is Issue with an explicit validity window (tests use it for
// expired certificates).
func (ca *CA) IssueValidity(commonName string, hosts []string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	return ca.issue(commonName, hosts, notBefore, notAfter)
}

func (ca *CA) issue(commonName string, hosts []string, notBefore, notAfter time.Time) ([]byte, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("devcert: generate key cn=%s: %w", commonName, err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName, Organization: []string{"rocketraft dev"}},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("devcert: sign certificate cn=%s: %w", commonName, err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("devcert: marshal key cn=%s: %w", commonName, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), nil
}

func newSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("devcert: serial number: %w", err)
	}
	return serial, nil
}

// Files are the paths Write created.
type Files struct {
	CACert string // ca.pem: trust this to verify the nodes
	Cert   string // node.pem: leaf for DefaultHosts, signed by the CA
	Key    string // node.key: its PKCS#8 key, mode 0600
}

// Write makes a new CA and one leaf for DefaultHosts under dir (created if
// missing), replacing files a previous run left there.
func Write(dir string, now time.Time) (Files, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, fmt.Errorf("devcert: create dir=%s: %w", dir, err)
	}
	ca, err := NewCA("rocketraft dev CA", now)
	if err != nil {
		return Files{}, err
	}
	certPEM, keyPEM, err := ca.Issue("rocketraft dev node", DefaultHosts, now)
	if err != nil {
		return Files{}, err
	}
	f := Files{
		CACert: filepath.Join(dir, "ca.pem"),
		Cert:   filepath.Join(dir, "node.pem"),
		Key:    filepath.Join(dir, "node.key"),
	}
	for _, w := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{{f.CACert, ca.CertPEM(), 0o644}, {f.Cert, certPEM, 0o644}, {f.Key, keyPEM, 0o600}} {
		if err := os.WriteFile(w.path, w.data, w.mode); err != nil {
			return Files{}, fmt.Errorf("devcert: write %s: %w", w.path, err)
		}
		if err := os.Chmod(w.path, w.mode); err != nil { // WriteFile keeps an old file's mode
			return Files{}, fmt.Errorf("devcert: chmod %s: %w", w.path, err)
		}
	}
	return f, nil
}
