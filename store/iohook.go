package store

// IOOp names a CommitLog I/O step an IOHook is asked about.
type IOOp uint8

const (
	// IOWrite is one record copied into a segment; a batch of n records asks n times,
	// so a hook can fail a batch part way through.
	IOWrite IOOp = iota + 1
	// IOSync is the msync of one segment's unflushed bytes (flush, FlushSync appends).
	IOSync
	// IOCreate is the creation of a segment file (pre-allocated or on demand), where
	// a full disk really answers ENOSPC: fallocate reserves the blocks up front.
	IOCreate
)

func (op IOOp) String() string {
	switch op {
	case IOWrite:
		return "write"
	case IOSync:
		return "sync"
	case IOCreate:
		return "create"
	}
	return "unknown"
}

// IOCall is one CommitLog I/O step an IOHook is asked about.
type IOCall struct {
	Op IOOp
	// Path is the segment file's path.
	Path string
	// Record and Records place an IOWrite in its batch (record Record of Records,
	// from 0), so a hook can fail a batch part way through; 0 for other ops.
	Record, Records int
}

// IOHook, when set in Config, is called before each CommitLog I/O step. It may
// sleep (a slow or stalled disk) or return an error, which the store treats as that
// step failing (a write or create error undoes the partial batch). Test and chaos
// hook only (internal/testcluster's disk faults); nil in production, where a nil
// check is all it costs.
type IOHook func(IOCall) error

// call runs h when it is set.
func (h IOHook) call(c IOCall) error {
	if h == nil {
		return nil
	}
	return h(c)
}
