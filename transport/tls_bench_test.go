package transport

import (
	"context"
	"crypto/tls"
	"testing"
	"time"
)

// BenchmarkInvokeTLS compares request/response round trips over loopback, plain
// and TLS (TLS 1.3, ECDSA P-256, AES-128-GCM as negotiated between two Go peers),
// in the same run: one caller at a time (latency) and 16 callers on one
// connection (throughput). The frame is benchCommand's 1 KiB SEND_MESSAGE; the
// handshake happens before the timer starts.
func BenchmarkInvokeTLS(b *testing.B) {
	p := newPKI(b)
	for _, mode := range []struct {
		name   string
		server *TLSConfig
		client *tls.Config
	}{
		{"plain", nil, nil},
		{"plain_sniffed", p.tlsConfig(TLSPermissive), nil},
		{"tls", p.tlsConfig(TLSEnforcing), p.verifying()},
	} {
		for _, par := range []int{1, 16} {
			name := mode.name + "/serial"
			if par > 1 {
				name = mode.name + "/parallel16"
			}
			b.Run(name, func(b *testing.B) {
				s := NewServer(ServerConfig{Addr: "127.0.0.1:0", TLS: mode.server}, echo)
				if err := s.Start(); err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				c := NewClient(ClientConfig{TLS: mode.client})
				defer c.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				if _, err := c.Invoke(ctx, s.Addr(), benchCommand()); err != nil { // dial + handshake
					b.Fatal(err)
				}
				cancel()
				frame, _ := AppendFrame(nil, benchCommand())
				b.SetBytes(int64(2 * len(frame)))
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				if par == 1 {
					for i := 0; i < b.N; i++ {
						ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
						if _, err := c.Invoke(ctx, s.Addr(), benchCommand()); err != nil {
							b.Fatal(err)
						}
						cancel()
					}
				} else {
					b.SetParallelism(par)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
							if _, err := c.Invoke(ctx, s.Addr(), benchCommand()); err != nil {
								b.Error(err)
							}
							cancel()
						}
					})
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
			})
		}
	}
}

// BenchmarkTLSHandshake is the cost of one new TLS connection (dial, handshake,
// first round trip) against a plaintext dial and round trip.
func BenchmarkTLSHandshake(b *testing.B) {
	p := newPKI(b)
	for _, mode := range []struct {
		name   string
		server *TLSConfig
		client *tls.Config
	}{
		{"plain", nil, nil},
		{"tls", p.tlsConfig(TLSEnforcing), p.verifying()},
	} {
		b.Run(mode.name, func(b *testing.B) {
			s := NewServer(ServerConfig{Addr: "127.0.0.1:0", TLS: mode.server}, echo)
			if err := s.Start(); err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ReportAllocs()
			for b.Loop() {
				c := NewClient(ClientConfig{TLS: mode.client})
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				if _, err := c.Invoke(ctx, s.Addr(), NewRequest(HeartBeat, nil, nil)); err != nil {
					b.Fatal(err)
				}
				cancel()
				_ = c.Close()
			}
		})
	}
}
