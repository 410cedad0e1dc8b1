// Package transaction owns RocketMQ's transactional messages on the leader: the
// half-message layout (RMQ_SYS_TRANS_HALF_TOPIC), the records a decision stores,
// and the leader-only Checker that asks producers about undecided half messages
// (Java TransactionalMessageCheckService).
//
// # Layout
//
// A prepared message is stored as a half message in RMQ_SYS_TRANS_HALF_TOPIC
// queue 0, with REAL_TOPIC and REAL_QID naming where it goes and PGROUP the
// producer group to ask (HalfProperties). A decision is replicated keyed by the
// half queue offset (replica.TransactionState): a commit stores CommitRecord in
// the real topic in the same raft entry; a rollback stores nothing; a half
// message still undecided after CheckMax check-backs is discarded and its copy
// (CheckMaxRecord) stored in TRANS_CHECK_MAX_TIME_TOPIC queue 0.
//
// # Why it survives a failover
//
// The Checker keeps no state of its own: each Round starts from the first
// undecided half offset, and the check counts are replicated (one entry per
// batch of ops), so a new leader checks exactly the undecided half messages and
// resumes their counts. A check-back is sent only after its TxCheck op applied,
// and not for a half message decided in the meantime.
//
// # Imports
//
// It may import broker/replica, broker/route (errors), broker/schedule (property
// names), broker/loop, fsm, store and transport. It must not import the broker
// root, the handler rooms (broker/clientapi, broker/adminapi) or broker/node:
// END_TRANSACTION's handler calls ReadHalf and CommitRecord, never the other way.
//
// # Concurrency
//
// The helpers are pure (ReadHalf only reads the store) and safe for concurrent
// use. A Checker is driven by one goroutine: Run, or Round from a test; Round is
// not safe for concurrent use. Run it only while this node leads (after its
// barrier) and cancel its context when leadership goes. Config.Producer and
// Config.EnsureTopic are called on that goroutine.
//
// # Usage
//
//	// END_TRANSACTION (broker/clientapi):
//	h, err := transaction.ReadHalf(st, hdr.CommitLogOffset, hdr.TranStateTableOffset, hdr.ProducerGroup)
//	rec, err := transaction.CommitRecord(h, storeHost)
//	res, err := rep.ApplyTransactionOps(ctx, []replica.TransactionOp{{Kind: fsm.TxCommit, HalfOffset: off, Record: rec}})
//
//	// leader term:
//	c := transaction.NewChecker(transaction.Config{BrokerName: name, StoreHost: host, Producer: conns, EnsureTopic: ensure}, st, rep)
//	go c.Run(ctx) // a round at once, then every Interval, until ctx ends
package transaction
