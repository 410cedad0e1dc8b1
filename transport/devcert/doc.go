// Package devcert makes throw-away TLS material: a self-signed CA (ECDSA P-256)
// and leaf certificates it signs, for `rocketraft dev --tls` and for tests. It is
// not a certificate authority for production: keys are written unencrypted and
// nothing is ever revoked.
//
// A leaf carries both the serverAuth and clientAuth extended key usages, so one
// pair serves a node's client port and its own outbound connections when the
// peer asks for a client certificate (tlsServerNeedClientAuth=require). Keys are
// PEM PKCS#8 ("PRIVATE KEY"), the form RocketMQ's TlsHelper reads too.
//
// # Imports
//
// Standard library only; no project package.
//
// # Concurrency
//
// A *CA is immutable after NewCA; Issue may be called from several goroutines.
//
// # Usage
//
//	ca, _ := devcert.NewCA("rocketraft dev CA", time.Now())
//	certPEM, keyPEM, _ := ca.Issue("broker", []string{"127.0.0.1", "localhost"}, time.Now())
//
//	files, _ := devcert.Write("data/dev/tls", time.Now()) // ca.pem, node.pem, node.key
package devcert
