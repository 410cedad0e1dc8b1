package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
)

// StreamTLS turns on mutual TLS between the raft peers of one group
// (broker.conf raftTlsEnable). Both directions are verified against the group's
// CA: a node accepts only peers presenting a certificate that chains to CAFile,
// and dials only peers whose certificate chains to it and names the dialled
// host (IP or DNS SAN). A node's certificate therefore needs the serverAuth and
// clientAuth extended key usages (transport/devcert issues both) and its raft
// host as a SAN.
//
// Every certificate the CA signed is a valid peer: give the group a CA of its
// own, not the one that issues client certificates for the client port.
type StreamTLS struct {
	// CertFile and KeyFile are this node's PEM pair, served to peers that dial in
	// and presented when dialling; reloaded when the files change (CertSource).
	CertFile, KeyFile string
	// CAFile holds the group's PEM CA certificates; read once, at start.
	CAFile string
	// HandshakeTimeout bounds one handshake, inbound or outbound (the dial's own
	// timeout bounds outbound ones too). Default DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// Logger receives certificate reloads and refused peers (remote address and
	// reason); nil discards them.
	Logger hclog.Logger
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
	pool, err := LoadCertPool(cfg.CAFile)
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
			ClientCAs:      pool,
		},
		client: &tls.Config{
			MinVersion:           tls.VersionTLS12,
			GetClientCertificate: src.GetClientCertificate,
			RootCAs:              pool,
		},
		timeout: cfg.HandshakeTimeout,
		log:     cfg.Logger,
		ctx:     ctx,
		cancel:  cancel,
		ready:   make(chan acceptResult),
	}
	go s.tls.acceptLoop(s.ln)
	return s, nil
}
