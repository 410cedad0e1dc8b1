package node

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// goProposeAsync calls ProposeAsync and delivers its answer on the returned
// channel; a second answer fails the test.
func goProposeAsync(t *testing.T, p *proposer[string], ctx context.Context, msgs ...string) chan call {
	t.Helper()
	ch := make(chan call, 2)
	bs := make([][]byte, len(msgs))
	for i, m := range msgs {
		bs[i] = []byte(m)
	}
	var answers atomic.Int32
	p.ProposeAsync(ctx, bs, func(res []string, err error) {
		if answers.Add(1) > 1 {
			t.Errorf("ProposeAsync %v answered twice (now %v, %v)", msgs, res, err)
		}
		ch <- call{res, err}
	})
	return ch
}

// Asynchronous and blocking callers share entries, and each gets its own
// results, once.
func TestProposeAsyncSharesEntriesWithPropose(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{MaxInflight: 1}, fr.propose, echoResults)
	defer p.Close(0)
	first := goProposeAsync(t, p, context.Background(), "blocker")
	blocker := fr.next(t)
	a := goProposeAsync(t, p, context.Background(), "a1", "a2")
	b := goPropose(p, context.Background(), "b1")
	c := goProposeAsync(t, p, context.Background(), "c1")
	waitPending(t, p, 4)
	blocker.resolveOK(1)
	if r := recv(t, first); r.err != nil || len(r.res) != 1 || r.res[0] != "blocker" {
		t.Fatalf("first: %v %v", r.res, r.err)
	}
	batch := fr.next(t)
	if len(batch.msgs) != 4 {
		t.Fatalf("second entry has %d messages, want 4", len(batch.msgs))
	}
	batch.resolveOK(2)
	for name, want := range map[*chan call][]string{&a: {"a1", "a2"}, &b: {"b1"}, &c: {"c1"}} {
		r := recv(t, *name)
		if r.err != nil || len(r.res) != len(want) || cap(r.res) != len(want) {
			t.Fatalf("results %v (cap %d), %v; want %v", r.res, cap(r.res), r.err, want)
		}
		for i := range want {
			if r.res[i] != want[i] {
				t.Fatalf("results %v, want %v", r.res, want)
			}
		}
	}
	time.Sleep(20 * time.Millisecond) // a second answer would show up here
}

// A refused call is answered before ProposeAsync returns.
func TestProposeAsyncRefusalsAnswerAtOnce(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{MaxInflight: 1, MaxPending: 2}, fr.propose, echoResults)
	first := goProposeAsync(t, p, context.Background(), "blocker")
	blocker := fr.next(t)
	queued := goProposeAsync(t, p, context.Background(), "q1", "q2")
	waitPending(t, p, 2)
	busy := goProposeAsync(t, p, context.Background(), "x")
	select {
	case r := <-busy:
		if !errors.Is(r.err, ErrBusy) {
			t.Fatalf("over MaxPending: %v", r.err)
		}
	default:
		t.Fatal("ErrBusy was not answered before ProposeAsync returned")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	select {
	case r := <-goProposeAsync(t, p, ctx, "y"):
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled ctx: %v", r.err)
		}
	default:
		t.Fatal("a cancelled ctx was not answered at once")
	}
	select {
	case r := <-goProposeAsync(t, p, context.Background()):
		if r.err != nil || r.res != nil {
			t.Fatalf("no messages: %v %v", r.res, r.err)
		}
	default:
		t.Fatal("an empty call was not answered at once")
	}
	closed := make(chan struct{})
	go func() { p.Close(0); close(closed) }()
	if r := recv(t, queued); !errors.Is(r.err, ErrClosed) {
		t.Fatalf("queued at close: %v", r.err)
	}
	blocker.fail(raft.ErrRaftShutdown)
	<-closed
	if r := recv(t, first); !errors.Is(r.err, ErrClosed) {
		t.Fatalf("in flight at close: %v", r.err)
	}
	select {
	case r := <-goProposeAsync(t, p, context.Background(), "z"):
		if !errors.Is(r.err, ErrClosed) {
			t.Fatalf("after close: %v", r.err)
		}
	default:
		t.Fatal("a closed proposer did not answer at once")
	}
}

// MaxWait and Close answer asynchronous calls as they answer blocking ones,
// and a late outcome does not answer them again.
func TestProposeAsyncGivesUpLikePropose(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{MaxInflight: 1, MaxWait: 200 * time.Millisecond}, fr.propose, echoResults)
	a := goProposeAsync(t, p, context.Background(), "a")
	fa := fr.next(t)
	b := goProposeAsync(t, p, context.Background(), "b")
	waitPending(t, p, 1)
	if r := recv(t, a); !errors.Is(r.err, ErrUnknownOutcome) || !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("proposed call past MaxWait: %v", r.err)
	}
	if r := recv(t, b); !errors.Is(r.err, context.DeadlineExceeded) || errors.Is(r.err, ErrUnknownOutcome) {
		t.Fatalf("queued call past MaxWait: %v", r.err)
	}
	fa.resolveOK(1) // too late: a was answered already
	fr.none(t)
	c := goProposeAsync(t, p, context.Background(), "c")
	fr.next(t) // never answered
	p.Close(20 * time.Millisecond)
	if r := recv(t, c); !errors.Is(r.err, ErrUnknownOutcome) {
		t.Fatalf("abandoned at close: %v", r.err)
	}
	time.Sleep(20 * time.Millisecond)
}

// The answers to one entry run after its in-flight slot is free: an answer
// that takes a while does not hold back the next entry.
func TestProposeAsyncAnswersDoNotHoldTheSlot(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{MaxInflight: 1}, fr.propose, echoResults)
	defer p.Close(0)
	proposedWhileAnswering := make(chan bool, 1)
	p.ProposeAsync(context.Background(), [][]byte{[]byte("a")}, func([]string, error) {
		// The next entry must be proposed while this answer is still running.
		select {
		case fut := <-fr.proposed:
			fr.proposed <- fut
			proposedWhileAnswering <- true
		case <-time.After(2 * time.Second):
			proposedWhileAnswering <- false
		}
	})
	fa := fr.next(t)
	b := goProposeAsync(t, p, context.Background(), "b")
	waitPending(t, p, 1)
	fa.resolveOK(1)
	if !<-proposedWhileAnswering {
		t.Fatal("the next entry waited for the previous entry's answers")
	}
	fr.next(t).resolveOK(2)
	if r := recv(t, b); r.err != nil || r.res[0] != "b" {
		t.Fatalf("b: %v %v", r.res, r.err)
	}
}
