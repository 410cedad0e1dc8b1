// Package clientapi serves the request codes producers and consumers send:
// SEND (10/310/320) and its rewrites (delay levels, timed delivery, retry and
// DLQ, half messages), CONSUMER_SEND_MSG_BACK, END_TRANSACTION, request/reply,
// PULL with TAG/SQL92 filters and long polling, consumer offsets, heartbeats and
// consumer lists, CHECK_CLIENT_CONFIG, orderly-consumption queue locks, and
// queries by key or id. LITE_PULL_MESSAGE is PULL under another code.
//
// # A produce request
//
// route.Table → (metrics, auth, forwarding stages) → send.go handleSend: parse
// the header, check disk and topic, rewrite the placement (placement.go: delay,
// timer, DLQ, half message), encode the record once, replicate it through
// replica.Messages (group commit), report each stored message to Deps.Sent
// (metrics: counted here, on the leader, once), answer with the offsetMsgId.
// When the replica is a replica.AsyncMessages the send is deferred
// (route.Request.Defer): the answer is built and sent on the replica's
// completion goroutine, so no handler goroutine waits for the raft entry.
// Sends run on the connection's reader goroutine (route.Table.HandleInline);
// a metadata write there (creating the topic, a system topic or a retry
// group) answers errWouldBlock, and the send starts over on a goroutine. A
// pull reports its next offset and what it returned to Deps.Pulled. api.go
// holds the dependencies. Nothing here checks whether this node leads: routes.go registers
// writes with route.Leader, and the forwarding stage relays them.
//
// Files, bottom up: api.go, placement.go, send.go, reply.go, sendback.go,
// transaction.go, pull.go, offsets.go, consumers.go, clientconfig.go
// (CHECK_CLIENT_CONFIG), query.go, routes.go (the table, at the top: it
// references every handler).
//
// It may import broker/replica, broker/route, broker/clients, broker/offsets,
// broker/schedule, broker/transaction, fsm, store and transport.
//
// # Concurrency
//
// Handlers run on the transport's per-request goroutines, except the sends and
// the pulls of a queue's newest messages, which run on the connection's reader
// goroutine. A held pull is deferred and parks no goroutine: whatever fires
// its waiter (the store's dispatch goroutine, a timer, the connection's close)
// reads and answers it. API's only mutable state of its own is maxMessageSize, an
// atomic the config codes change live: replicated state is behind replica,
// soft state behind clients and offsets.
package clientapi
