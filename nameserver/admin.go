package nameserver

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the registry /metrics serves: rocketraft_namesrv_* (labelled
// node_type="nameserver") and the Go runtime and process collectors.
func (s *Server) Metrics() *prometheus.Registry { return s.metrics.reg }

// AdminHandler serves the nameserver's HTTP admin listener (adminListen):
// /metrics, /healthz (200 while the process answers: liveness) and /readyz (200
// while the remoting port accepts connections, 503 before Start and after
// Close: readiness).
func (s *Server) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.serving.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintln(w, "remoting port not serving")
			return
		}
		_, _ = fmt.Fprintf(w, "ready: serving %s, %d brokers registered\n", s.Addr(), s.reg.LiveCount())
	})
	return mux
}
