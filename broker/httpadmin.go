package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultReadyMaxLag is how far (raft entries) this node's applied index may
// trail its commit index for /readyz to say ready. One group-commit entry holds
// up to a batch of messages, so 100 entries is well under a second of catch-up
// at the rates docs/performance.md measures.
const DefaultReadyMaxLag = 100

// Readiness decides /readyz from a status: the group has a leader and this node
// has applied all but maxLag of what it knows committed. It is pure so the rule
// is tested without a cluster.
func Readiness(st ReplicaStatus, maxLag uint64) (bool, string) {
	switch {
	case st.Role == RoleShutdown:
		return false, "node is shut down"
	case st.LeaderID == "":
		return false, "group has no leader"
	case st.CommitIndex > st.AppliedIndex+maxLag:
		return false, fmt.Sprintf("applied index %d trails commit index %d by more than %d",
			st.AppliedIndex, st.CommitIndex, maxLag)
	}
	return true, fmt.Sprintf("ready: role=%s leader=%s applied=%d commit=%d", st.Role, st.LeaderID, st.AppliedIndex, st.CommitIndex)
}

// AdminHandler serves /metrics (m's registry; 404 when m is nil), /healthz
// (the process answers) and /readyz (Readiness with maxLag).
func (b *Broker) AdminHandler(m *Metrics, maxLag uint64) http.Handler {
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
		ok, why := Readiness(b.replica.Status(), maxLag)
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = fmt.Fprintln(w, why)
	})
	return mux
}

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
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second},
		ln:  ln,
		err: make(chan error, 1),
	}
	go func() { a.err <- a.srv.Serve(ln) }()
	return a, nil
}

// Addr is the address it listens on (useful with port 0).
func (a *AdminHTTP) Addr() string { return a.ln.Addr().String() }

// Close stops the listener, giving in-flight scrapes a second to finish.
func (a *AdminHTTP) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := a.srv.Shutdown(ctx)
	if serr := <-a.err; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
