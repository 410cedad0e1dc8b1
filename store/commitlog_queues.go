package store

// queueOffsetTable is the append side's next queue offset per (topic, queueId)
// (RocketMQ's topicQueueTable). It is rebuilt from the ConsumeQueues at Open and after
// a truncate, and advanced by every append, so the same batches applied to the same
// CommitLog assign the same offsets on every replica.
//
// Lookups take the topic as bytes from the record: indexing a map[string] with
// string(b) does not allocate, so only a topic's first message allocates its name.
//
// Concurrency: owned by the Store's write lock.
type queueOffsetTable struct {
	topics map[string]*topicOffsets
}

type topicOffsets struct {
	// name is the interned topic, shared by every AppendResult of the topic.
	name string
	next map[int32]QueueOffset
}

func newQueueOffsetTable(from map[TopicQueue]QueueOffset) *queueOffsetTable {
	t := &queueOffsetTable{topics: make(map[string]*topicOffsets)}
	for tq, off := range from {
		t.set(tq.Topic, tq.QueueID, off)
	}
	return t
}

func (t *queueOffsetTable) topic(name string) *topicOffsets {
	to := t.topics[name]
	if to == nil {
		to = &topicOffsets{name: name, next: make(map[int32]QueueOffset)}
		t.topics[name] = to
	}
	return to
}

// assign returns the interned topic name and the queue offset for the next message of
// (topic, queueID), and advances it.
func (t *queueOffsetTable) assign(topic []byte, queueID int32) (string, QueueOffset) {
	to := t.topics[string(topic)]
	if to == nil {
		to = t.topic(string(topic))
	}
	off := to.next[queueID]
	to.next[queueID] = off + 1
	return to.name, off
}

// set makes off the next offset of (topic, queueID).
func (t *queueOffsetTable) set(topic string, queueID int32, off QueueOffset) {
	t.topic(topic).next[queueID] = off
}
