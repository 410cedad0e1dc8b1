package stats

// maxPullOffsets bounds the pull-offset table (one entry per group, topic and
// queue this node answered a pull for): 64 Ki entries of ~80 bytes is ~5 MiB.
// A queue first pulled once it is full is not tracked, and GET_CONSUME_STATS
// shows its committed offset as the pull offset, as Apache does for a queue
// it has no pull offset of.
const maxPullOffsets = 1 << 16

// pullKey names one queue as a consumer group reads it.
type pullKey struct {
	group, topic string
	queueID      int32
}

// pullTable is the next offset each group was told to pull from each queue
// (Apache's ConsumerOffsetManager pull-offset table). Not safe for concurrent
// use: Stats holds its mutex around it.
type pullTable struct {
	// Invariant: len(next) <= maxPullOffsets.
	next map[pullKey]int64
}

func (p *pullTable) record(k pullKey, next int64) {
	if p.next == nil {
		p.next = make(map[pullKey]int64)
	}
	if _, ok := p.next[k]; ok || len(p.next) < maxPullOffsets {
		p.next[k] = next
	}
}

func (p *pullTable) get(k pullKey) (int64, bool) {
	off, ok := p.next[k]
	return off, ok
}
