package main

import (
	"fmt"
	"path/filepath"
)

// tlsLines are the tls* keys of a dev node's config: every client port enforcing
// TLS with the throw-away pair, brokers dialling the nameserver and their
// leader over TLS, verifying against the dev CA, and mutual TLS between the
// raft peers against the same CA. nil without --tls.
func (d *devCluster) tlsLines(broker bool) []string {
	if !d.tls {
		return nil
	}
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		return a
	}
	lines := []string{
		"tlsMode=enforcing",
		"tlsServerCertPath=" + abs(d.certs.Cert),
		"tlsServerKeyPath=" + abs(d.certs.Key),
	}
	if broker {
		lines = append(lines, "tlsServerTrustCertPath="+abs(d.certs.CACert), "tlsClientEnable=true", "raftTlsEnable=true")
	}
	return lines
}

// printTLS tells the user that plaintext clients are refused and what to use.
func (d *devCluster) printTLS() {
	fmt.Printf("TLS is on (tlsMode=enforcing on the nameserver and every broker): clients must use TLS;\n")
	fmt.Printf("plaintext connections are closed. The raft ports run mutual TLS (raftTlsEnable): a peer\n")
	fmt.Printf("without a certificate of this CA naming its raft host is refused. The certificate is for 127.0.0.1, ::1 and\n")
	fmt.Printf("localhost, signed by a CA made for this run:\n")
	fmt.Printf("  CA           %s\n", d.certs.CACert)
	fmt.Printf("  certificate  %s (key %s)\n", d.certs.Cert, d.certs.Key)
	fmt.Printf("  Go client:   producer.WithTls(true) / consumer.WithTls(true) (it does not verify the certificate)\n")
	fmt.Printf("  Java client: -Dtls.enable=true (add -Dtls.test.mode.enable=false -Dtls.client.authServer=true\n")
	fmt.Printf("               -Dtls.client.trustCertPath=%s to verify it)\n", d.certs.CACert)
	fmt.Printf("  rocketraft:  --tls, and --tls-ca to verify (bench consume runs the Go client: --tls only)\n\n")
}

// exampleTLS are the flags a printed example needs to reach this cluster:
// " --tls --tls-ca <ca>" for a command that can verify the server, " --tls"
// for one that cannot, "" without --tls.
func (d *devCluster) exampleTLS(verify bool) string {
	switch {
	case !d.tls:
		return ""
	case verify:
		return " --tls --tls-ca " + d.certs.CACert
	}
	return " --tls"
}
