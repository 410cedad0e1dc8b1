package offsets

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/store"
)

// failingMetadata refuses CommitOffsets, as a node that lost leadership does.
type failingMetadata struct{ replica.Metadata }

func (failingMetadata) CommitOffsets(context.Context, []fsm.OffsetEntry) error {
	return replica.ErrNotLeader
}

func TestFlushReplicatesOnceSortedAndPendingWinsUntilThen(t *testing.T) {
	rep := fakereplica.New(nil, replica.RoleLeader)
	b := NewBuffer(rep, time.Now)
	b.Put("g", "T", 1, 5)
	b.Put("g", "T", 1, 7) // coalesced: only the newest is replicated
	b.Put("a", "T", 0, 3)
	if off, ok := b.Committed("g", "T", 1); !ok || off != 7 {
		t.Fatalf("pending offset = %d, %v; want 7", off, ok)
	}
	if offs, _ := b.take(); len(offs) != 2 || offs[0].Group != "a" || offs[1].Offset != 7 {
		t.Fatalf("take = %+v, want [a/T/0=3 g/T/1=7]", offs)
	}
	b.Put("g", "T", 1, 9)
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if off, ok := rep.ConsumerOffset("g", "T", 1); !ok || off != 9 {
		t.Fatalf("replicated offset = %d, %v; want 9", off, ok)
	}
	if off, ok := b.Committed("g", "T", 1); !ok || off != 9 {
		t.Fatalf("committed after flush = %d, %v; want 9 (from the replica)", off, ok)
	}
}

func TestFailedFlushRestoresUnlessNewer(t *testing.T) {
	b := NewBuffer(failingMetadata{fakereplica.New(nil, replica.RoleFollower)}, time.Now)
	b.Put("g", "T", 0, store.QueueOffset(4))
	offs, epoch := b.take()
	b.Put("g", "T", 0, 6) // arrives while the flush is in flight
	b.restore(offs, epoch)
	if off, _ := b.Committed("g", "T", 0); off != 6 {
		t.Fatalf("after restore = %d, want the newer 6", off)
	}
	if err := b.Flush(context.Background()); !errors.Is(err, replica.ErrNotLeader) {
		t.Fatalf("flush error = %v, want ErrNotLeader", err)
	}
	if off, ok := b.Committed("g", "T", 0); !ok || off != 6 {
		t.Fatalf("after failed flush = %d, %v; want 6 kept pending", off, ok)
	}
}

func TestForgetDropsOnlyThatGroupsPendingOffsets(t *testing.T) {
	rep := fakereplica.New(nil, replica.RoleLeader)
	b := NewBuffer(rep, time.Now)
	b.Put("gone", "T", 0, 5)
	b.Put("gone", "U", 1, 6)
	b.Put("kept", "T", 0, 7)
	b.Forget("gone")
	if _, ok := b.Committed("gone", "T", 0); ok {
		t.Fatal("a forgotten group's offset is still pending")
	}
	if offs, _ := b.take(); len(offs) != 1 || offs[0].Group != "kept" || offs[0].Offset != 7 {
		t.Fatalf("pending after Forget = %+v, want only kept/T/0=7", offs)
	}
}

// Drop empties the buffer: Committed falls back to the replicated value and a
// later Flush writes nothing stale.
func TestDropDiscardsPending(t *testing.T) {
	rep := fakereplica.New(nil, replica.RoleLeader)
	b := NewBuffer(rep, time.Now)
	b.Put("g", "T", 0, 7)
	b.Put("g", "T", 1, 9)
	if n := b.Drop(); n != 2 {
		t.Fatalf("Drop = %d, want 2", n)
	}
	if _, ok := b.Committed("g", "T", 0); ok {
		t.Fatal("a dropped offset is still reported as committed")
	}
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if off, ok := rep.ConsumerOffset("g", "T", 1); ok {
		t.Fatalf("Flush after Drop replicated offset %d", off)
	}
}

func TestDurableReplicatesFirstAndNeverAnswersPending(t *testing.T) {
	rep := fakereplica.New(nil, replica.RoleLeader)
	b := NewBuffer(rep, time.Now)
	b.Put("g", "T", 0, 4)
	if off, ok := b.Durable(context.Background(), "g", "T", 0); !ok || off != 4 {
		t.Fatalf("durable = %d, %v; want 4, replicated by the read", off, ok)
	}
	if off, ok := rep.ConsumerOffset("g", "T", 0); !ok || off != 4 {
		t.Fatalf("replica holds %d, %v after the read; want 4", off, ok)
	}
	// A deposed leader: the flush fails, the pending 6 is not the answer.
	deposed := NewBuffer(failingMetadata{rep}, time.Now)
	deposed.Put("g", "T", 0, 6)
	if off, ok := deposed.Durable(context.Background(), "g", "T", 0); !ok || off != 4 {
		t.Fatalf("durable on a deposed leader = %d, %v; want the replicated 4", off, ok)
	}
	if off, _ := deposed.Committed("g", "T", 0); off != 6 {
		t.Fatalf("pending after the failed flush = %d, want 6 kept for a later flush", off)
	}
}

// gatedMetadata holds the first CommitOffsets until release is closed and
// records how many calls were inside CommitOffsets at once.
type gatedMetadata struct {
	replica.Metadata
	release chan struct{}
	entered chan struct{}
	mu      sync.Mutex
	inside  int
	most    int
	calls   int
}

func (g *gatedMetadata) CommitOffsets(ctx context.Context, offs []fsm.OffsetEntry) error {
	g.mu.Lock()
	g.inside++
	g.most = max(g.most, g.inside)
	g.calls++
	first := g.calls == 1
	g.mu.Unlock()
	if first {
		close(g.entered)
		<-g.release
	}
	err := g.Metadata.CommitOffsets(ctx, offs)
	g.mu.Lock()
	g.inside--
	g.mu.Unlock()
	return err
}

// Two flushes at once (the periodic one and a Durable read's) must reach the
// log in the order they took their offsets, or an older offset could apply
// after a newer one and the committed offset would go back.
func TestFlushesRunOneAtATimeInTakeOrder(t *testing.T) {
	g := &gatedMetadata{Metadata: fakereplica.New(nil, replica.RoleLeader), release: make(chan struct{}), entered: make(chan struct{})}
	b := NewBuffer(g, time.Now)
	b.Put("g", "T", 0, 300)
	first := make(chan error, 1)
	go func() { first <- b.Flush(context.Background()) }()
	<-g.entered // 300 taken and in flight
	b.Put("g", "T", 0, 310)
	second := make(chan store.QueueOffset, 1)
	go func() {
		off, _ := b.Durable(context.Background(), "g", "T", 0)
		second <- off
	}()
	time.Sleep(20 * time.Millisecond) // give the second flush the chance to overtake
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if off := <-second; off != 310 {
		t.Fatalf("durable read after both flushes = %d, want 310", off)
	}
	if off, _ := g.ConsumerOffset("g", "T", 0); off != 310 {
		t.Fatalf("replicated offset = %d, want 310 (the older 300 applied last?)", off)
	}
	if g.most != 1 {
		t.Fatalf("%d CommitOffsets calls ran at once, want 1", g.most)
	}
}

// TestResetHoldsCommitsUntilPulledOrExpired: after Reset the buffer drops
// what was pending for the queue and ignores commits until a pull from the
// reset offset or ResetHold has passed; a buffer that never saw the reset
// (the next leader's) holds it too, from the replicated mark.
func TestResetHoldsCommitsUntilPulledOrExpired(t *testing.T) {
	rep := fakereplica.New(nil, replica.RoleLeader)
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }
	b := NewBuffer(rep, clock)
	ctx := context.Background()
	replicated := func() store.QueueOffset { t.Helper(); return flushed(t, b, rep) }
	b.Put("g", "T", 0, 90)
	b.Put("g", "T", 1, 50) // another queue, not reset
	if err := b.Reset(ctx, []fsm.OffsetEntry{{Group: "g", Topic: "T", QueueID: 0, Offset: 30}}); err != nil {
		t.Fatal(err)
	}
	b.Put("g", "T", 0, 90) // a client that has not applied the reset
	if got := replicated(); got != 30 {
		t.Fatalf("replicated %d after a stale commit, want the reset's 30", got)
	}
	if off, _ := rep.ConsumerOffset("g", "T", 1); off != 50 {
		t.Fatalf("queue 1 (not reset) replicated %d, want 50", off)
	}
	next := NewBuffer(rep, clock)
	next.Put("g", "T", 0, 91)
	if err := next.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if off, _ := rep.ConsumerOffset("g", "T", 0); off != 30 {
		t.Fatalf("the next leader's buffer took a stale commit: %d", off)
	}
	b.Pulled("g", "T", 0, 88) // a pull from elsewhere: the client has not resumed
	b.Put("g", "T", 0, 90)
	if got := replicated(); got != 30 {
		t.Fatalf("replicated %d after a pull from the old position, want 30", got)
	}
	b.Pulled("g", "T", 0, 30)
	b.Put("g", "T", 0, 34)
	if got := replicated(); got != 34 {
		t.Fatalf("replicated %d after the client resumed from the reset, want 34", got)
	}
	// The next leader has no such pull: its hold ends with time.
	next.Put("g", "T", 0, 95)
	if err := next.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if off, _ := rep.ConsumerOffset("g", "T", 0); off != 34 {
		t.Fatalf("the next leader's hold ended early: %d", off)
	}
	now = now.Add(ResetHold)
	next.Put("g", "T", 0, 96)
	if err := next.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if off, _ := rep.ConsumerOffset("g", "T", 0); off != 96 {
		t.Fatalf("a commit %v after the reset was ignored: %d", ResetHold, off)
	}
}

// TestResetHoldEndsAfterTheResetOffsetIsCommitted: a client done with its
// reset pause commits the reset offset (relayed by a follower if it talks to
// one, where its pulls never reach the leader); the hold ends a grace later,
// not at once, since its last stale commit may still be on its way.
func TestResetHoldEndsAfterTheResetOffsetIsCommitted(t *testing.T) {
	rep := fakereplica.New(nil, replica.RoleLeader)
	now := time.Unix(2_000_000, 0)
	b := NewBuffer(rep, func() time.Time { return now })
	ctx := context.Background()
	replicated := func() store.QueueOffset { t.Helper(); return flushed(t, b, rep) }
	if err := b.Reset(ctx, []fsm.OffsetEntry{{Group: "g", Topic: "T", QueueID: 0, Offset: 30}}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(10 * time.Second)
	b.Put("g", "T", 0, 30) // the client's commit of the reset point
	b.Put("g", "T", 0, 90) // its stale commit, served after it
	if got := replicated(); got != 30 {
		t.Fatalf("replicated %d right after the client committed the reset point, want 30", got)
	}
	now = now.Add(resetCommitGrace)
	b.Put("g", "T", 0, 33)
	if got := replicated(); got != 33 {
		t.Fatalf("replicated %d %v after the client committed the reset point, want its progress 33", got, resetCommitGrace)
	}
}

// TestK1PullCommitNeverMovesTheOffsetBack is the regression test of chaos K1
// at load (committed 4055, then 4034 within 260 ms): the offset a pull
// carries is the client's progress and never lowers the committed offset,
// pending, replicated or in a flush still replicating; an explicit Put (an
// UPDATE_CONSUMER_OFFSET: a seek, a clone) still may.
func TestK1PullCommitNeverMovesTheOffsetBack(t *testing.T) {
	g := &gatedMetadata{Metadata: fakereplica.New(nil, replica.RoleLeader), release: make(chan struct{}), entered: make(chan struct{})}
	b := NewBuffer(g, time.Now)
	b.Put("g", "T", 0, 4055)
	b.Advance("g", "T", 0, 4034) // the new owner's first pull
	if off, _ := b.Committed("g", "T", 0); off != 4055 {
		t.Fatalf("pending after a lower pull commit = %d, want 4055", off)
	}
	flushed := make(chan error, 1)
	go func() { flushed <- b.Flush(context.Background()) }()
	<-g.entered // 4055 taken and replicating: neither pending nor applied
	b.Advance("g", "T", 0, 4034)
	close(g.release)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if off, _ := g.ConsumerOffset("g", "T", 0); off != 4055 {
		t.Fatalf("replicated = %d after a lower pull commit during the flush, want 4055", off)
	}
	b.Advance("g", "T", 0, 4034)
	if off, _ := b.Committed("g", "T", 0); off != 4055 {
		t.Fatalf("committed = %d after a lower pull commit, want 4055", off)
	}
	b.Advance("g", "T", 0, 4070)
	if off, _ := b.Committed("g", "T", 0); off != 4070 {
		t.Fatalf("committed = %d after a higher pull commit, want 4070", off)
	}
	b.Put("g", "T", 0, 100) // explicit: a seek back
	if off, _ := b.Committed("g", "T", 0); off != 100 {
		t.Fatalf("committed = %d after an explicit update to 100, want 100", off)
	}
}

// flushed flushes b and returns the replicated offset of g/T/0.
func flushed(t *testing.T, b *Buffer, rep replica.Metadata) store.QueueOffset {
	t.Helper()
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	off, _ := rep.ConsumerOffset("g", "T", 0)
	return off
}

// blockingMetadata holds CommitOffsets until release is closed, then fails it,
// as raft does with an entry in flight when leadership is lost.
type blockingMetadata struct {
	replica.Metadata
	called  chan struct{}
	release chan struct{}
}

func (m blockingMetadata) CommitOffsets(context.Context, []fsm.OffsetEntry) error {
	close(m.called)
	<-m.release
	return replica.ErrNotLeader
}

// TestN1P1FlushFailingAfterDropRestoresNothing: chaos N1 and P1 at load saw a
// committed offset go 958 → 378 on a new leader. That node had led two terms
// before; when it lost that leadership a flush was in flight: the role change
// dropped the pending offsets, then the flush failed and put its own back. They
// stayed pending through its terms as a follower and were written, old, over
// newer offsets when it led again. A flush now restores nothing after a Drop.
func TestN1P1FlushFailingAfterDropRestoresNothing(t *testing.T) {
	rep := fakereplica.New(nil, replica.RoleLeader)
	m := blockingMetadata{Metadata: rep, called: make(chan struct{}), release: make(chan struct{})}
	b := NewBuffer(m, time.Now)
	b.Put("g", "T", 1, 378)
	done := make(chan error, 1)
	go func() { done <- b.Flush(context.Background()) }()
	<-m.called
	b.Drop() // leadership lost while the entry is in flight
	close(m.release)
	if err := <-done; !errors.Is(err, replica.ErrNotLeader) {
		t.Fatalf("flush error = %v, want ErrNotLeader", err)
	}
	if off, ok := b.Committed("g", "T", 1); ok {
		t.Fatalf("offset %d pending after the Drop: the failed flush restored it", off)
	}
	if offs, _ := b.take(); len(offs) != 0 {
		t.Fatalf("the next flush would write %+v", offs)
	}
}
