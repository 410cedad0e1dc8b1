package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
)

// StreamTLS turns on mutual TLS between the raft peers of one group
// (broker.conf raftTlsEnable). Both directions are verified against the group's
// CA: a node accepts only peers presenting a certificate that chains to CAFile
// and, with Peers set, names the host of one of the group's peers; it dials
// only peers whose certificate chains to it and names the dialled host (IP or
// DNS SAN). A node's certificate therefore needs the serverAuth and clientAuth
// extended key usages (transport/devcert issues both) and its raft host as a
// SAN.
//
// Without Peers every certificate the CA signed is a valid peer. With it, a
// client certificate of the same CA (an application's, for the client port)
// is refused on the raft port unless it names a peer's host; a group CA of its
// own is still the cleaner set-up.
type StreamTLS struct {
	// CertFile and KeyFile are this node's PEM pair, served to peers that dial in
	// and presented when dialling; reloaded when the files change (CertSource).
	CertFile, KeyFile string
	// CAFile holds the group's PEM CA certificates; read again when it
	// changes (CASource), so a CA is rotated without a restart.
	CAFile string
	// HandshakeTimeout bounds one handshake, inbound or outbound (the dial's own
	// timeout bounds outbound ones too). Default DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// Logger receives certificate reloads and refused peers (remote address and
	// reason); nil discards them.
	Logger hclog.Logger
	// Permissive accepts plaintext peers as well as TLS ones, told apart by
	// the first byte (0x16 starts a TLS handshake; a raft RPC starts with its
	// type, 0 to 4), and dials TLS first, then plaintext when the handshake
	// fails. It is for moving a running group to TLS one node at a time
	// (broker.conf raftTlsMode=permissive), and it is not a secure mode: a
	// plaintext peer, or anyone who can break a handshake, gets through.
	Permissive bool
	// Peers, when set, returns the raft addresses (host:port) of the group's
	// peers at the time a peer dials in; the peer's certificate must name the
	// host of one of them. It is asked once per inbound connection, and raft
	// keeps its connections, so it may be slow-ish but must not block on raft.
	Peers func() []string
}

// NewTLSStreamLayer is NewTCPStreamLayer with mutual TLS (StreamTLS). The pair
// and the CA must load, else no listener is left behind.
func NewTLSStreamLayer(bindAddr string, advertise net.Addr, cfg StreamTLS) (*StreamLayer, error) {
	if cfg.CertFile == "" || cfg.KeyFile == "" || cfg.CAFile == "" {
		return nil, fmt.Errorf("raft stream TLS: certificate, key and CA files are required: %w", ErrInvalidTLSConfig)
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	src, err := NewCertSource(cfg.CertFile, cfg.KeyFile, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("raft stream TLS: %w", err)
	}
	cas, err := NewCASource(cfg.CAFile, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("raft stream TLS: %w", err)
	}
	s, err := NewTCPStreamLayer(bindAddr, advertise)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.tls = &streamTLS{
		server: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: src.GetCertificate,
			ClientAuth:     tls.RequireAndVerifyClientCert,
			VerifyConnection: func(cs tls.ConnectionState) error {
				if cfg.Peers == nil || len(cs.PeerCertificates) == 0 {
					return nil // no peer list: any certificate the CA signed
				}
				return certNamesAPeer(cs.PeerCertificates[0], cfg.Peers())
			},
		},
		client: &tls.Config{
			MinVersion:           tls.VersionTLS12,
			GetClientCertificate: src.GetClientCertificate,
			InsecureSkipVerify:   true, // dial verifies the peer against the CA file of the moment (verifyingDial)
		},
		timeout:    cfg.HandshakeTimeout,
		permissive: cfg.Permissive,
		log:        cfg.Logger,
		ctx:        ctx,
		cancel:     cancel,
		ready:      make(chan acceptResult),
	}
	// The CA file is read again when it changes, both ways (CASource); dial
	// checks the dialled peer with verifyingDial.
	verifyClientsWith(s.tls.server, cas)
	s.tls.cas = cas
	go s.tls.acceptLoop(s.ln)
	return s, nil
}

// certNamesAPeer checks that cert names (as an IP or DNS SAN) the host of one
// of the raft addresses peers, and says which names and hosts did not match.
func certNamesAPeer(cert *x509.Certificate, peers []string) error {
	hosts := make([]string, 0, len(peers))
	for _, addr := range peers {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		if cert.VerifyHostname(host) == nil {
			return nil
		}
		hosts = append(hosts, host)
	}
	var names []string
	names = append(names, cert.DNSNames...)
	for _, ip := range cert.IPAddresses {
		names = append(names, ip.String())
	}
	return fmt.Errorf("certificate %q names %v, none of the group's raft peers %v", cert.Subject.CommonName, names, hosts)
}
