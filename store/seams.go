package store

// The store is built from two halves that meet at these seams:
//
//   - the CommitLog side (commitlog*.go, checkpoint.go, flush.go, recovery.go,
//     retention.go, store.go): segments, append, truncate, flush, recovery, retention;
//   - the dispatch side (consumequeue*.go, index*.go, dispatch.go, read.go): reput into
//     ConsumeQueues and IndexFiles, long-poll notification and every read by queue,
//     key or time.
//
// The dispatch side sees the CommitLog only through recordSource.

// recordSource is the CommitLog as the dispatch side sees it.
type recordSource interface {
	// recordAt returns the whole record (a message, or a blank padding record) that
	// starts at off, which must be a record boundary below maxOffset. next is where the
	// following record starts (the next segment's start after a blank). The bytes alias
	// the mapping and stay valid until release is called.
	recordAt(off PhysicalOffset) (rec []byte, next PhysicalOffset, release func(), err error)
	// bytesAt returns size bytes at off (a message located through a ConsumeQueue
	// entry), valid until release is called.
	bytesAt(off PhysicalOffset, size int32) (b []byte, release func(), err error)
	// minOffset is the first byte still stored; maxOffset one past the last written.
	minOffset() PhysicalOffset
	maxOffset() PhysicalOffset
}

// Notifier is told, after dispatch, that a queue has new messages up to maxOffset
// (exclusive); the broker wakes long-polled pulls with it. It must not block.
type Notifier func(topic string, queueID int32, maxOffset QueueOffset)
