package devcert

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
	"time"
)

func TestWriteMakesAVerifiableLoopbackPair(t *testing.T) {
	now := time.Now()
	f, err := Write(t.TempDir(), now)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(f.CACert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.pem holds no certificate")
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1", "localhost", "::1"} {
		for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
				t.Errorf("verify host=%s usage=%v: %v", host, usage, err)
			}
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "10.0.0.1", Roots: pool, CurrentTime: now}); err == nil {
		t.Error("leaf verified for a host it does not name")
	}
	if st, err := os.Stat(f.Key); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, %v; want 0600", st.Mode().Perm(), err)
	}
}

func TestAnotherCAIsNotTrusted(t *testing.T) {
	now := time.Now()
	a, err := NewCA("a", now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewCA("b", now)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := a.Issue("leaf", []string{"localhost"}, now)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: b.Pool(), CurrentTime: now}); err == nil {
		t.Fatal("a leaf of CA a verified against CA b")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: a.Pool(), CurrentTime: now}); err != nil {
		t.Fatal(err)
	}
}
