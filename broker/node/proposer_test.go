package node

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// fakeFuture is a raft.ApplyFuture the test resolves by hand.
type fakeFuture struct {
	msgs  [][]byte
	done  chan struct{}
	err   error
	resp  any
	index uint64
}

func (f *fakeFuture) Error() error                 { <-f.done; return f.err }
func (f *fakeFuture) Response() any                { return f.resp }
func (f *fakeFuture) Index() uint64                { return f.index }
func (f *fakeFuture) resolveOK(i int)              { f.index = uint64(i); f.resp = echo(f.msgs); close(f.done) }
func (f *fakeFuture) fail(err error)               { f.err = err; close(f.done) }
func (f *fakeFuture) failAt(err error, idx uint64) { f.index = idx; f.fail(err) }

// echo is the fake FSM: one result per message, the message's body.
func echo(msgs [][]byte) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m)
	}
	return out
}

func echoResults(resp any, n int) ([]string, error) {
	switch v := resp.(type) {
	case []string:
		return v, nil
	case error:
		return nil, v
	}
	return nil, fmt.Errorf("unexpected response %T", resp)
}

type fakeRaft struct {
	proposed chan *fakeFuture
}

func newFakeRaft() *fakeRaft { return &fakeRaft{proposed: make(chan *fakeFuture, 1024)} }

func (f *fakeRaft) propose(msgs [][]byte) raft.ApplyFuture {
	fut := &fakeFuture{msgs: msgs, done: make(chan struct{})}
	f.proposed <- fut
	return fut
}

func (f *fakeRaft) next(t *testing.T) *fakeFuture {
	t.Helper()
	select {
	case fut := <-f.proposed:
		return fut
	case <-time.After(5 * time.Second):
		t.Fatal("no entry proposed")
		return nil
	}
}

func (f *fakeRaft) none(t *testing.T) {
	t.Helper()
	select {
	case fut := <-f.proposed:
		t.Fatalf("unexpected entry with %d messages", len(fut.msgs))
	case <-time.After(20 * time.Millisecond):
	}
}

type call struct {
	res []string
	err error
}

func goPropose(p *proposer[string], ctx context.Context, msgs ...string) chan call {
	ch := make(chan call, 1)
	bs := make([][]byte, len(msgs))
	for i, m := range msgs {
		bs[i] = []byte(m)
	}
	go func() {
		res, err := p.Propose(ctx, bs)
		ch <- call{res, err}
	}()
	return ch
}

// waitPending waits until n messages are queued (callers have enqueued).
func waitPending(t *testing.T, p *proposer[string], n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		got := p.pending
		p.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pending = %d, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func recv(t *testing.T, ch chan call) call {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("Propose did not return")
		return call{}
	}
}

func TestProposerCoalescesAndGivesEachCallerItsResults(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{MaxInflight: 1}, fr.propose, echoResults)
	defer p.Close(0)

	first := goPropose(p, context.Background(), "blocker")
	blocker := fr.next(t) // holds the only slot
	var calls []chan call
	for i := range 10 {
		calls = append(calls, goPropose(p, context.Background(), fmt.Sprintf("c%d-a", i), fmt.Sprintf("c%d-b", i), fmt.Sprintf("c%d-c", i)))
	}
	waitPending(t, p, 30)
	fr.none(t)
	blocker.resolveOK(1)
	if c := recv(t, first); c.err != nil || len(c.res) != 1 || c.res[0] != "blocker" {
		t.Fatalf("first call = %v, %v", c.res, c.err)
	}
	batch := fr.next(t)
	if len(batch.msgs) != 30 {
		t.Fatalf("second entry has %d messages, want all 30 coalesced", len(batch.msgs))
	}
	batch.resolveOK(2)
	for i, ch := range calls {
		c := recv(t, ch)
		if c.err != nil {
			t.Fatalf("call %d: %v", i, c.err)
		}
		want := []string{fmt.Sprintf("c%d-a", i), fmt.Sprintf("c%d-b", i), fmt.Sprintf("c%d-c", i)}
		if fmt.Sprint(c.res) != fmt.Sprint(want) {
			t.Fatalf("call %d got %v, want %v", i, c.res, want)
		}
		if cap(c.res) != 3 {
			t.Fatalf("call %d result cap %d: a caller must not be able to append into another's results", i, cap(c.res))
		}
	}
	if s := p.Stats(); s.Entries != 2 || s.Messages != 31 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestProposerRespectsBounds(t *testing.T) {
	tests := []struct {
		name      string
		cfg       ProposerConfig
		calls     []int // messages per call, each message 10 bytes
		wantSizes []int // entries after the blocker, in order
	}{
		{"messages", ProposerConfig{MaxInflight: 1, MaxBatchMessages: 5}, []int{2, 2, 2, 2, 2}, []int{4, 4, 2}},
		{"bytes", ProposerConfig{MaxInflight: 1, MaxBatchBytes: 35}, []int{1, 1, 1, 1, 1}, []int{3, 2}},
		{"oversized caller alone", ProposerConfig{MaxInflight: 1, MaxBatchMessages: 4}, []int{1, 9, 1}, []int{1, 9, 1}},
		{"group commit off", ProposerConfig{MaxInflight: 1, MaxBatchMessages: 1}, []int{1, 1, 1}, []int{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := newFakeRaft()
			p := newProposer(tt.cfg, fr.propose, echoResults)
			defer p.Close(0)
			first := goPropose(p, context.Background(), "blocker---")
			blocker := fr.next(t)
			var calls []chan call
			total := 0
			for i, n := range tt.calls {
				msgs := make([]string, n)
				for j := range msgs {
					msgs[j] = fmt.Sprintf("m%04d-%03d", i, j) // 10 bytes
				}
				calls = append(calls, goPropose(p, context.Background(), msgs...))
				total += n
				waitPending(t, p, total) // keep arrival order deterministic
			}
			blocker.resolveOK(1)
			recv(t, first)
			for k, want := range tt.wantSizes {
				e := fr.next(t)
				if len(e.msgs) != want {
					t.Fatalf("entry %d has %d messages, want %d", k, len(e.msgs), want)
				}
				e.resolveOK(k + 2)
			}
			for i, ch := range calls {
				c := recv(t, ch)
				if c.err != nil || len(c.res) != tt.calls[i] {
					t.Fatalf("call %d: %d results, err %v", i, len(c.res), c.err)
				}
				if c.res[0] != fmt.Sprintf("m%04d-000", i) {
					t.Fatalf("call %d got someone else's results: %v", i, c.res)
				}
			}
		})
	}
}

func TestProposerPipelinesEntries(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{MaxInflight: 3, MaxBatchMessages: 1}, fr.propose, echoResults)
	defer p.Close(0)
	var calls []chan call
	for i := range 5 {
		calls = append(calls, goPropose(p, context.Background(), strconv.Itoa(i)))
	}
	var futs []*fakeFuture
	for range 3 {
		futs = append(futs, fr.next(t)) // three proposed with none resolved
	}
	fr.none(t) // the fourth waits for a slot
	futs[0].resolveOK(1)
	futs = append(futs, fr.next(t))
	for i, f := range futs[1:] {
		f.resolveOK(i + 2)
	}
	futs = append(futs, fr.next(t))
	futs[4].resolveOK(5)
	for _, ch := range calls {
		if c := recv(t, ch); c.err != nil {
			t.Fatal(c.err)
		}
	}
}

// With an entry in flight, a few queued bytes wait for it to be answered and
// then go as one entry; enough bytes, or a full batch, go at once.
func TestProposerPipelinesOnlyEntriesWorthIt(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{MaxInflight: 2, PipelineMinBytes: 8, MaxBatchMessages: 4}, fr.propose, echoResults)
	defer p.Close(0)
	first := goPropose(p, context.Background(), "a")
	f1 := fr.next(t) // nothing in flight: proposed whatever its size
	b := goPropose(p, context.Background(), "bb")
	c := goPropose(p, context.Background(), "ccc")
	waitPending(t, p, 2)
	fr.none(t) // 5 bytes queued behind an entry in flight: held back
	f1.resolveOK(1)
	f2 := fr.next(t) // the entry ahead answered: the held messages go together
	if len(f2.msgs) != 2 {
		t.Fatalf("entry after the held queue carries %d messages, want 2", len(f2.msgs))
	}
	big := goPropose(p, context.Background(), "dddddddd")
	f3 := fr.next(t) // 8 bytes reach the threshold with f2 still in flight
	if string(f3.msgs[0]) != "dddddddd" {
		t.Fatalf("pipelined entry = %q", f3.msgs)
	}
	f2.resolveOK(2)
	f3.resolveOK(3)
	full := []chan call{goPropose(p, context.Background(), "e", "f", "g")}
	f4 := fr.next(t) // in flight alone again
	full = append(full, goPropose(p, context.Background(), "h"), goPropose(p, context.Background(), "i"),
		goPropose(p, context.Background(), "j"), goPropose(p, context.Background(), "k"))
	f5 := fr.next(t) // four one-byte messages fill MaxBatchMessages: a full batch never waits
	if len(f5.msgs) != 4 {
		t.Fatalf("full batch carries %d messages, want 4", len(f5.msgs))
	}
	f4.resolveOK(4)
	f5.resolveOK(5)
	for _, ch := range append([]chan call{first, b, c, big}, full...) {
		if r := recv(t, ch); r.err != nil {
			t.Fatal(r.err)
		}
	}
}

// A negative PipelineMinBytes pipelines whatever is queued.
func TestProposerPipelineThresholdOff(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{MaxInflight: 2, PipelineMinBytes: -1}, fr.propose, echoResults)
	defer p.Close(0)
	a := goPropose(p, context.Background(), "a")
	f1 := fr.next(t)
	b := goPropose(p, context.Background(), "b")
	f2 := fr.next(t) // one byte, proposed with f1 still in flight
	f1.resolveOK(1)
	f2.resolveOK(2)
	for _, ch := range []chan call{a, b} {
		if r := recv(t, ch); r.err != nil {
			t.Fatal(r.err)
		}
	}
}

func TestProposerBusy(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{MaxInflight: 1, MaxPending: 4}, fr.propose, echoResults)
	defer p.Close(0)
	first := goPropose(p, context.Background(), "blocker")
	blocker := fr.next(t)
	a := goPropose(p, context.Background(), "a1", "a2", "a3")
	waitPending(t, p, 3)
	b := goPropose(p, context.Background(), "b1", "b2")
	if c := recv(t, b); !errors.Is(c.err, ErrBusy) {
		t.Fatalf("over MaxPending: err = %v, want ErrBusy", c.err)
	}
	c := goPropose(p, context.Background(), "c1") // exactly at the bound: accepted
	waitPending(t, p, 4)
	blocker.resolveOK(1)
	recv(t, first)
	fr.next(t).resolveOK(2)
	if r := recv(t, a); r.err != nil {
		t.Fatal(r.err)
	}
	if r := recv(t, c); r.err != nil || r.res[0] != "c1" {
		t.Fatalf("c = %v %v", r.res, r.err)
	}
}

func TestProposerErrorMapping(t *testing.T) {
	fsmErr := errors.New("store full")
	tests := []struct {
		name    string
		resolve func(f *fakeFuture)
		want    error
		notWant error
	}{
		{"not leader", func(f *fakeFuture) { f.fail(raft.ErrNotLeader) }, ErrNotLeader, ErrUnknownOutcome},
		{"transfer in progress", func(f *fakeFuture) { f.fail(raft.ErrLeadershipTransferInProgress) }, ErrNotLeader, ErrUnknownOutcome},
		{"leadership lost", func(f *fakeFuture) { f.failAt(raft.ErrLeadershipLost, 7) }, ErrUnknownOutcome, ErrNotLeader},
		{"shutdown before append", func(f *fakeFuture) { f.fail(raft.ErrRaftShutdown) }, ErrClosed, ErrUnknownOutcome},
		{"shutdown after append", func(f *fakeFuture) { f.failAt(raft.ErrRaftShutdown, 9) }, ErrUnknownOutcome, ErrClosed},
		{"enqueue timeout", func(f *fakeFuture) { f.fail(raft.ErrEnqueueTimeout) }, ErrBusy, ErrUnknownOutcome},
		{"log write failed", func(f *fakeFuture) { f.failAt(errors.New("disk gone"), 3) }, ErrUnknownOutcome, nil},
		{"fsm error", func(f *fakeFuture) { f.index = 4; f.resp = fsmErr; close(f.done) }, fsmErr, ErrUnknownOutcome},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := newFakeRaft()
			p := newProposer(ProposerConfig{}, fr.propose, echoResults)
			defer p.Close(0)
			a := goPropose(p, context.Background(), "x")
			tt.resolve(fr.next(t))
			c := recv(t, a)
			if !errors.Is(c.err, tt.want) {
				t.Fatalf("err = %v, want %v", c.err, tt.want)
			}
			if tt.notWant != nil && errors.Is(c.err, tt.notWant) {
				t.Fatalf("err = %v must not be %v", c.err, tt.notWant)
			}
			if c.res != nil {
				t.Fatalf("results on error: %v", c.res)
			}
		})
	}
}

func TestProposerContext(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{MaxInflight: 1}, fr.propose, echoResults)
	defer p.Close(0)

	// Cancelled while proposed: the outcome is unknown.
	ctx1, cancel1 := context.WithCancel(context.Background())
	a := goPropose(p, ctx1, "a")
	fa := fr.next(t)
	// Cancelled while queued: definitely not proposed.
	ctx2, cancel2 := context.WithCancel(context.Background())
	b := goPropose(p, ctx2, "b")
	waitPending(t, p, 1)
	cancel2()
	if c := recv(t, b); !errors.Is(c.err, context.Canceled) || errors.Is(c.err, ErrUnknownOutcome) {
		t.Fatalf("queued cancel: %v", c.err)
	}
	waitPending(t, p, 0)
	cancel1()
	if c := recv(t, a); !errors.Is(c.err, ErrUnknownOutcome) {
		t.Fatalf("proposed cancel: %v, want ErrUnknownOutcome", c.err)
	}
	d := goPropose(p, context.Background(), "d")
	waitPending(t, p, 1)
	fa.resolveOK(1)
	fd := fr.next(t)
	if len(fd.msgs) != 1 || string(fd.msgs[0]) != "d" {
		t.Fatalf("cancelled message was proposed: %q", fd.msgs)
	}
	fd.resolveOK(2)
	if c := recv(t, d); c.err != nil {
		t.Fatal(c.err)
	}
}

func TestProposerCloseFailsQueued(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{MaxInflight: 1}, fr.propose, echoResults)
	a := goPropose(p, context.Background(), "a")
	fa := fr.next(t)
	b := goPropose(p, context.Background(), "b")
	waitPending(t, p, 1)
	closed := make(chan struct{})
	go func() { p.Close(0); close(closed) }()
	if c := recv(t, b); !errors.Is(c.err, ErrClosed) {
		t.Fatalf("queued at close: %v", c.err)
	}
	select {
	case <-closed:
		t.Fatal("Close returned with an entry still in flight")
	case <-time.After(20 * time.Millisecond):
	}
	fa.fail(raft.ErrRaftShutdown)
	<-closed
	if c := recv(t, a); !errors.Is(c.err, ErrClosed) {
		t.Fatalf("in flight at close: %v", c.err)
	}
	if _, err := p.Propose(context.Background(), [][]byte{[]byte("c")}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

func TestProposerConcurrentCallers(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{MaxBatchMessages: 64, MaxPending: 1 << 20}, fr.propose, echoResults)
	stop := make(chan struct{})
	var applied sync.WaitGroup
	applied.Add(1)
	go func() { // raft: applies in order
		defer applied.Done()
		i := 0
		for {
			select {
			case f := <-fr.proposed:
				i++
				f.resolveOK(i)
			case <-stop:
				return
			}
		}
	}()
	const callers, perCaller = 32, 200
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perCaller {
				n := 1 + (c+i)%3
				msgs := make([][]byte, n)
				for j := range msgs {
					msgs[j] = fmt.Appendf(nil, "%d/%d/%d", c, i, j)
				}
				res, err := p.Propose(context.Background(), msgs)
				if err != nil {
					errs <- err
					return
				}
				for j := range msgs {
					if res[j] != string(msgs[j]) {
						errs <- fmt.Errorf("caller %d got %q for %q", c, res[j], msgs[j])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	applied.Wait()
	p.Close(0)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s := p.Stats()
	if s.Entries >= s.Messages {
		t.Logf("no coalescing observed: %+v", s)
	}
}

func TestProposerCloseAbandonsUnansweredEntries(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{}, fr.propose, echoResults)
	a := goPropose(p, context.Background(), "a")
	fr.next(t) // never answered, like a future raft dropped at shutdown
	start := time.Now()
	p.Close(20 * time.Millisecond)
	if time.Since(start) > 2*time.Second {
		t.Fatal("Close waited for an entry raft will never answer")
	}
	c := recv(t, a)
	if !errors.Is(c.err, ErrUnknownOutcome) || errors.Is(c.err, ErrClosed) {
		t.Fatalf("abandoned entry: %v, want ErrUnknownOutcome and not ErrClosed (which means not applied)", c.err)
	}
}

// MaxWait is the send timeout the handlers used to put on every request's
// context: a call gives up after it, as a ctx deadline would, with a
// never-cancelled ctx. Queued: definitely not proposed. Proposed: unknown.
func TestProposerMaxWaitBoundsACallLikeADeadline(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{MaxInflight: 1, MaxWait: 200 * time.Millisecond}, fr.propose, echoResults)
	defer p.Close(0)

	a := goPropose(p, context.Background(), "a")
	fa := fr.next(t) // a is in an entry raft never answers (yet)
	b := goPropose(p, context.Background(), "b")
	waitPending(t, p, 1) // b waits for the only slot
	if c := recv(t, a); !errors.Is(c.err, ErrUnknownOutcome) || !errors.Is(c.err, context.DeadlineExceeded) {
		t.Fatalf("proposed call past MaxWait: %v, want ErrUnknownOutcome and DeadlineExceeded", c.err)
	}
	if c := recv(t, b); !errors.Is(c.err, context.DeadlineExceeded) || errors.Is(c.err, ErrUnknownOutcome) {
		t.Fatalf("queued call past MaxWait: %v, want DeadlineExceeded only (not proposed)", c.err)
	}
	waitPending(t, p, 0)
	// The timed-out queued call is not proposed when the slot frees.
	fa.resolveOK(1)
	fr.none(t)
	// A call answered within MaxWait is not affected by it.
	d := goPropose(p, context.Background(), "d")
	fr.next(t).resolveOK(2)
	if c := recv(t, d); c.err != nil || len(c.res) != 1 || c.res[0] != "d" {
		t.Fatalf("call within MaxWait: %v %v", c.res, c.err)
	}
}
