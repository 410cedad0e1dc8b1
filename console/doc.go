// Package console is the Go side of rocketraft's web console: an HTTP server
// that serves the embedded front-end (console/dist, built from the TypeScript
// sources and committed) and a JSON and server-sent-events API over the
// cluster, as docs/console-api.md specifies it.
//
// It owns: the API's handlers and their error shape, the sessions of users
// who logged in with an ACL account, the confirmation rule of every state
// change, and the sampler that keeps ten minutes of cluster time series and
// the rates (messages in and out per second) computed from them.
//
// Imports: internal/admin (every request to the cluster goes through it),
// transport (request codes, credentials) and nameserver (the route and topic
// types admin answers with). Never broker or its rooms: the console is a
// client, like `rocketraft admin`; internal/archtest holds the rule.
//
// Files: server.go (config, routing, the endpoint wrapper), errors.go (the
// error document and the confirmation rule), session.go (ACL logins),
// cluster.go, events.go and timeline.go (the cluster view, its stream and the
// leadership timeline), topics.go, groups.go, messages.go, raft.go (the
// resources and their previews), sampler.go and series.go (samples, rates,
// time series), assets.go (the embedded page).
//
// Concurrency: a Server is safe for concurrent use. One sampler goroutine
// (started by Run) asks the cluster for a snapshot every second and for topic
// and group numbers every five, and fans snapshots out to the event streams;
// handlers read its latest data under its lock and otherwise call the admin
// client directly. Time comes from Config.Now so the series and rates are
// testable without sleeping.
//
// Usage:
//
//	srv, err := console.New(console.Config{Admin: admin.New(admin.Config{...}), Listen: "127.0.0.1:8080"})
//	if err == nil {
//		err = srv.Run(ctx) // serves until ctx ends
//	}
package console
