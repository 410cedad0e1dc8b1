package main

import (
	"crypto/tls"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/config"
	"github.com/rocketraft/rocketraft/transport"
)

// serverTLS maps the tls* keys of a client port onto the transport; nil when
// tlsMode=disabled, so the port serves plaintext exactly as without TLS.
func serverTLS(t config.TLSServer) (*transport.TLSConfig, error) {
	if !t.Enabled() {
		return nil, nil
	}
	mode, err := transport.ParseTLSMode(t.Mode)
	if err != nil {
		return nil, err
	}
	auth, err := transport.ParseTLSClientAuth(t.NeedClientAuth)
	if err != nil {
		return nil, err
	}
	return &transport.TLSConfig{
		Mode: mode, CertFile: t.CertPath, KeyFile: t.KeyPath,
		ClientCAFile: t.TrustCertPath, ClientAuth: auth,
	}, nil
}

// brokerClientTLS is the broker's outbound TLS (tlsClientEnable): its own pair as
// client certificate, and tlsServerTrustCertPath, when set, to verify the
// nameservers and peers it dials. nil when tlsClientEnable=false.
func brokerClientTLS(cfg config.Broker, log hclog.Logger) (*tls.Config, error) {
	if !cfg.TLSClientEnable {
		return nil, nil
	}
	return transport.ClientTLS(cfg.TLS.CertPath, cfg.TLS.KeyPath, cfg.TLS.TrustCertPath, log.Named("tls-client"))
}
