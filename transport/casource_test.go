package transport

import (
	"context"
	"crypto/x509"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/internal/proctest"
)

// A changed CA file is read again at the first use after CertReloadInterval; a
// file that no longer holds a certificate is logged and the loaded CAs kept.
func TestCASourceReloadsAChangedFile(t *testing.T) {
	one, two := newPKI(t), newPKI(t)
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, one.ca.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	var log proctest.SyncBuffer
	s, err := NewCASource(path, testLogger(t, &log))
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	s.now = func() time.Time { return clock }
	trusts := func(p *pki) bool {
		pair := p.clientPair(t)
		_, err := pair.Leaf.Verify(x509VerifyOptions(s.Pool()))
		return err == nil
	}
	if !trusts(one) || trusts(two) {
		t.Fatal("the first CA file: want CA one trusted, CA two not")
	}
	if err := os.WriteFile(path, append(one.ca.CertPEM(), two.ca.CertPEM()...), 0o600); err != nil {
		t.Fatal(err)
	}
	if trusts(two) {
		t.Fatal("the new file was read before CertReloadInterval passed")
	}
	clock = clock.Add(CertReloadInterval)
	if !trusts(one) || !trusts(two) {
		t.Fatal("after the interval: want both CAs trusted")
	}
	if err := os.WriteFile(path, []byte("not a certificate, but longer than the last file was"), 0o600); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(CertReloadInterval)
	if !trusts(one) || !trusts(two) {
		t.Fatal("a broken CA file replaced the loaded CAs")
	}
	if !strings.Contains(log.String(), "reloading CA file failed") {
		t.Fatalf("the broken file was not logged:\n%s", log.String())
	}
	if _, err := NewCASource(path, nil); err == nil {
		t.Fatal("NewCASource accepted a file without a certificate")
	}
}

// TestRaftTLSTakesARotatedCA: a node's raft port refuses a peer of a second CA
// until the group's CA file also holds that CA; then, without a restart, it
// accepts the peer and dials it.
func TestRaftTLSTakesARotatedCA(t *testing.T) {
	group, next := newPKI(t), newPKI(t)
	caFile := filepath.Join(t.TempDir(), "group-ca.pem")
	writeCAs(t, caFile, group)
	bundle := filepath.Join(t.TempDir(), "bundle.pem")
	writeCAs(t, bundle, group, next)
	a := newTLSStreamLayer(t, group.cert, group.key, caFile, nil)
	ta := raft.NewNetworkTransport(a, 2, 2*time.Second, io.Discard)
	defer ta.Close()
	voteResponder(t, ta)
	// b: a node already on the next CA, trusting both.
	b := newTLSStreamLayer(t, next.cert, next.key, bundle, nil)
	tb := raft.NewNetworkTransport(b, 2, 2*time.Second, io.Discard)
	defer tb.Close()
	voteResponder(t, tb)
	if _, err := requestVote(tb, ta.LocalAddr()); err == nil {
		t.Fatal("a accepted a peer of a CA its file does not hold")
	}
	if _, err := requestVote(ta, tb.LocalAddr()); err == nil {
		t.Fatal("a dialled a peer of a CA its file does not hold")
	}
	rotateCAs(t, caFile, group, next)
	for _, dir := range []struct {
		name string
		from *raft.NetworkTransport
		to   raft.ServerAddress
	}{{"b to a", tb, ta.LocalAddr()}, {"a to b", ta, tb.LocalAddr()}} {
		if resp, err := requestVote(dir.from, dir.to); err != nil || !resp.Granted {
			t.Fatalf("%s after the CA file was rotated: %+v %v", dir.name, resp, err)
		}
	}
}

// A dialled raft peer whose certificate is of the group's CA but does not
// name the dialled host is refused.
func TestRaftTLSDialChecksTheDialledHost(t *testing.T) {
	p := newPKI(t)
	certPEM, keyPEM, err := p.ca.Issue("elsewhere", []string{"other.example"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	x := newTLSStreamLayer(t, p.write(t, "other.pem", certPEM), p.write(t, "other.key", keyPEM), p.caFile, nil)
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := x.Accept(); err == nil {
			_ = c.Close()
			accepted <- struct{}{}
		}
	}()
	a := newTLSStreamLayer(t, p.cert, p.key, p.caFile, nil)
	_, err = a.Dial(raft.ServerAddress(x.Addr().String()), 2*time.Second)
	if err == nil || !strings.Contains(err.Error(), "cannot validate certificate for 127.0.0.1") {
		t.Fatalf("dial to a peer whose certificate names other.example: %v", err)
	}
}

// The client port's client-certificate CA (ClientCAFile, tlsServerTrustCertPath)
// is read again when it changes: a client of a second CA is refused, then
// accepted once the file holds that CA too, without a restart.
func TestClientPortTakesARotatedClientCA(t *testing.T) {
	group, next := newPKI(t), newPKI(t)
	caFile := filepath.Join(t.TempDir(), "clients-ca.pem")
	writeCAs(t, caFile, group)
	s := startServer(t, ServerConfig{TLS: &TLSConfig{Mode: TLSEnforcing, CertFile: group.cert, KeyFile: group.key,
		ClientCAFile: caFile, ClientAuth: TLSClientAuthRequire}}, echo)
	invoke := func() error {
		cfg, err := ClientTLS(next.clientCert, next.clientKey, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return invokeOnce(newClient(t, ClientConfig{TLS: cfg, DialTimeout: 2 * time.Second}), s.Addr())
	}
	if err := invoke(); err == nil {
		t.Fatal("a client of a CA the file does not hold was accepted")
	}
	rotateCAs(t, caFile, group, next)
	if err := invoke(); err != nil {
		t.Fatalf("after the CA file was rotated: %v", err)
	}
}

// The CA a client verifies servers with (ClientTLS's caFile: a broker's
// tlsClientEnable with tlsServerTrustCertPath) is read again when it changes:
// one Client refuses a server of a second CA, then, without a restart, dials
// it once the file holds that CA too. A copy of the config, which the dial
// cannot find, still verifies with the CAs of the start.
func TestClientTakesARotatedServerCA(t *testing.T) {
	group, next := newPKI(t), newPKI(t)
	caFile := filepath.Join(t.TempDir(), "servers-ca.pem")
	writeCAs(t, caFile, group)
	s := startServer(t, ServerConfig{TLS: &TLSConfig{Mode: TLSEnforcing, CertFile: next.cert, KeyFile: next.key}}, echo)
	cfg, err := ClientTLS("", "", caFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, ClientConfig{TLS: cfg, DialTimeout: 2 * time.Second})
	copied := newClient(t, ClientConfig{TLS: cfg.Clone(), DialTimeout: 2 * time.Second})
	invoke := func(c *Client) error { return invokeOnce(c, s.Addr()) }
	if err := invoke(c); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("a server of a CA the file does not hold: %v", err)
	}
	rotateCAs(t, caFile, group, next)
	if err := invoke(c); err != nil {
		t.Fatalf("after the CA file was rotated: %v", err)
	}
	if err := invoke(copied); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("a copy of the config after the rotation: %v, want the start's CAs", err)
	}
}

// A server whose certificate is of the trusted CA but does not name the
// dialled address is refused by a ClientTLS client.
func TestClientChecksTheDialledHost(t *testing.T) {
	p := newPKI(t)
	certPEM, keyPEM, err := p.ca.Issue("elsewhere", []string{"other.example"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, ServerConfig{TLS: &TLSConfig{Mode: TLSEnforcing, CertFile: p.write(t, "other.pem", certPEM),
		KeyFile: p.write(t, "other.key", keyPEM)}}, echo)
	cfg, err := ClientTLS("", "", p.caFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = invokeOnce(newClient(t, ClientConfig{TLS: cfg, DialTimeout: 2 * time.Second}), s.Addr())
	if err == nil || !strings.Contains(err.Error(), "cannot validate certificate for 127.0.0.1") {
		t.Fatalf("a server whose certificate names other.example: %v", err)
	}
}

// writeCAs writes the CA certificates of ps to file, as one PEM bundle.
func writeCAs(t *testing.T, file string, ps ...*pki) {
	t.Helper()
	var pem []byte
	for _, p := range ps {
		pem = append(pem, p.ca.CertPEM()...)
	}
	if err := os.WriteFile(file, pem, 0o600); err != nil {
		t.Fatal(err)
	}
}

// rotateCAs rewrites file with the CAs of ps and waits out the reload
// interval (not a performance bound), so that the next handshake reads it.
func rotateCAs(t *testing.T, file string, ps ...*pki) {
	t.Helper()
	writeCAs(t, file, ps...)
	time.Sleep(CertReloadInterval + 100*time.Millisecond)
}

// invokeOnce sends one request over c to addr and returns its error.
func invokeOnce(c *Client, addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := c.Invoke(ctx, addr, NewRequest(SendMessage, nil, nil))
	return err
}

func x509VerifyOptions(roots *x509.CertPool) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
}
