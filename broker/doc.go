// Package broker wires one node of a broker group and serves the RocketMQ remoting
// protocol on it: request processors, long polling, the client registry, role
// changes and nameserver registration, leader-only services, and forwarding of
// writes to the leader. It may import fsm, raftlog, store, transport and nameserver
// (client types only); broker/node holds the raft node itself.
//
// # Usage
//
//	n, _ := node.Open(nodeCfg)                                      // raft + FSM + store
//	b, _ := broker.New(cfg, n.Store(), broker.NewNodeReplica(n))   // or WithMetrics(...)
//	b.Start()                                                       // listen, register, loops
//	defer b.Close()                                                 // hand off leadership, unregister
//
// # Where things are
//
//	serve.go            dispatch by request code; unknown codes → REQUEST_CODE_NOT_SUPPORTED
//	send.go             SEND 10/310/320: validate, encode once, replicate (group commit), answer
//	schedule*.go        DELAY levels and TIMER_DELIVER_MS: SCHEDULE_TOPIC_XXXX + leader service
//	sendback.go         CONSUMER_SEND_MSG_BACK: retry topics and DLQ
//	transaction.go      half messages, END_TRANSACTION, check-back service
//	reply.go            request/reply: SEND_REPLY_MESSAGE, push to the requester
//	pull.go, longpoll.go PULL with TAG/SQL92 filters; held pulls woken by dispatch
//	clients.go          heartbeats: consumer groups, subscriptions, producer connections
//	lock.go             orderly consumption queue locks (leader memory, see decision 0003)
//	offsets.go          consumer offsets: buffered on the leader, replicated once a second
//	forward.go          followers relay writes to the leader (decision 0001)
//	register.go         nameserver registration: brokerId 0 = leader, stateVersion = term
//	maintenance.go      retention, disk-full guard, preferred leader, hand-off on shutdown
//	admin_raft.go, consumermgmt.go, handlers_*.go   admin and query codes
//	metrics.go, httpadmin.go                        Prometheus, /healthz, /readyz, pprof
//	replica.go, node_adapter.go                     the Replica seam over broker/node + fsm
//	codes.go            the one error → response code table (decision 0002)
//
// # Concurrency
//
// The transport runs every request on its own goroutine; a handler may block (a
// held pull) without delaying others on the connection. Replicated state lives
// behind Replica (raft + FSM); soft state (clients, locks, held pulls, pending
// offsets) behind their own locks. The broker's goroutines are the role watcher,
// registration, offset flush, client expiry, retention, disk check and preferred-
// leader loops; leader-only services (schedule, transaction check-back) start on
// the LEADER role event, which broker/node publishes only after the leader barrier,
// and stop on any other role. Everything they change goes through raft, so a new
// leader resumes exactly where the old one stopped.
package broker
