// Package metrics is one broker node's observability: its Prometheus registry,
// with RocketMQ 5's metric names and labels where RocketMQ has one (messages
// and bytes in and out, message size, rpc latency, consumer lag, ready and
// in-flight messages, topic and group numbers) and rocketraft_* names in
// Prometheus conventions for the rest (raft role, indexes and timings, store
// offsets, flushes and disk); hashicorp/raft's own instrumentation mapped into
// it; and the admin HTTP listener that serves /metrics, pprof, /healthz and
// /readyz. docs/operations.md lists every metric.
//
// # Where each number comes from
//
//   - Stage (the first stage of the route chain) times every request:
//     rocketmq_rpc_latency and rocketraft_broker_requests_total.
//   - ObserveSent and ObservePulled are called by the send and pull handlers
//     (broker/clientapi's Deps.Sent and Deps.Pulled): a send is counted once,
//     by the leader, after the quorum write, so a follower that relays a send
//     counts nothing and a sum over nodes is the group's ingress. A pull is
//     counted by the node that served it, and records the group's next pull
//     offset (the in-flight and ready gauges).
//   - The scrape-time collectors read a Source: raft status and store gauges on
//     every node; the consumer gauges (lag, ready, in-flight, lag latency) and
//     topic and group numbers only on the leader, which holds the offsets not
//     yet replicated and serves the pulls (consumers pull from brokerId 0).
//   - ExportRaftInternals installs a go-metrics sink (raftsink.go) that maps
//     the useful raft keys onto snake_case families in seconds.
//
// # Labels and cardinality
//
// Every rocketraft_ and rocketmq_ series carries cluster, node_type="broker",
// node_id (brokerName-raftId) and broker_name; the Go runtime and process
// collectors stay unlabelled. The first Options.MaxTopics topics and
// Options.MaxGroups consumer groups (DefaultMaxTopics, DefaultMaxGroups) get
// their own series; later ones are reported as OtherLabel, summed, and counted
// by rocketraft_metrics_label_overflow_total.
//
// # Files, bottom up
//
// Each file refers only to the files below it:
//
//	readiness.go  Readiness, DefaultReadyMaxLag (pure: the /readyz rule)
//	source.go     Source (what scrapes read), parseLastContact
//	labels.go     Options, label names, labelCap, MessageType, system topics
//	traffic.go    messages and bytes in and out, message size, pull offsets
//	lag.go        the consumer gauges: queueCounts (pure), lagCollector
//	collector.go  the raft and store gauges over a Source
//	raftsink.go   the go-metrics sink and its name mapping
//	metrics.go    Metrics, New, Registry, Watch, ObserveSent, ObservePulled, ObserveApply, ObserveRoleChange
//	stage.go      Stage: the first stage of the route chain
//	raft.go       ExportRaftInternals
//	http.go       Handler, AdminHTTP, StartAdminHTTP
//
// # Imports
//
// It may import broker/replica (Status, Role), broker/route (Stage, Respond,
// Forwarded), fsm, store and transport. It must not import the broker root, the
// handler rooms (broker/clientapi, broker/adminapi), broker/clients or
// broker/node: the broker hands it plain functions (Source, ObserveSent,
// ObservePulled, ObserveApply, ObserveRoleChange) instead of being looked up by
// type assertion.
//
// # Concurrency
//
// Every method is safe for concurrent use. Watch may be called before or after
// scrapes begin (a scrape before Watch reports no raft, store or consumer
// gauges); the Source's functions are called on the scraping goroutine and must
// not block. ExportRaftInternals sets go-metrics' process-wide sink (raft
// reports nowhere else), so call it once per process.
//
// # Usage
//
//	m := metrics.New(metrics.Options{Cluster: "DefaultCluster", BrokerName: "broker-a", SelfID: "n0"})
//	_ = m.ExportRaftInternals()                     // once per process
//	rep := replica.NewNode(n, replica.NodeOptions{ObserveApply: m.ObserveApply})
//	serve := table.Serve(fwd.Stage, m.Stage())      // metrics first: it times the rest
//	capi := clientapi.New(clientapi.Deps{..., Sent: m.ObserveSent, Pulled: m.ObservePulled})
//	m.Watch(metrics.Source{Status: rep.Status, RaftStats: rep.RaftStats, Store: st, LongPollWaiters: pulls.Count,
//		Topics: rep.Topics, SubscriptionGroups: rep.SubscriptionGroups, Subscriptions: reg.Subscriptions,
//		CommittedOffset: offsets.Committed, Now: rep.Now})
//	// in the broker's role watcher, for every status st after prev:
//	m.ObserveRoleChange(prev.Term, st)
//	adm, _ := metrics.StartAdminHTTP(addr, metrics.Handler(m, rep.Status, metrics.DefaultReadyMaxLag))
package metrics
