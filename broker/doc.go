// Package broker wires one node of a broker group: the rooms below it, the
// remoting server, the role watcher, nameserver registration and the periodic
// loops. What a request does lives in the rooms; this package only builds them
// and runs the node's lifecycle.
//
// # Usage
//
//	n, _ := node.Open(nodeCfg)                                    // raft + FSM + store
//	rep := replica.NewNode(n, replica.NodeOptions{ObserveApply: m.ObserveApply})
//	b, _ := broker.New(cfg, n.Store(), rep)                       // cfg.Metrics = m, optional
//	b.Start()                                                     // listen, register, loops
//	defer b.Close()                                               // hand off leadership, unregister
//
// # The rooms (docs/architecture.md has the tour)
//
//	route/        the code → handler table, the handler chain (metrics →
//	              authentication/authorisation → forwarding → handler), the one
//	              error → response code table
//	clientapi/    producer and consumer codes: send, pull, offsets, heartbeats,
//	              locks, send-back, END_TRANSACTION, request/reply, queries
//	adminapi/     admin codes: topics, groups, runtime info, raft membership,
//	              consumer progress, offset reset, running-info relay
//	clients/      soft state of connected clients: heartbeats, queue locks,
//	              compiled filters, held pulls
//	offsets/      consumer offsets buffered on the leader, replicated once a second
//	schedule/     delay levels and timed delivery: the leader-only re-put service
//	transaction/  half messages and the leader-only check-back service
//	replica/      the replica vocabulary and its adapter onto broker/node
//	metrics/      Prometheus registry, the metrics stage, /metrics /healthz /readyz
//	loop/         the one ticker helper of every periodic loop
//	node/         the raft node itself (raft, FSM, stores, group commit)
//	filter/       the SQL92 expression language
//
// Files here, bottom up: config.go, leader_services.go, broker.go (the Broker
// type), disk.go, register.go, roles.go, loops.go, start.go (New, Start, Close:
// they reference everything else).
//
// It may import fsm, raftlog, store, transport and nameserver (client types only).
//
// # Concurrency
//
// The transport runs every request on its own goroutine; a handler may block (a
// held pull) without delaying others on the connection. The broker's goroutines
// are the role watcher and the loops (registration, offset flush, client expiry,
// retention, disk check, preferred leader); leader-only services (schedule,
// transaction check-back) start on the LEADER role event, which broker/node
// publishes only after the leader barrier, and stop on any other role. Everything
// they change goes through raft, so a new leader resumes exactly where the old
// one stopped.
package broker
