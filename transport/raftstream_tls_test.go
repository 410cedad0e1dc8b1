package transport

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/internal/proctest"
)

// newTLSStreamLayer is a TLS stream layer on a loopback port serving pair
// (cert, key) and trusting caFile, logging into out.
func newTLSStreamLayer(t *testing.T, cert, key, caFile string, out *proctest.SyncBuffer) *StreamLayer {
	t.Helper()
	sl, err := NewTLSStreamLayer("127.0.0.1:0", nil, StreamTLS{CertFile: cert, KeyFile: key, CAFile: caFile,
		HandshakeTimeout: 2 * time.Second, Logger: testLogger(t, out)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sl.Close() })
	return sl
}

// voteResponder answers every RequestVote on tr with Granted until the test ends.
func voteResponder(t *testing.T, tr *raft.NetworkTransport) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case rpc := <-tr.Consumer():
				req, ok := rpc.Command.(*raft.RequestVoteRequest)
				if !ok {
					rpc.Respond(nil, errors.New("unexpected RPC"))
					continue
				}
				rpc.Respond(&raft.RequestVoteResponse{Term: req.Term, Granted: true}, nil)
			case <-done:
				return
			}
		}
	}()
}

func requestVote(from *raft.NetworkTransport, to raft.ServerAddress) (raft.RequestVoteResponse, error) {
	var resp raft.RequestVoteResponse
	err := from.RequestVote("peer", to, &raft.RequestVoteRequest{Term: 7, LastLogIndex: 3, LastLogTerm: 6}, &resp)
	return resp, err
}

// TestTLSStreamLayerCarriesRaftRPC: two nodes with certificates of one CA run
// raft RPCs both ways over mutual TLS, and each side sees the other's verified
// certificate.
func TestTLSStreamLayerCarriesRaftRPC(t *testing.T) {
	p := newPKI(t)
	a := newTLSStreamLayer(t, p.cert, p.key, p.caFile, nil)
	b := newTLSStreamLayer(t, p.clientCert, p.clientKey, p.caFile, nil)
	ta := raft.NewNetworkTransport(a, 2, 2*time.Second, io.Discard)
	tb := raft.NewNetworkTransport(b, 2, 2*time.Second, io.Discard)
	defer ta.Close()
	defer tb.Close()
	voteResponder(t, ta)
	voteResponder(t, tb)
	for _, dir := range []struct {
		from *raft.NetworkTransport
		to   raft.ServerAddress
	}{{ta, tb.LocalAddr()}, {tb, ta.LocalAddr()}} {
		resp, err := requestVote(dir.from, dir.to)
		if err != nil || !resp.Granted || resp.Term != 7 {
			t.Fatalf("RequestVote to %s over TLS: %+v %v", dir.to, resp, err)
		}
	}

	// The stream layer itself: the dialled conn is TLS with the peer's
	// certificate (verified by serverVerifier, against the CA file of the
	// moment, so crypto/tls records no chains for it), and the accepted one
	// carries the dialler's verified client certificate.
	c := newTLSStreamLayer(t, p.cert, p.key, p.caFile, nil)
	accepted := make(chan net.Conn, 1)
	go func() {
		if conn, err := c.Accept(); err == nil {
			accepted <- conn
		}
	}()
	out, err := b.Dial(raft.ServerAddress(c.Addr().String()), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if st := out.(*tls.Conn).ConnectionState(); !st.HandshakeComplete || st.PeerCertificates[0].Subject.CommonName != "server-one" {
		t.Fatalf("dialled conn: handshake complete %v, peer %v", st.HandshakeComplete, st.PeerCertificates)
	}
	select {
	case in := <-accepted:
		defer in.Close()
		if st := in.(*tls.Conn).ConnectionState(); len(st.VerifiedChains) == 0 || st.PeerCertificates[0].Subject.CommonName != "client-one" {
			t.Fatalf("accepted conn: verified chains %d, peer %v", len(st.VerifiedChains), st.PeerCertificates)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no connection accepted")
	}
}

// TestTLSStreamLayerRefusesForeignCA: a node whose certificate another CA
// signed is refused at the handshake whichever side dials, also when it trusts
// the group's CA (it knows the public CA certificate but holds no pair signed
// by it), and so is a plaintext raft peer; each refusal is logged with the
// remote address and the reason, and none reaches raft.
func TestTLSStreamLayerRefusesForeignCA(t *testing.T) {
	group, other := newPKI(t), newPKI(t)
	var logA, logX proctest.SyncBuffer
	a := newTLSStreamLayer(t, group.cert, group.key, group.caFile, &logA)
	ta := raft.NewNetworkTransport(a, 2, 2*time.Second, io.Discard)
	defer ta.Close()
	reached := make(chan struct{}, 8)
	go func() {
		for range ta.Consumer() {
			reached <- struct{}{}
		}
	}()

	// x: another CA's pair, trusting that CA.
	x := newTLSStreamLayer(t, other.cert, other.key, other.caFile, &logX)
	if _, err := x.Dial(raft.ServerAddress(a.Addr().String()), 2*time.Second); err == nil {
		t.Fatal("foreign node dialled the group")
	}
	waitFor(t, func() bool { return strings.Contains(logA.String(), "raft peer refused") }, "a to log the refused dial-in:\n%s", logA.String())
	if _, err := a.Dial(raft.ServerAddress(x.Addr().String()), 2*time.Second); err == nil {
		t.Fatal("group node dialled a foreign node")
	}
	if l := logA.String(); !strings.Contains(l, "remote="+x.Addr().String()) || !strings.Contains(l, "unknown authority") {
		t.Fatalf("a's log lacks the refused peer's address or reason:\n%s", l)
	}

	// y: another CA's pair, trusting the group's CA. Under TLS 1.3 its own dial
	// may finish before a has checked its certificate; a refuses it then, so
	// every RPC fails.
	before := strings.Count(logA.String(), "raft peer refused")
	y := newTLSStreamLayer(t, other.clientCert, other.clientKey, group.caFile, nil)
	ty := raft.NewNetworkTransport(y, 2, 2*time.Second, io.Discard)
	defer ty.Close()
	if _, err := requestVote(ty, ta.LocalAddr()); err == nil {
		t.Fatal("RequestVote from a node with a foreign certificate succeeded")
	}
	waitFor(t, func() bool { return strings.Count(logA.String(), "raft peer refused") > before }, "a to refuse y:\n%s", logA.String())

	// A plaintext raft transport is refused too.
	tp := raft.NewNetworkTransport(newStreamLayer(t), 2, 2*time.Second, io.Discard)
	defer tp.Close()
	if _, err := requestVote(tp, ta.LocalAddr()); err == nil {
		t.Fatal("plaintext RequestVote succeeded")
	}
	select {
	case <-reached:
		t.Fatal("a refused peer's RPC reached raft")
	default:
	}
	t.Logf("a's refusals:\n%s", logA.String())
}

// TestTLSStreamLayerRefusesACertificateNamingNoPeer: with Peers set, a node
// accepts a dialling peer only if its certificate, signed by the group's CA,
// also names the host of one of the group's peers; another certificate of the
// same CA (an application's client certificate) is refused and logged with
// the names it carries. The list is asked per connection, so a peer added to
// the group later is accepted from then on.
func TestTLSStreamLayerRefusesACertificateNamingNoPeer(t *testing.T) {
	p := newPKI(t)
	var peers atomic.Pointer[[]string]
	peers.Store(&[]string{"127.0.0.1:40911", "10.1.2.3:40921"})
	var logA proctest.SyncBuffer
	a, err := NewTLSStreamLayer("127.0.0.1:0", nil, StreamTLS{CertFile: p.cert, KeyFile: p.key, CAFile: p.caFile,
		HandshakeTimeout: 2 * time.Second, Logger: testLogger(t, &logA), Peers: func() []string { return *peers.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	ta := raft.NewNetworkTransport(a, 2, 2*time.Second, io.Discard)
	defer ta.Close()
	voteResponder(t, ta)

	certPEM, keyPEM, err := p.ca.Issue("app-client", []string{"app.example"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	x := newTLSStreamLayer(t, p.write(t, "app.pem", certPEM), p.write(t, "app.key", keyPEM), p.caFile, nil)
	tx := raft.NewNetworkTransport(x, 2, 2*time.Second, io.Discard)
	defer tx.Close()
	if _, err := requestVote(tx, ta.LocalAddr()); err == nil {
		t.Fatal("RequestVote from a certificate naming no peer succeeded")
	}
	waitFor(t, func() bool { return strings.Contains(logA.String(), "none of the group's raft peers") },
		"a to refuse the application's certificate:\n%s", logA.String())
	if l := logA.String(); !strings.Contains(l, "app.example") || !strings.Contains(l, "10.1.2.3") {
		t.Fatalf("the refusal does not name the certificate's names and the peers:\n%s", l)
	}

	// A peer's certificate (it names 127.0.0.1, the first peer's host) is accepted.
	b := newTLSStreamLayer(t, p.clientCert, p.clientKey, p.caFile, nil)
	tb := raft.NewNetworkTransport(b, 2, 2*time.Second, io.Discard)
	defer tb.Close()
	if resp, err := requestVote(tb, ta.LocalAddr()); err != nil || !resp.Granted {
		t.Fatalf("RequestVote from a peer's certificate: %+v %v", resp, err)
	}

	// The same certificate once 127.0.0.1 is no longer a peer: refused on a new connection.
	peers.Store(&[]string{"10.1.2.3:40921"})
	c := newTLSStreamLayer(t, p.clientCert, p.clientKey, p.caFile, nil)
	tc := raft.NewNetworkTransport(c, 2, 2*time.Second, io.Discard)
	defer tc.Close()
	if _, err := requestVote(tc, ta.LocalAddr()); err == nil {
		t.Fatal("RequestVote from a host no longer among the peers succeeded")
	}
}

func TestTLSStreamLayerConfigErrors(t *testing.T) {
	p := newPKI(t)
	for _, cfg := range []StreamTLS{
		{CertFile: p.cert, KeyFile: p.key},                         // no CA
		{CertFile: p.cert, CAFile: p.caFile},                       // no key
		{CertFile: p.cert, KeyFile: p.clientKey, CAFile: p.caFile}, // key of another pair
		{CertFile: p.cert, KeyFile: p.key, CAFile: p.key},          // CA file without a certificate
	} {
		if sl, err := NewTLSStreamLayer("127.0.0.1:0", nil, cfg); err == nil {
			_ = sl.Close()
			t.Errorf("%+v: no error", cfg)
		}
	}
	if _, err := NewTLSStreamLayer("127.0.0.1:0", nil, StreamTLS{}); !errors.Is(err, ErrInvalidTLSConfig) {
		t.Errorf("empty config: err = %v, want ErrInvalidTLSConfig", err)
	}
}

// TestTLSStreamLayerPermissive: a permissive node (raftTlsMode=permissive)
// talks raft both ways with a plaintext node and with a TLS node, which is
// what lets a running group move to TLS one node at a time; a TLS node
// (enforcing) still refuses the plaintext one.
func TestTLSStreamLayerPermissive(t *testing.T) {
	p := newPKI(t)
	perm, err := NewTLSStreamLayer("127.0.0.1:0", nil, StreamTLS{CertFile: p.cert, KeyFile: p.key, CAFile: p.caFile,
		HandshakeTimeout: 2 * time.Second, Logger: testLogger(t, nil), Permissive: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = perm.Close() })
	tperm := raft.NewNetworkTransport(perm, 2, 2*time.Second, io.Discard)
	defer tperm.Close()
	tplain := raft.NewNetworkTransport(newStreamLayer(t), 2, 2*time.Second, io.Discard)
	defer tplain.Close()
	ttls := raft.NewNetworkTransport(newTLSStreamLayer(t, p.clientCert, p.clientKey, p.caFile, nil), 2, 2*time.Second, io.Discard)
	defer ttls.Close()
	for _, tr := range []*raft.NetworkTransport{tperm, tplain, ttls} {
		voteResponder(t, tr)
	}
	for _, c := range []struct {
		name     string
		from, to *raft.NetworkTransport
	}{
		{"plaintext to permissive", tplain, tperm},
		{"permissive to plaintext (TLS first, then plaintext)", tperm, tplain},
		{"TLS to permissive", ttls, tperm},
		{"permissive to TLS", tperm, ttls},
	} {
		if resp, err := requestVote(c.from, c.to.LocalAddr()); err != nil || !resp.Granted {
			t.Fatalf("%s: %+v %v", c.name, resp, err)
		}
	}
	if _, err := requestVote(tplain, ttls.LocalAddr()); err == nil {
		t.Fatal("plaintext to an enforcing TLS node succeeded")
	}
}
