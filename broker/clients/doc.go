// Package clients is the soft state a broker node keeps about the clients
// connected to it: heartbeats (consumer groups, their subscriptions, producer
// groups), the leader's orderly-consumption queue locks, compiled subscription
// filters and long-polled pulls. None of it is replicated: clients heartbeat
// every node, so a new leader already knows the groups (lessons-from-dledger.md
// row 7), and locks are leader memory (docs/decisions/0003).
//
// Files, bottom up: heartbeat.go (the HEART_BEAT body), locks.go (the lock
// table, deterministic: time and term are arguments), filter.go (TAG and SQL92
// subscriptions as store filters), longpoll.go (held pulls), registry.go (the
// registry tying them together).
//
// It may import broker/filter, broker/route (its errors), store and transport.
//
//	r := clients.NewRegistry(time.Now())
//	changed := r.Heartbeat(conn, hb, now)     // groups whose membership changed
//	r.NotifyConsumerIDsChanged(group)         // tell them to rebalance
//
// # Concurrency
//
// Registry, the lock table, the filter cache and PullWaiters each have their own
// lock; every method is safe for concurrent use and none blocks on I/O except
// PullWaiters.Wait, which blocks its caller only. PullWaiters.Notify runs the
// fire functions of the waiters it wakes (PullWaiters.Hold).
package clients
