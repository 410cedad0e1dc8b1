package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/transport/devcert"
)

// pki is a CA with a server pair for 127.0.0.1 and a client pair, on disk.
type pki struct {
	ca                    *devcert.CA
	dir                   string
	cert, key, caFile     string
	clientCert, clientKey string
}

func newPKI(t testing.TB) *pki {
	t.Helper()
	now := time.Now()
	ca, err := devcert.NewCA("test CA", now)
	if err != nil {
		t.Fatal(err)
	}
	p := &pki{ca: ca, dir: t.TempDir()}
	p.caFile = p.write(t, "ca.pem", ca.CertPEM())
	p.cert, p.key = p.issue(t, "server", "server-one")
	p.clientCert, p.clientKey = p.issue(t, "client", "client-one")
	return p
}

func (p *pki) write(t testing.TB, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issue writes a pair signed by p's CA as <name>.pem/<name>.key.
func (p *pki) issue(t testing.TB, name, cn string) (certFile, keyFile string) {
	t.Helper()
	certPEM, keyPEM, err := p.ca.Issue(cn, []string{"127.0.0.1", "localhost"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return p.write(t, name+".pem", certPEM), p.write(t, name+".key", keyPEM)
}

func (p *pki) clientPair(t *testing.T) tls.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(p.clientCert, p.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

func (p *pki) tlsConfig(mode TLSMode) *TLSConfig {
	return &TLSConfig{Mode: mode, CertFile: p.cert, KeyFile: p.key}
}

// verifying is a client config that trusts only p's CA.
func (p *pki) verifying() *tls.Config {
	return &tls.Config{RootCAs: p.ca.Pool(), MinVersion: tls.VersionTLS12}
}

// heartbeat invokes one HEART_BEAT, expecting SUCCESS, and returns the error.
func heartbeat(t *testing.T, c *Client, addr string) error {
	t.Helper()
	resp, err := c.Invoke(ctxTimeout(t, 3*time.Second), addr, NewRequest(HeartBeat, map[string]string{"k": "v"}, []byte("{}")))
	if err == nil && resp.ResponseCode() != Success {
		t.Fatalf("answered %v", resp)
	}
	return err
}

// countingEcho is echo that counts the requests it served.
func countingEcho(n *atomic.Int32) Handler {
	return HandlerFunc(func(ctx context.Context, c *Conn, req *Command) *Command {
		n.Add(1)
		return echo(ctx, c, req)
	})
}

// TestTLSModes: TLS and plaintext clients against each mode, accepted or closed
// as RocketMQ's TlsModeHandler does. A nil TLSConfig (no sniff at all) refuses a
// ClientHello too: its 0x16 first byte announces an oversized frame.
func TestTLSModes(t *testing.T) {
	p := newPKI(t)
	cases := []struct {
		name          string
		tls           *TLSConfig
		tlsOK, textOK bool
		log           string // logged when a connection is refused
	}{
		{"no TLS config", nil, false, true, "undecodable frame"},
		{"disabled", &TLSConfig{Mode: TLSDisabled}, false, true, "closing TLS connection: tlsMode=disabled"},
		{"permissive", p.tlsConfig(TLSPermissive), true, true, ""},
		{"default mode is permissive", &TLSConfig{CertFile: p.cert, KeyFile: p.key}, true, true, ""},
		{"enforcing", p.tlsConfig(TLSEnforcing), true, false, "closing plaintext connection: tlsMode=enforcing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out proctest.SyncBuffer
			var served atomic.Int32
			s := startServer(t, ServerConfig{TLS: tc.tls, Logger: testLogger(t, &out)}, countingEcho(&served))
			want := int32(0)
			for _, client := range []struct {
				name string
				tls  *tls.Config
				ok   bool
			}{{"tls", p.verifying(), tc.tlsOK}, {"plaintext", nil, tc.textOK}} {
				err := heartbeat(t, newClient(t, ClientConfig{TLS: client.tls}), s.Addr())
				if client.ok && err != nil {
					t.Errorf("%s client: %v, want served", client.name, err)
				}
				if !client.ok && err == nil {
					t.Errorf("%s client served, want the connection closed", client.name)
				}
				if client.ok {
					want++
				}
			}
			if got := served.Load(); got != want {
				t.Errorf("handler served %d requests, want %d", got, want)
			}
			if tc.log != "" {
				waitFor(t, func() bool { return strings.Contains(out.String(), tc.log) }, "log line %q", tc.log)
			}
		})
	}
}

// TestTLSHandlerSeesConnectionState: Conn.TLS is nil on plaintext and describes
// the handshake on TLS, on both ends.
func TestTLSHandlerSeesConnectionState(t *testing.T) {
	p := newPKI(t)
	states := make(chan *tls.ConnectionState, 2)
	h := HandlerFunc(func(_ context.Context, c *Conn, _ *Command) *Command {
		states <- c.TLS()
		return NewResponse(Success, "")
	})
	s := startServer(t, ServerConfig{TLS: p.tlsConfig(TLSPermissive)}, h)
	for _, cfg := range []*tls.Config{nil, p.verifying()} {
		c := newClient(t, ClientConfig{TLS: cfg})
		if err := heartbeat(t, c, s.Addr()); err != nil {
			t.Fatal(err)
		}
		st := <-states
		if (st != nil) != (cfg != nil) {
			t.Fatalf("client tls=%v: server Conn.TLS() = %v", cfg != nil, st)
		}
		if st != nil && st.Version < tls.VersionTLS12 {
			t.Errorf("negotiated %s", tls.VersionName(st.Version))
		}
		conn, err := c.conn(ctxTimeout(t, time.Second), s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if (conn.TLS() != nil) != (cfg != nil) {
			t.Errorf("client tls=%v: client Conn.TLS() = %v", cfg != nil, conn.TLS())
		}
	}
}

// TestTLSClientVerifiesServer: a client that trusts another CA, or dials a name
// the certificate does not carry, fails; ClientTLS without a CA trusts anyone.
func TestTLSClientVerifiesServer(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, ServerConfig{TLS: p.tlsConfig(TLSEnforcing)}, echo)
	other := newPKI(t)
	if err := heartbeat(t, newClient(t, ClientConfig{TLS: other.verifying()}), s.Addr()); err == nil {
		t.Error("a client trusting another CA connected")
	}
	wrongName := p.verifying()
	wrongName.ServerName = "broker.example.com"
	if err := heartbeat(t, newClient(t, ClientConfig{TLS: wrongName}), s.Addr()); err == nil {
		t.Error("a client expecting another server name connected")
	}
	trustAll, err := ClientTLS("", "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := heartbeat(t, newClient(t, ClientConfig{TLS: trustAll}), s.Addr()); err != nil {
		t.Errorf("ClientTLS without a CA: %v", err)
	}
	verify, err := ClientTLS("", "", p.caFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := heartbeat(t, newClient(t, ClientConfig{TLS: verify}), s.Addr()); err != nil {
		t.Errorf("ClientTLS with the CA: %v", err)
	}
}

// TestTLSClientAuth: require refuses a client without a certificate or with one
// from another CA and serves one with a certificate from the trusted CA; optional
// serves both but still refuses an untrusted certificate.
func TestTLSClientAuth(t *testing.T) {
	p := newPKI(t)
	stranger := newPKI(t)
	for _, tc := range []struct {
		auth                        TLSClientAuth
		noCertOK, certOK, strangeOK bool
	}{
		{TLSClientAuthRequire, false, true, false},
		{TLSClientAuthOptional, true, true, false},
		{TLSClientAuthNone, true, true, true},
	} {
		t.Run(string(tc.auth), func(t *testing.T) {
			cfg := p.tlsConfig(TLSEnforcing)
			cfg.ClientAuth, cfg.ClientCAFile = tc.auth, p.caFile
			peers := make(chan []*x509.Certificate, 3)
			h := HandlerFunc(func(_ context.Context, c *Conn, _ *Command) *Command {
				peers <- c.TLS().PeerCertificates
				return NewResponse(Success, "")
			})
			s := startServer(t, ServerConfig{TLS: cfg}, h)
			for _, cl := range []struct {
				name string
				cert *tls.Certificate
				ok   bool
			}{
				{"no certificate", nil, tc.noCertOK},
				{"trusted certificate", ptr(p.clientPair(t)), tc.certOK},
				{"untrusted certificate", ptr(stranger.clientPair(t)), tc.strangeOK},
			} {
				ccfg := p.verifying()
				if cl.cert != nil {
					ccfg.Certificates = []tls.Certificate{*cl.cert}
				}
				// With TLS 1.3 the client finishes its side of the handshake before the
				// server checks the certificate; the refusal arrives on the first read.
				err := heartbeat(t, newClient(t, ClientConfig{TLS: ccfg}), s.Addr())
				if cl.ok != (err == nil) {
					t.Errorf("%s: err = %v, want served=%v", cl.name, err, cl.ok)
				}
				if err == nil && tc.auth != TLSClientAuthNone {
					got := <-peers
					if (len(got) > 0) != (cl.cert != nil) {
						t.Errorf("%s: handler saw %d peer certificates", cl.name, len(got))
					}
					if len(got) > 0 && got[0].Subject.CommonName != "client-one" {
						t.Errorf("%s: peer %s", cl.name, got[0].Subject)
					}
				} else if err == nil {
					<-peers
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestTLSRequireWithoutCAAcceptsAnyCertificate: without ClientCAFile, require
// only insists that some certificate is presented (RocketMQ's authClient=false).
func TestTLSRequireWithoutCAAcceptsAnyCertificate(t *testing.T) {
	p := newPKI(t)
	cfg := p.tlsConfig(TLSEnforcing)
	cfg.ClientAuth = TLSClientAuthRequire
	s := startServer(t, ServerConfig{TLS: cfg}, echo)
	if err := heartbeat(t, newClient(t, ClientConfig{TLS: p.verifying()}), s.Addr()); err == nil {
		t.Error("served a client without a certificate")
	}
	withCert := p.verifying()
	withCert.Certificates = []tls.Certificate{newPKI(t).clientPair(t)}
	if err := heartbeat(t, newClient(t, ClientConfig{TLS: withCert}), s.Addr()); err != nil {
		t.Errorf("client with a self-made certificate: %v", err)
	}
}

// serverCN handshakes with s and returns the certificate subject it presented.
func serverCN(t *testing.T, addr string, roots *x509.CertPool) string {
	t.Helper()
	d := &tls.Dialer{Config: &tls.Config{RootCAs: roots}}
	nc, err := d.DialContext(ctxTimeout(t, 3*time.Second), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	return nc.(*tls.Conn).ConnectionState().PeerCertificates[0].Subject.CommonName
}

// TestTLSCertificateReload: a certificate written over the files is served from
// the next handshake after the check interval, without a restart; a broken file
// keeps the previous pair (and says so once), and fixing it loads the fix.
func TestTLSCertificateReload(t *testing.T) {
	p := newPKI(t)
	var out proctest.SyncBuffer
	s := startServer(t, ServerConfig{TLS: p.tlsConfig(TLSEnforcing), Logger: testLogger(t, &out)}, echo)
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	s.certs.now = func() time.Time { return time.Unix(0, now.Load()) }
	step := func() { now.Add(int64(CertReloadInterval)) }
	roots := p.ca.Pool()
	if cn := serverCN(t, s.Addr(), roots); cn != "server-one" {
		t.Fatalf("first handshake: %s", cn)
	}

	replace := func(cn string) {
		t.Helper()
		certPEM, keyPEM, err := p.ca.Issue(cn, []string{"127.0.0.1"}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		p.write(t, "server.pem", certPEM)
		p.write(t, "server.key", keyPEM)
	}
	replace("server-two")
	if cn := serverCN(t, s.Addr(), roots); cn != "server-one" {
		t.Fatalf("within the check interval: %s, want the loaded server-one", cn)
	}
	step()
	if cn := serverCN(t, s.Addr(), roots); cn != "server-two" {
		t.Fatalf("after the interval: %s, want server-two", cn)
	}

	// Broken: garbage certificate, then a certificate whose key is another's.
	p.write(t, "server.pem", []byte("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n"))
	step()
	if cn := serverCN(t, s.Addr(), roots); cn != "server-two" {
		t.Fatalf("garbage certificate file: %s, want server-two kept", cn)
	}
	step()
	_ = serverCN(t, s.Addr(), roots) // same broken files: not retried, not logged again
	if n := strings.Count(out.String(), "reloading certificate failed"); n != 1 {
		t.Errorf("logged the failed reload %d times, want once:\n%s", n, out.String())
	}
	otherPEM, _, err := p.ca.Issue("server-three", []string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, "server.pem", otherPEM) // key file still server-two's
	step()
	if cn := serverCN(t, s.Addr(), roots); cn != "server-two" {
		t.Fatalf("certificate with a foreign key: %s, want server-two kept", cn)
	}
	replace("server-four")
	step()
	if cn := serverCN(t, s.Addr(), roots); cn != "server-four" {
		t.Fatalf("fixed files: %s, want server-four", cn)
	}
	if !strings.Contains(out.String(), "certificate reloaded") {
		t.Error("no log line for the reload")
	}
}

// TestCertSourceRemovedFileKeepsPair: the files disappearing (a deploy that
// deletes before it writes) keeps the loaded pair; their return loads again.
func TestCertSourceRemovedFileKeepsPair(t *testing.T) {
	p := newPKI(t)
	src, err := NewCertSource(p.cert, p.key, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	first := src.current(now)
	if err := os.Remove(p.cert); err != nil {
		t.Fatal(err)
	}
	now = now.Add(CertReloadInterval)
	if src.current(now) != first {
		t.Fatal("pair changed after its file was removed")
	}
	p.issue(t, "server", "server-back")
	now = now.Add(CertReloadInterval)
	if got := src.current(now); got == first || got.Leaf.Subject.CommonName != "server-back" {
		t.Fatalf("after the files returned: %v", got.Leaf.Subject)
	}
	if _, err := NewCertSource(filepath.Join(p.dir, "missing.pem"), p.key, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("NewCertSource of a missing file: %v, want os.ErrNotExist", err)
	}
}

// TestTLSSilentClientTimesOut: a client that connects and sends nothing (enforcing),
// or starts a handshake and stalls (any mode), is closed after HandshakeTimeout,
// its goroutine ends, and meanwhile other clients are served: the sniff never runs
// on the accept loop.
func TestTLSSilentClientTimesOut(t *testing.T) {
	p := newPKI(t)
	const timeout = 150 * time.Millisecond
	for _, tc := range []struct {
		name  string
		mode  TLSMode
		first []byte
	}{
		{"enforcing, nothing sent", TLSEnforcing, nil},
		{"permissive, handshake stalls", TLSPermissive, []byte{tlsRecordHandshake, 0x03, 0x01}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out proctest.SyncBuffer
			cfg := p.tlsConfig(tc.mode)
			cfg.HandshakeTimeout = timeout
			s := startServer(t, ServerConfig{TLS: cfg, Logger: testLogger(t, &out)}, echo)
			silent := rawDial(t, s.Addr())
			if _, err := silent.Write(tc.first); err != nil {
				t.Fatal(err)
			}
			if err := heartbeat(t, newClient(t, ClientConfig{TLS: p.verifying()}), s.Addr()); err != nil {
				t.Fatalf("a silent client blocked another: %v", err)
			}
			start := time.Now()
			_ = silent.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, err := silent.Read(make([]byte, 64))
			if waited := time.Since(start); err == nil || waited > 3*time.Second {
				t.Fatalf("read %d bytes, err %v after %v; want the server to close after %v", n, err, waited, timeout)
			}
			waitFor(t, func() bool {
				s.mu.Lock()
				defer s.mu.Unlock()
				return len(s.sniffing) == 0
			}, "sniff goroutine to end")
			waitFor(t, func() bool { return strings.Contains(out.String(), "closing connection") }, "a log line for the timeout")
		})
	}
}

// TestTLSCloseDuringHandshake: Close does not wait HandshakeTimeout for a
// connection stuck in its handshake.
func TestTLSCloseDuringHandshake(t *testing.T) {
	p := newPKI(t)
	cfg := p.tlsConfig(TLSEnforcing)
	cfg.HandshakeTimeout = time.Minute
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", TLS: cfg, Logger: testLogger(t, nil)}, echo)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	silent := rawDial(t, s.Addr())
	if _, err := silent.Write([]byte{tlsRecordHandshake}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.sniffing) == 1
	}, "connection to be sniffing")
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Close took %v", d)
	}
	if _, err := silent.Read(make([]byte, 1)); err == nil {
		t.Fatal("connection still open after Close")
	}
}

// TestTLSPlaintextFramesStillDecode: through the sniff (permissive mode), the
// golden frames written by hand, the first byte alone and then the rest, are
// answered exactly as by a server without TLS.
func TestTLSPlaintextFramesStillDecode(t *testing.T) {
	p := newPKI(t)
	plain := startServer(t, ServerConfig{}, echo)
	sniffed := startServer(t, ServerConfig{TLS: p.tlsConfig(TLSPermissive)}, echo)
	names := []string{"request_send_message", "request_oneway_empty", "goclient_send_request"}
	var frames [][]byte
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join("testdata", name+".frame"))
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, b)
	}
	// A ROCKETMQ binary header too (Java's other serialize type).
	bin := goldenFrames["request_send_message"]
	frames = append(frames, binaryFrame(t, bin))
	names = append(names, "binary header")

	answers := func(addr string) [][]byte {
		var got [][]byte
		for i, frame := range frames {
			nc := rawDial(t, addr)
			// Two writes (two segments with TCP_NODELAY); the sniff reads one byte
			// whatever arrives, so the rest is always read through the replay.
			if _, err := nc.Write(frame[:1]); err != nil {
				t.Fatal(err)
			}
			if _, err := nc.Write(frame[1:]); err != nil {
				t.Fatal(err)
			}
			req, err := DecodeFrame(bytes.NewReader(frame), 0)
			if err != nil {
				t.Fatalf("%s: %v", names[i], err)
			}
			if req.IsOneway() {
				// No answer: a follow-up request proves the connection still decodes.
				follow, _ := AppendFrame(nil, NewRequest(HeartBeat, nil, nil))
				if _, err := nc.Write(follow); err != nil {
					t.Fatal(err)
				}
			}
			resp, err := DecodeFrame(nc, 0)
			if err != nil {
				t.Fatalf("%s: %v", names[i], err)
			}
			enc, _ := AppendFrame(nil, resp)
			got = append(got, enc)
		}
		return got
	}
	want, got := answers(plain.Addr()), answers(sniffed.Addr())
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("%s: answer through the sniff differs:\n got %q\nwant %q", names[i], got[i], want[i])
		}
	}
}

// binaryFrame encodes c with a ROCKETMQ binary header (header_binary.go's layout).
func binaryFrame(t *testing.T, c *Command) []byte {
	t.Helper()
	var h bytes.Buffer
	be := func(v any) {
		switch x := v.(type) {
		case int16:
			h.Write([]byte{byte(x >> 8), byte(x)})
		case int32:
			h.Write([]byte{byte(x >> 24), byte(x >> 16), byte(x >> 8), byte(x)})
		}
	}
	be(c.Code)
	h.WriteByte(9) // GO
	be(c.Version)
	be(c.Opaque)
	be(c.Flag)
	be(int32(len(c.Remark)))
	h.WriteString(c.Remark)
	var ext bytes.Buffer
	for k, v := range c.Fields() {
		ext.Write([]byte{byte(len(k) >> 8), byte(len(k))})
		ext.WriteString(k)
		n := int32(len(v))
		ext.Write([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
		ext.WriteString(v)
	}
	be(int32(ext.Len()))
	h.Write(ext.Bytes())
	hl := h.Len()
	frameLen := 4 + hl + len(c.Body)
	out := []byte{byte(frameLen >> 24), byte(frameLen >> 16), byte(frameLen >> 8), byte(frameLen), 1, byte(hl >> 16), byte(hl >> 8), byte(hl)}
	out = append(out, h.Bytes()...)
	out = append(out, c.Body...)
	if _, err := DecodeFrame(bytes.NewReader(out), 0); err != nil {
		t.Fatalf("hand-built binary frame does not decode: %v", err)
	}
	return out
}

// TestTLSLargeBodies: frames larger than the write buffer and than one TLS
// record cross a TLS connection intact in both directions.
func TestTLSLargeBodies(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, ServerConfig{TLS: p.tlsConfig(TLSEnforcing)}, echo)
	c := newClient(t, ClientConfig{TLS: p.verifying()})
	for _, size := range []int{0, 1, 16 << 10, 64<<10 + 7, 3 << 20} {
		body := bytes.Repeat([]byte{byte(size)}, size)
		req := NewRequest(SendMessage, nil, body[:size/2])
		req.BodyParts = [][]byte{body[size/2:]}
		resp, err := c.Invoke(ctxTimeout(t, 5*time.Second), s.Addr(), req)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if !bytes.Equal(resp.Body, body) {
			t.Fatalf("size %d: body of %d bytes came back differently", size, len(resp.Body))
		}
	}
}

func TestTLSStartErrors(t *testing.T) {
	p := newPKI(t)
	for _, tc := range []struct {
		name string
		cfg  TLSConfig
		want error
	}{
		{"unknown mode", TLSConfig{Mode: "strict", CertFile: p.cert, KeyFile: p.key}, ErrInvalidTLSConfig},
		{"unknown client auth", TLSConfig{ClientAuth: "always", CertFile: p.cert, KeyFile: p.key}, ErrInvalidTLSConfig},
		{"no certificate", TLSConfig{Mode: TLSEnforcing}, ErrInvalidTLSConfig},
		{"missing certificate", TLSConfig{CertFile: filepath.Join(p.dir, "nope.pem"), KeyFile: p.key}, os.ErrNotExist},
		{"missing CA", TLSConfig{CertFile: p.cert, KeyFile: p.key, ClientCAFile: filepath.Join(p.dir, "nope.pem")}, os.ErrNotExist},
		{"CA file without certificates", TLSConfig{CertFile: p.cert, KeyFile: p.key, ClientCAFile: p.key}, ErrNoCertificate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			s := NewServer(ServerConfig{Addr: "127.0.0.1:0", TLS: &cfg}, echo)
			defer s.Close()
			if err := s.Start(); !errors.Is(err, tc.want) {
				t.Fatalf("Start() = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := ParseTLSMode("Enforcing"); !errors.Is(err, ErrInvalidTLSConfig) {
		t.Errorf("ParseTLSMode is case-sensitive like RocketMQ's TlsMode.parse: %v", err)
	}
}

// TestSniffedConnReplaysFirstByte: reads through the wrapper see the peeked byte,
// then the socket, with nothing lost or repeated, whatever the read sizes.
func TestSniffedConnReplaysFirstByte(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		_, _ = b.Write([]byte("ELLO"))
		_ = b.Close()
	}()
	c := &sniffedConn{Conn: a, first: []byte("H")}
	got, err := io.ReadAll(io.LimitReader(c, 5))
	if err != nil || string(got) != "HELLO" {
		t.Fatalf("read %q, %v", got, err)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool, what string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for "+what, args...)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
