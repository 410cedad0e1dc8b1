package fsm

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

// ErrStopped answers the entry an FSM was waiting to apply when Stop was called:
// the entry is not applied (the applied index does not move), so the next start
// replays it from the raft log.
var ErrStopped = errors.New("fsm: stopped while waiting for disk space")

// Backoff of the wait for disk space: short at first (space freed by retention
// or an operator comes back in one step), capped so a long outage costs one
// attempt a second.
const (
	diskWaitFirst = 10 * time.Millisecond
	diskWaitMax   = time.Second
)

// appendWaitingForSpace is store.AppendBatch for a committed entry. A full disk
// (ENOSPC, part way through the batch or at a segment roll-over) is not
// corruption: the store undid the partial batch, so the same batch can be
// appended again once space returns, and every replica still ends with the same
// bytes. Panicking instead (what any other append error does, fsm/doc.go) would
// crash the node and, as it restarted into the same full disk, crash it again.
// So it waits, retrying with backoff, and tells Config.OnDiskFull once per wait
// so the node can hand leadership away (its acks stop until space returns).
// While it waits raft's apply queue backs up; Stop ends the wait. Caller holds
// f.mu (Apply, ApplyBatch), which is released while waiting.
func (f *FSM) appendWaitingForSpace(index uint64, recs [][]byte, ts int64) ([]store.AppendResult, error) {
	delay := diskWaitFirst
	for attempt := 0; ; attempt++ {
		out, err := f.st.AppendBatch(recs, ts)
		if err == nil || !errors.Is(err, syscall.ENOSPC) {
			if attempt > 0 && err == nil {
				f.log.Warn("disk space back: committed entry applied", "index", index, "attempts", attempt+1)
			}
			return out, err
		}
		if attempt == 0 {
			f.log.Error("disk full applying a committed entry; waiting for space", "index", index, "messages", len(recs), "error", err)
			if f.cfg.OnDiskFull != nil {
				f.cfg.OnDiskFull(fmt.Errorf("raft index %d: %w", index, err))
			}
		}
		// Wait without f.mu: the store is exactly the applied state (the partial
		// batch was undone), so the node's status reads, the checkpoint ticker
		// and Persist may run meanwhile instead of hanging behind a full disk.
		f.mu.Unlock()
		select {
		case <-f.stopCh:
			f.mu.Lock()
			return nil, fmt.Errorf("raft index %d: %w (%w)", index, ErrStopped, err)
		case <-time.After(delay):
		}
		f.mu.Lock()
		delay = min(2*delay, diskWaitMax)
	}
}

// Stop ends a wait for disk space (appendWaitingForSpace) so raft can shut
// down; the entry waited on stays unapplied. Call it before raft.Shutdown, which
// waits for the FSM goroutine. Idempotent; the FSM applies nothing afterwards.
func (f *FSM) Stop() {
	f.stopOnce.Do(func() { close(f.stopCh) })
}
