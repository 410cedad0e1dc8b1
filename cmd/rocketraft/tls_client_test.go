package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/devcert"
)

// --tls-cert and --tls-key let admin, bench produce and the console reach a
// port with tlsServerNeedClientAuth=require: the same command without them is
// refused at the handshake. Half a pair, or a TLS flag without --tls, is an
// error naming the flags.
func TestClientCertificateFlagsReachARequirePort(t *testing.T) {
	dir := t.TempDir()
	ca, err := devcert.NewCA("test CA", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	caFile := write("ca.pem", ca.CertPEM())
	serverPEM, serverKey, err := ca.Issue("broker", []string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	clientPEM, clientKey, err := ca.Issue("operator", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0", TLS: &transport.TLSConfig{
		Mode: transport.TLSEnforcing, CertFile: write("server.pem", serverPEM), KeyFile: write("server.key", serverKey),
		ClientCAFile: caFile, ClientAuth: transport.TLSClientAuthRequire,
	}}, transport.HandlerFunc(func(context.Context, *transport.Conn, *transport.Command) *transport.Command {
		return transport.NewResponse(transport.Success, "")
	}))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	invoke := func(f clientTLSFlags) error {
		cfg, err := f.config()
		if err != nil {
			return err
		}
		c := transport.NewClient(transport.ClientConfig{DialTimeout: 2 * time.Second, TLS: cfg})
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err = c.Invoke(ctx, srv.Addr(), transport.NewRequest(transport.GetBrokerRuntimeInfo, nil, nil))
		return err
	}
	certFile, keyFile := write("operator.pem", clientPEM), write("operator.key", clientKey)
	if err := invoke(clientTLSFlags{enable: true, caFile: caFile, certFile: certFile, keyFile: keyFile}); err != nil {
		t.Fatalf("with --tls-cert and --tls-key: %v", err)
	}
	if err := invoke(clientTLSFlags{enable: true, caFile: caFile}); err == nil {
		t.Fatal("without a client certificate the require port answered")
	}
	for _, c := range []struct {
		f    clientTLSFlags
		want string
	}{
		{clientTLSFlags{enable: true, certFile: certFile}, "give both"},
		{clientTLSFlags{enable: true, keyFile: keyFile}, "give both"},
		{clientTLSFlags{certFile: certFile, keyFile: keyFile}, "--tls-cert=" + certFile + " needs --tls"},
		{clientTLSFlags{enable: true, certFile: filepath.Join(dir, "missing.pem"), keyFile: keyFile}, "missing.pem"},
	} {
		if _, err := c.f.config(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.f, err, c.want)
		}
	}
}
