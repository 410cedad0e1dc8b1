package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/spf13/pflag"

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

// raftStream is the raft port's stream layer: mutual TLS against the group's
// CA (tlsServerTrustCertPath) with raftTlsEnable, plain TCP without. Under TLS
// a peer dialling in must present a certificate naming the host of one of
// peers' addresses.
func raftStream(cfg config.Broker, bind string, advertise net.Addr, peers *raftPeers, log hclog.Logger) (*transport.StreamLayer, error) {
	if !cfg.RaftTLSEnable {
		return transport.NewTCPStreamLayer(bind, advertise)
	}
	return transport.NewTLSStreamLayer(bind, advertise, transport.StreamTLS{
		CertFile: cfg.TLS.CertPath, KeyFile: cfg.TLS.KeyPath, CAFile: cfg.TLS.TrustCertPath,
		Logger: log.Named("raft-tls"), Peers: peers.addrs, Permissive: cfg.RaftTLSMode == config.TLSModePermissive,
	})
}

// raftPeers are the raft addresses a node accepts peers from: the ones
// dLegerPeers names, and, once the node runs, every server of the group's
// current configuration. A node added with `admin raft add-voter` is in the
// latter only, and the other nodes' broker.conf need not list it.
type raftPeers struct {
	configured []string
	current    atomic.Pointer[func() ([]raft.Server, error)]
}

func newRaftPeers(cfg config.Broker) *raftPeers {
	p := &raftPeers{}
	for _, peer := range cfg.Peers {
		p.configured = append(p.configured, peer.Addr)
	}
	return p
}

// follow adds the servers of configuration (the raft node's Configuration) from now on.
func (p *raftPeers) follow(configuration func() ([]raft.Server, error)) {
	p.current.Store(&configuration)
}

func (p *raftPeers) addrs() []string {
	out := append([]string(nil), p.configured...)
	if f := p.current.Load(); f != nil {
		servers, _ := (*f)() // on an error, the configured peers alone
		for _, s := range servers {
			out = append(out, string(s.Address))
		}
	}
	return out
}

// clientTLSFlags are --tls, --tls-ca, --tls-cert and --tls-key of the admin,
// bench and console commands.
type clientTLSFlags struct {
	enable   bool
	caFile   string
	certFile string
	keyFile  string
}

// register adds --tls, and --tls-ca, --tls-cert and --tls-key when the
// command's client can verify a server and present a certificate (bench
// consume runs the rocketmq-go client, which can do neither).
func (f *clientTLSFlags) register(fs *pflag.FlagSet, verify bool) {
	if !verify {
		fs.BoolVar(&f.enable, "tls", false, "dial the nameservers and brokers over TLS (needed when they run tlsMode=enforcing); the rocketmq-go client does not verify their certificates")
		return
	}
	fs.BoolVar(&f.enable, "tls", false, "dial the nameservers and brokers over TLS (needed when they run tlsMode=enforcing)")
	fs.StringVar(&f.caFile, "tls-ca", "", "with --tls: PEM CA file to verify the servers' certificates against; empty trusts any server (RocketMQ's client default)")
	fs.StringVar(&f.certFile, "tls-cert", "", "with --tls: PEM client certificate (chain) to present, for servers with tlsServerNeedClientAuth=require; needs --tls-key")
	fs.StringVar(&f.keyFile, "tls-key", "", "with --tls: PEM private key of --tls-cert")
}

// config is the tls.Config to dial with, nil without --tls. A TLS flag
// without --tls, or half of a pair, is an error rather than a silent
// plaintext run or an anonymous handshake.
func (f *clientTLSFlags) config() (*tls.Config, error) {
	if !f.enable {
		for _, fl := range []struct{ name, val string }{{"--tls-ca", f.caFile}, {"--tls-cert", f.certFile}, {"--tls-key", f.keyFile}} {
			if fl.val != "" {
				return nil, fmt.Errorf("%s=%s needs --tls", fl.name, fl.val)
			}
		}
		return nil, nil
	}
	if (f.certFile == "") != (f.keyFile == "") {
		return nil, fmt.Errorf("--tls-cert=%q and --tls-key=%q: give both (a client certificate and its key) or neither", f.certFile, f.keyFile)
	}
	return transport.ClientTLS(f.certFile, f.keyFile, f.caFile, nil)
}
