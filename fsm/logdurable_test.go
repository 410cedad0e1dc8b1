package fsm

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// TestApplyWaitsForTheLogToBeDurable: with the leader's raft log fsync running
// alongside replication, an entry may be committed before it is durable on
// the leader. The FSM applies nothing until WaitLogDurable says the entry's
// index is durable; when the wait fails (the fsync failed) it applies nothing
// more, every entry answering ErrStopped, so a restart replays them.
func TestApplyWaitsForTheLogToBeDurable(t *testing.T) {
	ls := workload(t, 20)
	durable := make(chan uint64, 1)
	fail := make(chan error, 1)
	f, err := New(Config{Store: newFakeStore(), Dir: t.TempDir(),
		WaitLogDurable: func(index uint64, stop <-chan struct{}) error {
			for {
				select {
				case d := <-durable:
					if d >= index {
						return nil
					}
				case err := <-fail:
					return err
				case <-stop:
					return errors.New("stopped")
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	applied := make(chan []any, 1)
	go func() { applied <- f.ApplyBatch(ls[:10]) }()
	durable <- 5 // short of the batch's last index
	select {
	case <-applied:
		t.Fatal("ApplyBatch applied a batch whose last entry was not durable")
	case <-time.After(100 * time.Millisecond):
	}
	if got := f.AppliedIndex(); got != 0 {
		t.Fatalf("AppliedIndex = %d before the batch was durable", got)
	}
	durable <- 10
	select {
	case <-applied:
	case <-time.After(5 * time.Second):
		t.Fatal("ApplyBatch still waiting after its entries became durable")
	}
	if got := f.AppliedIndex(); got != 10 {
		t.Fatalf("AppliedIndex = %d, want 10", got)
	}

	fail <- syscall.EIO
	for i, r := range f.ApplyBatch(ls[10:12]) {
		if err, _ := r.(error); !errors.Is(err, ErrStopped) {
			t.Fatalf("entry %d after a failed log fsync answered %v, want ErrStopped", 11+i, r)
		}
	}
	durable <- uint64(len(ls))
	if r := f.Apply(ls[12]); !errors.Is(r.(error), ErrStopped) {
		t.Fatalf("an entry after the stop answered %v, want ErrStopped", r)
	}
	if got := f.AppliedIndex(); got != 10 {
		t.Fatalf("AppliedIndex = %d after the failed fsync, want 10 (nothing more applied)", got)
	}
}
