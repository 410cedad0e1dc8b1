package node

import (
	"context"
	"sync"
	"testing"
	"time"
)

// closedLoop runs callers that each propose one message, wait for its outcome,
// pause for rtt (the response's way to the producer and the next send's way
// back) and propose again, perCaller times, against a raft that takes commit
// to answer each entry, in order. It returns the messages per entry.
func closedLoop(t *testing.T, cfg ProposerConfig, callers, perCaller, size int, commit, rtt time.Duration) float64 {
	t.Helper()
	fr := newFakeRaft()
	p := newProposer(cfg, fr.propose, echoResults)
	defer p.Close(0)
	stop := make(chan struct{})
	var applied sync.WaitGroup
	applied.Add(1)
	go func() {
		defer applied.Done()
		i := 0
		for {
			select {
			case f := <-fr.proposed:
				time.Sleep(commit)
				i++
				f.resolveOK(i)
			case <-stop:
				return
			}
		}
	}()
	msg := make([]byte, size)
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perCaller {
				if _, err := p.Propose(context.Background(), [][]byte{msg}); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(rtt)
			}
		}()
	}
	wg.Wait()
	close(stop)
	applied.Wait()
	st := p.Stats()
	return float64(st.Messages) / float64(st.Entries)
}

// Sixteen sync producers: without the gather the first one back goes alone and
// the other fifteen make the next entry (8 per entry); with it they share one.
func TestProposerGathersReturningCallers(t *testing.T) {
	const callers = 16
	cfg := ProposerConfig{GatherMax: 50 * time.Millisecond}
	on := closedLoop(t, cfg, callers, 20, 1024, 20*time.Millisecond, 200*time.Microsecond)
	cfg.GatherMax = -1
	off := closedLoop(t, cfg, callers, 20, 1024, 20*time.Millisecond, 200*time.Microsecond)
	t.Logf("messages per entry: %.1f with the gather, %.1f without", on, off)
	if on < 0.75*callers {
		t.Fatalf("%.1f messages per entry with the gather, want nearly %d", on, callers)
	}
	if off > 0.65*callers {
		t.Fatalf("%.1f messages per entry without the gather: the test no longer shows the split it guards against", off)
	}
}

// Callers whose messages would reach PipelineMinBytes once back (an async
// window's worth) are not gathered: that queue keeps its behaviour from before
// the gather, measured at length in docs/performance.md.
func TestProposerDoesNotGatherAPipelineWorth(t *testing.T) {
	cfg := ProposerConfig{GatherMax: 50 * time.Millisecond, PipelineMinBytes: 64 << 10}
	got := closedLoop(t, cfg, 16, 20, 5<<10, 20*time.Millisecond, 200*time.Microsecond) // 16 × 5 KiB = 80 KiB
	if got > 10 {
		t.Fatalf("%.1f messages per entry: the callers were gathered", got)
	}
}

// When fewer callers come back than the last entry answered (a producer
// stopped), the ones that did are proposed once the gather's window is over.
func TestProposerGatherEndsWhenCallersDoNotReturn(t *testing.T) {
	fr := newFakeRaft()
	p := newProposer(ProposerConfig{GatherMax: 5 * time.Millisecond}, fr.propose, echoResults)
	defer p.Close(0)
	a := goPropose(p, context.Background(), "a")
	first := fr.next(t)
	time.Sleep(20 * time.Millisecond) // the entry's commit time, which bounds the window too
	b := goPropose(p, context.Background(), "b")
	waitPending(t, p, 1) // held back behind the entry in flight
	first.resolveOK(1)
	recv(t, a)
	// Two callers were answered or waiting, so the queue expects two; "a"
	// never sends again, and "b" goes alone once the window is over.
	second := fr.next(t)
	if len(second.msgs) != 1 || string(second.msgs[0]) != "b" {
		t.Fatalf("second entry %q, want [b]", second.msgs)
	}
	second.resolveOK(2)
	if got := recv(t, b); got.err != nil || got.res[0] != "b" {
		t.Fatalf("caller after the gather: %+v", got)
	}
}

// gatherLocked's rule, state by state.
func TestProposerGatherRule(t *testing.T) {
	// No goroutines: gatherLocked reads the state alone.
	p := &proposer[string]{cfg: ProposerConfig{GatherMax: time.Second, PipelineMinBytes: 1000}.withDefaults(), slots: make(chan struct{}, 2)}
	now := time.Now()
	set := func(expect, waiting, pendingBytes, slots int) {
		p.expect, p.waiting, p.pending, p.pendingBytes = expect, waiting, waiting, pendingBytes
		p.gatherWindow, p.gatherUntil = 10*time.Millisecond, time.Time{}
		for len(p.slots) > 0 {
			<-p.slots
		}
		for range slots {
			p.slots <- struct{}{}
		}
	}
	cases := []struct {
		name                                 string
		expect, waiting, pendingBytes, slots int
		gather                               bool
	}{
		{"one sync producer back", 1, 1, 100, 1, false},
		{"first of sixteen back", 16, 1, 100, 1, true},
		{"all sixteen back", 16, 16, 1600 / 2, 1, false},
		{"nothing answered yet", 0, 3, 300, 1, false},
		{"nobody back yet", 16, 0, 0, 1, false},
		{"another entry in flight", 16, 1, 100, 2, false},
		{"pipeline threshold queued", 16, 10, 1000, 1, false},
	}
	for _, c := range cases {
		set(c.expect, c.waiting, c.pendingBytes, c.slots)
		wait := p.gatherLocked(now)
		if (wait > 0) != c.gather {
			t.Errorf("%s: gather wait %v, want gather=%v", c.name, wait, c.gather)
		}
		if c.gather && wait != 10*time.Millisecond {
			t.Errorf("%s: wait %v, want the window from the first arrival (10ms)", c.name, wait)
		}
	}
}
