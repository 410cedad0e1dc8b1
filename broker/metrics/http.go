package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rocketraft/rocketraft/broker/replica"
)

// Handler serves /metrics (m's registry; 404 when m is nil), Go's profiler under
// /debug/pprof/, /healthz (the process answers) and /readyz (Readiness of
// status() with maxLag).
func Handler(m *Metrics, status func() replica.Status, maxLag uint64) http.Handler {
	mux := http.NewServeMux()
	if m != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(m.Registry(), promhttp.HandlerOpts{}))
	}
	// Go's profiler, for operators chasing CPU or memory (bound to adminListen,
	// which defaults to loopback).
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		ok, why := Readiness(status(), maxLag)
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = fmt.Fprintln(w, why)
	})
	return mux
}

// readHeaderTimeout bounds a client's request headers, so a connection that
// never finishes them cannot hold the listener (Slowloris); scrapers send theirs
// at once.
const readHeaderTimeout = 5 * time.Second

// shutdownGrace is how long Close lets in-flight scrapes finish.
const shutdownGrace = time.Second

// AdminHTTP is the broker's HTTP admin listener (adminListen).
type AdminHTTP struct {
	srv *http.Server
	ln  net.Listener
	err chan error
}

// StartAdminHTTP listens on addr and serves h until Close.
func StartAdminHTTP(addr string, h http.Handler) (*AdminHTTP, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin http listen adminListen=%s: %w", addr, err)
	}
	a := &AdminHTTP{
		srv: &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout},
		ln:  ln,
		err: make(chan error, 1),
	}
	go func() { a.err <- a.srv.Serve(ln) }()
	return a, nil
}

// Addr is the address it listens on (useful with port 0).
func (a *AdminHTTP) Addr() string { return a.ln.Addr().String() }

// Close stops the listener, giving in-flight scrapes shutdownGrace to finish.
func (a *AdminHTTP) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := a.srv.Shutdown(ctx)
	if serr := <-a.err; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
