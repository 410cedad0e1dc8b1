// Package metrics is one broker node's observability: its Prometheus registry
// (request counters and latencies, raft role and apply counters, store flush
// times, and gauges read from raft and the store at scrape time), hashicorp/raft's
// own instrumentation forwarded into it, and the admin HTTP listener that serves
// /metrics, pprof, /healthz and /readyz.
//
// # Files, bottom up
//
// Each file refers only to the files below it:
//
//	readiness.go  Readiness, DefaultReadyMaxLag (pure: the /readyz rule)
//	source.go     Source (what scrapes read), parseLastContact
//	collector.go  the scrape-time collector over a Source
//	metrics.go    Metrics, New, Registry, Watch, ObserveApply, ObserveRoleChange
//	stage.go      Stage: the first stage of the route chain
//	raft.go       ExportRaftInternals
//	http.go       Handler, AdminHTTP, StartAdminHTTP
//
// # Imports
//
// It may import broker/replica (Status, Role), broker/route (Stage, Respond,
// Forwarded), store and transport. It must not import the broker root, the
// handler rooms (broker/clientapi, broker/adminapi) or broker/node: the broker
// hands it plain functions (Source, ObserveApply, ObserveRoleChange) instead of
// being looked up by type assertion.
//
// # Concurrency
//
// Every method is safe for concurrent use. Watch may be called before or after
// scrapes begin (a scrape before Watch reports no raft or store gauges); the
// Source's functions are called on the scraping goroutine and must not block.
// ExportRaftInternals sets go-metrics' process-wide sink (raft reports nowhere
// else), so call it once per process.
//
// # Usage
//
//	m := metrics.New()
//	_ = m.ExportRaftInternals()                     // once per process
//	rep := replica.NewNode(n, replica.NodeOptions{ObserveApply: m.ObserveApply})
//	serve := table.Serve(fwd.Stage, m.Stage())      // metrics first: it times the rest
//	m.Watch(metrics.Source{Status: rep.Status, RaftStats: rep.RaftStats, Store: st, LongPollWaiters: pulls.Count})
//	// in the broker's role watcher, for every status st after prev:
//	m.ObserveRoleChange(prev.Term, st)
//	adm, _ := metrics.StartAdminHTTP(addr, metrics.Handler(m, rep.Status, metrics.DefaultReadyMaxLag))
package metrics
