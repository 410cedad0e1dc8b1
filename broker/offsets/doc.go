// Package offsets holds the consumer offsets the leader has been told but not
// yet replicated. Clients commit every 5 s per queue and on every pull; the
// leader replicates the latest value of each (group, topic, queue) once per
// flush interval in one raft entry (lessons-from-dledger.md row 2: offsets go
// through the log, not a polling copy).
//
// It may import broker/replica, fsm and store.
//
//	buf := offsets.NewBuffer(rep, rep.Now)
//	buf.Put("g", "T", 0, 42)
//	off, ok := buf.Committed("g", "T", 0) // pending here, else replicated
//	err := buf.Flush(ctx)                 // one CommitOffsets entry
//
// # Concurrency
//
// Every method is safe for concurrent use; Flush may run concurrently with Put
// (an offset put during a failed flush is never overwritten by the older one).
package offsets
