package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Proposer defaults. 4 MiB is RocketMQ's maxMessageSize, so one maximal message
// always fits an entry on its own; 1024 messages bounds the work of one Apply.
const (
	DefaultMaxBatchBytes    = 4 << 20
	DefaultMaxBatchMessages = 1024
	// DefaultMaxInflight entries proposed but not yet applied. Only a queue
	// of PipelineMinBytes or more (an async window) is proposed while another
	// entry is in flight, so this bounds how deep that queue pipelines raft:
	// with four, the leader writes the next entries while the followers fsync
	// the ones ahead. Measured against two (docs/performance.md, twelfth
	// pass): async 1 × 256 × 1 KiB 32.7k → 38.8k msgs/s (harness medians of
	// three rounds) with less server CPU per message; 16 sync producers and
	// 64 official-client producers unchanged (they stay below the threshold).
	// Before the threshold existed (sixth pass) four made 16 sync producers
	// 10–20 % slower, each entry in flight taking its share of the queue.
	DefaultMaxInflight = 4
	// DefaultPipelineMinBytes is what must be queued before a second entry is
	// proposed while one is in flight. Each entry costs a raft log write, an
	// fsync and an AppendEntries on every node whatever it carries; a second
	// one proposed at once carries only the few sends that arrived meanwhile.
	// Against three broker processes on 2 cores (docs/performance.md, seventh
	// pass) one entry in flight gave 16 sync producers 13–25 % and 64 official
	// client producers 5–8 % more throughput than two, for 10–27 % less broker
	// CPU, while the async window (256 × 1 KiB) tied or favoured two. 16 or 64
	// waiting 1 KiB sends stay below 128 KiB; an async window's queue does not.
	DefaultPipelineMinBytes = 128 << 10
	// DefaultGatherMax bounds how long the queue waits, with nothing in flight,
	// for the callers the last entry answered to come back (see
	// ProposerConfig.GatherMax).
	DefaultGatherMax = time.Millisecond
	// DefaultMaxPending messages waiting for an entry before callers get ErrBusy.
	DefaultMaxPending = 16384
	// DefaultMaxWait is how long a Propose waits for its entry's outcome. It
	// is the send timeout every producer request has: raft answers an entry
	// well within it even across a leader change, so reaching it means the
	// group is stuck, and the caller should hear so rather than wait on.
	DefaultMaxWait = 10 * time.Second
)

// ProposerConfig bounds group commit. Zero values take the defaults above.
type ProposerConfig struct {
	// MaxBatchBytes caps the message bytes coalesced into one raft entry. A single
	// caller whose messages exceed it still gets an entry of its own.
	MaxBatchBytes int
	// MaxBatchMessages caps the messages per entry; 1 disables group commit.
	MaxBatchMessages int
	// MaxInflight caps entries handed to raft and not yet applied (pipelining).
	MaxInflight int
	// PipelineMinBytes is the message bytes that must be queued before an entry
	// is proposed while another is still in flight; until then the queue waits
	// for the entries ahead and grows into a bigger entry. A full batch
	// (MaxBatchMessages or MaxBatchBytes) never waits. Negative: propose
	// whatever is queued as soon as a slot is free.
	PipelineMinBytes int
	// GatherMax bounds the gather: when the entry ahead has been answered and
	// nothing else is in flight, the queue waits for as many callers as that
	// entry answered plus those already waiting (closed-loop producers come
	// back within a round trip), for at most half the last entry's commit
	// time and at most GatherMax, unless PipelineMinBytes or a full batch is
	// queued, or PipelineMinBytes would be once they are back. Without it N
	// sync producers split into entries of 1 and N-1: the first to come back
	// goes alone while the rest are still on their way. Negative: no gather.
	GatherMax time.Duration
	// MaxPending caps messages queued for an entry; beyond it Propose fails fast
	// with ErrBusy (the broker answers SYSTEM_BUSY).
	MaxPending int
	// MaxWait bounds how long one Propose waits, as if its ctx had that
	// timeout (give or take one sweep interval, below). It is not a
	// context.WithTimeout per send request: the derived context registered
	// itself with the connection's, under that context's lock, and cost the
	// leader ~5 % of its CPU under the async benchmark.
	MaxWait time.Duration
}

// maxSweepInterval bounds how late a waiting call notices that its ctx is
// done or MaxWait has passed: one goroutine per proposer checks every waiting
// call that often, so a call itself waits on its done channel alone. A timer
// and a three-way select per call were ~6 % of the leader's CPU in its profile
// under the async benchmark (docs/performance.md, eighth pass); a ctx is
// cancelled when a connection closes or the broker stops, where 50 ms more
// does not matter.
const maxSweepInterval = 50 * time.Millisecond

func (c ProposerConfig) withDefaults() ProposerConfig {
	if c.MaxBatchBytes <= 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if c.MaxBatchMessages <= 0 {
		c.MaxBatchMessages = DefaultMaxBatchMessages
	}
	if c.MaxInflight <= 0 {
		c.MaxInflight = DefaultMaxInflight
	}
	if c.PipelineMinBytes == 0 {
		c.PipelineMinBytes = DefaultPipelineMinBytes
	}
	if c.GatherMax == 0 {
		c.GatherMax = DefaultGatherMax
	}
	if c.MaxPending <= 0 {
		c.MaxPending = DefaultMaxPending
	}
	if c.MaxWait <= 0 {
		c.MaxWait = DefaultMaxWait
	}
	return c
}

// proposeFunc encodes msgs as one command and hands it to raft without waiting
// for the outcome. It may be called only from the proposer's batching goroutine.
type proposeFunc func(msgs [][]byte) raft.ApplyFuture

// resultsFunc turns an applied entry's FSM response into one result per message
// (n of them, in proposal order) or the error the FSM reported for the entry.
type resultsFunc[R any] func(resp any, n int) ([]R, error)

// ProposerStats counts what the proposer handed to raft.
type ProposerStats struct {
	Entries  uint64 // raft entries proposed
	Messages uint64 // messages in those entries
}

// request is one Propose or ProposeAsync call. Its fields belong to the
// proposer until it is answered (done closed, or cb called), then to the caller.
type request[R any] struct {
	msgs     [][]byte
	bytes    int
	ctx      context.Context
	deadline time.Time // MaxWait after the call
	// state and answered are guarded by proposer.mu. answered is set by
	// whoever closes done (completion, the sweep giving up on the call,
	// Close), exactly once.
	state    requestState
	answered bool
	results  []R
	err      error
	done     chan struct{} // closed once answered (Propose)
	// cb is ProposeAsync's callback, instead of done. It runs once, after
	// p.mu is released (fire).
	cb func([]R, error)
}

// answerLocked records r's outcome unless r was answered already, and wakes
// its caller: Propose's through done, ProposeAsync's by adding r to *fire,
// whose callbacks the caller runs once it has released p.mu. p.mu is held.
func (r *request[R]) answerLocked(results []R, err error, fire *[]*request[R]) {
	if r.answered {
		return
	}
	r.answered = true
	r.results, r.err = results, err
	if r.cb != nil {
		*fire = append(*fire, r)
		return
	}
	close(r.done)
}

// fire runs the callbacks of answered ProposeAsync calls, p.mu not held.
func fire[R any](reqs []*request[R]) {
	for i, r := range reqs {
		reqs[i] = nil
		r.cb(r.results, r.err)
	}
}

type requestState uint8

const (
	requestQueued requestState = iota
	requestTaken               // in an entry: the outcome belongs to raft now
	requestCancelled
)

// entry is one proposed raft entry and the callers whose messages it carries.
type entry[R any] struct {
	fut      raft.ApplyFuture
	proposed time.Time
	reqs     []*request[R]
	count    int
	bytes    int // the messages' bytes
	// finished is guarded by proposer.mu: set by whoever answers the callers
	// (completion, or Close abandoning an entry raft never answered).
	finished bool
}

// proposer coalesces concurrent Propose calls into raft entries.
//
// Concurrency: callers enqueue under mu and wait on their request's done
// channel. One batching goroutine takes queued requests, proposes an entry and
// passes its future to one completion goroutine, which waits for futures in
// proposal order (raft applies them in that order) and hands every caller its
// own slice of the entry's results. slots bounds the entries in flight. A
// sweep goroutine gives up on calls whose ctx is done or whose MaxWait has
// passed. There is no goroutine or timer per call or per message.
type proposer[R any] struct {
	cfg     ProposerConfig
	propose proposeFunc
	results resultsFunc[R]

	mu sync.Mutex
	// queue holds requests in arrival order; cancelled ones are skipped.
	queue []*request[R]
	// pending is the message count of queued (not cancelled) requests and
	// pendingBytes their bytes.
	// Invariant: pending == sum(len(r.msgs)) and pendingBytes == sum(r.bytes)
	// over r in queue with state queued.
	pending      int
	pendingBytes int
	// waiting is the number of queued (not cancelled) requests.
	waiting int
	// expect, gatherWindow and gatherUntil describe the gather
	// (ProposerConfig.GatherMax): expect and gatherWindow are set when an
	// entry is answered, gatherUntil when the first caller is queued after
	// that; expect is cleared when the next entry is taken.
	expect       int
	gatherWindow time.Duration
	gatherUntil  time.Time
	closed       bool
	// open holds the entries handed to raft and not yet answered.
	open map[*entry[R]]struct{}

	wake chan struct{} // cap 1: queue became non-empty
	// gatherTimer is the batching goroutine's own, reused for every gather.
	gatherTimer *time.Timer
	slots       chan struct{} // cap MaxInflight: one token per entry in flight
	inflight    chan *entry[R]
	stop        chan struct{}
	sweepWG     sync.WaitGroup
	batchWG     sync.WaitGroup
	doneWG      sync.WaitGroup
	stopOnce    sync.Once

	entries  atomic.Uint64
	messages atomic.Uint64
}

func newProposer[R any](cfg ProposerConfig, propose proposeFunc, results resultsFunc[R]) *proposer[R] {
	cfg = cfg.withDefaults()
	p := &proposer[R]{
		cfg:      cfg,
		propose:  propose,
		results:  results,
		wake:     make(chan struct{}, 1),
		slots:    make(chan struct{}, cfg.MaxInflight),
		inflight: make(chan *entry[R], cfg.MaxInflight),
		stop:     make(chan struct{}),
		open:     make(map[*entry[R]]struct{}),
	}
	p.batchWG.Add(1)
	p.doneWG.Add(1)
	p.sweepWG.Add(1)
	go p.batchLoop()
	go p.completeLoop()
	go p.sweepLoop(min(maxSweepInterval, max(cfg.MaxWait/4, time.Millisecond)))
	return p
}

// Propose replicates msgs (pre-encoded messages) in one raft entry, possibly
// shared with other callers, and returns one result per message once the entry
// is applied on this node. Errors: ErrBusy, ErrNotLeader and ErrClosed mean the
// messages were definitely not applied; ErrUnknownOutcome means they may or may
// not have been; a ctx error (or MaxWait passing: context.DeadlineExceeded)
// before the entry was proposed means not applied.
func (p *proposer[R]) Propose(ctx context.Context, msgs [][]byte) ([]R, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &request[R]{msgs: msgs, ctx: ctx, deadline: time.Now().Add(p.cfg.MaxWait), done: make(chan struct{})}
	if err := p.enqueue(r); err != nil {
		return nil, err
	}
	<-r.done
	return r.results, r.err
}

// ProposeAsync is Propose answered through done instead of a return: done
// runs exactly once, with what Propose would return. It may run before
// ProposeAsync returns (a refusal), else on a proposer goroutine, so it must
// not block: the next entries' answers wait behind it.
func (p *proposer[R]) ProposeAsync(ctx context.Context, msgs [][]byte, done func([]R, error)) {
	if len(msgs) == 0 {
		done(nil, nil)
		return
	}
	if err := ctx.Err(); err != nil {
		done(nil, err)
		return
	}
	r := &request[R]{msgs: msgs, ctx: ctx, deadline: time.Now().Add(p.cfg.MaxWait), cb: done}
	if err := p.enqueue(r); err != nil {
		done(nil, err)
	}
}

// enqueue queues r for an entry, or refuses it (ErrClosed, ErrBusy).
func (p *proposer[R]) enqueue(r *request[R]) error {
	for _, m := range r.msgs {
		r.bytes += len(m)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	if p.pending > 0 && p.pending+len(r.msgs) > p.cfg.MaxPending {
		pending := p.pending
		p.mu.Unlock()
		return fmt.Errorf("propose messages=%d pending=%d max=%d: %w", len(r.msgs), pending, p.cfg.MaxPending, ErrBusy)
	}
	p.queue = append(p.queue, r)
	p.waiting++
	p.pending += len(r.msgs)
	p.pendingBytes += r.bytes
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return nil
}

// sweepLoop gives up on waiting calls every interval until Close.
func (p *proposer[R]) sweepLoop(interval time.Duration) {
	defer p.sweepWG.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.sweep(now)
		}
	}
}

// sweep answers every call whose ctx is done or whose MaxWait has passed by
// now: a queued one with the cause alone (it is dropped, never proposed), one
// already in an entry with ErrUnknownOutcome too (the entry may still commit).
func (p *proposer[R]) sweep(now time.Time) {
	var answered []*request[R]
	defer func() { fire(answered) }()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.queue {
		if r == nil || r.state != requestQueued {
			continue
		}
		if cause := p.giveUp(r, now); cause != nil {
			r.state = requestCancelled
			p.waiting--
			p.pending -= len(r.msgs)
			p.pendingBytes -= r.bytes
			r.answerLocked(nil, cause, &answered)
		}
	}
	for e := range p.open {
		for _, r := range e.reqs {
			if r.answered {
				continue
			}
			if cause := p.giveUp(r, now); cause != nil {
				r.answerLocked(nil, fmt.Errorf("%w: %w", ErrUnknownOutcome, cause), &answered)
			}
		}
	}
}

// giveUp is why a call should stop waiting at now, or nil.
func (p *proposer[R]) giveUp(r *request[R], now time.Time) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	if now.After(r.deadline) {
		return fmt.Errorf("propose: no outcome within %s: %w", p.cfg.MaxWait, context.DeadlineExceeded)
	}
	return nil
}

// Stats reports the entries and messages proposed so far.
func (p *proposer[R]) Stats() ProposerStats {
	return ProposerStats{Entries: p.entries.Load(), Messages: p.messages.Load()}
}

// Close fails queued calls with ErrClosed, stops proposing and waits until every
// entry in flight has an outcome. grace <= 0 waits for raft to answer every
// entry. Otherwise, entries still unanswered after grace are answered
// ErrUnknownOutcome: the node closes the proposer after raft has shut down,
// and raft drops futures still buffered in its apply channel or not yet
// applied at shutdown without ever answering them.
func (p *proposer[R]) Close(grace time.Duration) {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		close(p.stop)
	})
	p.sweepWG.Wait()
	p.batchWG.Wait()
	if grace <= 0 {
		p.doneWG.Wait()
		return
	}
	done := make(chan struct{})
	go func() { p.doneWG.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	p.mu.Lock()
	err := fmt.Errorf("%w: raft shut down without answering the entry", ErrUnknownOutcome)
	var answered []*request[R]
	for e := range p.open {
		e.finished = true
		delete(p.open, e)
		for _, r := range e.reqs {
			r.answerLocked(nil, err, &answered)
		}
	}
	p.mu.Unlock()
	fire(answered)
	// The completion goroutine may stay blocked on a future raft will never
	// answer; it owns nothing the callers still need.
}

func (p *proposer[R]) batchLoop() {
	defer p.batchWG.Done()
	defer close(p.inflight)
	defer p.failQueued()
	for {
		select {
		case p.slots <- struct{}{}:
		case <-p.stop:
			return
		}
		reqs, msgs, ok := p.take()
		if !ok {
			return
		}
		proposed := time.Now()
		fut := p.propose(msgs)
		p.entries.Add(1)
		p.messages.Add(uint64(len(msgs)))
		bytes := 0
		for _, r := range reqs {
			bytes += r.bytes
		}
		e := &entry[R]{fut: fut, proposed: proposed, reqs: reqs, count: len(msgs), bytes: bytes}
		p.mu.Lock()
		p.open[e] = struct{}{}
		p.mu.Unlock()
		// Never blocks: slots admits at most cap(inflight) entries.
		p.inflight <- e
	}
}

// take waits for queued requests and removes the longest prefix that fits the
// batch bounds (at least one request), marking them taken. While other
// entries are in flight it also waits for PipelineMinBytes to be queued.
func (p *proposer[R]) take() ([]*request[R], [][]byte, bool) {
	for {
		p.mu.Lock()
		if p.holdBackLocked() {
			p.mu.Unlock()
			select {
			case <-p.wake: // more queued, or an entry ahead was answered
			case <-p.stop:
				return nil, nil, false
			}
			continue
		}
		if wait := p.gatherLocked(time.Now()); wait > 0 {
			p.mu.Unlock()
			if p.gatherTimer == nil {
				p.gatherTimer = time.NewTimer(wait)
			} else {
				p.gatherTimer.Reset(wait)
			}
			select {
			case <-p.wake: // another caller is back
			case <-p.gatherTimer.C:
			case <-p.stop:
				p.gatherTimer.Stop()
				return nil, nil, false
			}
			p.gatherTimer.Stop()
			continue
		}
		var (
			reqs         []*request[R]
			count, bytes int
			i            int
		)
		for ; i < len(p.queue); i++ {
			r := p.queue[i]
			if r.state != requestQueued {
				p.queue[i] = nil
				continue
			}
			if len(reqs) > 0 && (count+len(r.msgs) > p.cfg.MaxBatchMessages || bytes+r.bytes > p.cfg.MaxBatchBytes) {
				break
			}
			r.state = requestTaken
			p.queue[i] = nil
			reqs = append(reqs, r)
			count += len(r.msgs)
			bytes += r.bytes
		}
		p.queue = p.queue[i:]
		if len(p.queue) == 0 {
			p.queue = p.queue[:0:0] // let the backing array go
		}
		p.waiting -= len(reqs)
		if len(reqs) > 0 {
			p.expect = 0
		}
		p.pending -= count
		p.pendingBytes -= bytes
		more := len(p.queue) > 0
		p.mu.Unlock()
		if more {
			select {
			case p.wake <- struct{}{}:
			default:
			}
		}
		if len(reqs) > 0 {
			msgs := make([][]byte, 0, count)
			for _, r := range reqs {
				msgs = append(msgs, r.msgs...)
			}
			return reqs, msgs, true
		}
		select {
		case <-p.wake:
		case <-p.stop:
			return nil, nil, false
		}
	}
}

// holdBackLocked reports whether the queued messages should wait for the
// entries in flight instead of becoming an entry of their own now: the caller
// holds a slot, so more than one taken means others are in flight. p.mu is held.
func (p *proposer[R]) holdBackLocked() bool {
	if p.cfg.PipelineMinBytes <= 0 || p.pending == 0 || len(p.slots) <= 1 {
		return false
	}
	full := p.pending >= p.cfg.MaxBatchMessages || p.pendingBytes >= p.cfg.MaxBatchBytes
	return !full && p.pendingBytes < p.cfg.PipelineMinBytes
}

// gatherLocked is how long the queue should still wait for callers coming back
// before it becomes an entry (ProposerConfig.GatherMax), or 0. The caller holds
// a slot, so len(p.slots) == 1 means nothing else is in flight. p.mu is held.
func (p *proposer[R]) gatherLocked(now time.Time) time.Duration {
	if p.expect == 0 || p.waiting == 0 || p.waiting >= p.expect || len(p.slots) > 1 {
		return 0
	}
	if p.pending >= p.cfg.MaxBatchMessages || p.pendingBytes >= p.cfg.MaxBatchBytes ||
		(p.cfg.PipelineMinBytes > 0 && p.pendingBytes >= p.cfg.PipelineMinBytes) {
		return 0
	}
	if p.gatherUntil.IsZero() {
		p.gatherUntil = now.Add(p.gatherWindow)
	}
	return p.gatherUntil.Sub(now)
}

func (p *proposer[R]) failQueued() {
	var answered []*request[R]
	defer func() { fire(answered) }()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.queue {
		if r != nil && r.state == requestQueued {
			r.state = requestCancelled
			r.answerLocked(nil, ErrClosed, &answered)
		}
	}
	p.queue = nil
	p.waiting = 0
	p.pending = 0
	p.pendingBytes = 0
}

func (p *proposer[R]) completeLoop() {
	defer p.doneWG.Done()
	var answered []*request[R]
	for e := range p.inflight {
		answered = p.complete(e, answered[:0])
		<-p.slots
		// A queue held back by PipelineMinBytes may go now that fewer
		// entries are ahead of it.
		select {
		case p.wake <- struct{}{}:
		default:
		}
		// The callbacks run after the slot is free, so the next entry is
		// not held back by the answers to this one.
		fire(answered)
	}
}

// complete answers e's calls. It returns answered with the ProposeAsync calls
// among them appended, for the caller to fire once p.mu is released.
func (p *proposer[R]) complete(e *entry[R], answered []*request[R]) []*request[R] {
	var (
		results []R
		err     error
	)
	if ferr := e.fut.Error(); ferr != nil {
		err = classifyApplyError(ferr, e.fut.Index())
	} else {
		results, err = p.results(e.fut.Response(), e.count)
		if err == nil && len(results) != e.count {
			// The FSM answers one result per message it was given; anything else
			// means the command and the response no longer describe each other.
			panic(fmt.Sprintf("node: entry index=%d carried %d messages but the FSM returned %d results", e.fut.Index(), e.count, len(results)))
		}
	}
	p.mu.Lock()
	if e.finished {
		p.mu.Unlock()
		return answered // abandoned by Close
	}
	e.finished = true
	delete(p.open, e)
	if p.cfg.GatherMax > 0 {
		// The callers answered below, if they send again at once, are back
		// within a round trip; the queue waits for them (gatherLocked) unless
		// they would bring it to PipelineMinBytes, as an async window's do:
		// that queue behaves as before the gather.
		now := time.Now()
		p.expect = p.waiting + len(e.reqs)
		if p.cfg.PipelineMinBytes > 0 && p.pendingBytes+e.bytes >= p.cfg.PipelineMinBytes {
			p.expect = 0
		}
		p.gatherWindow = min(p.cfg.GatherMax, now.Sub(e.proposed)/2)
		p.gatherUntil = time.Time{} // starts when the first caller is back
	}
	off := 0
	for _, r := range e.reqs {
		if err != nil {
			r.answerLocked(nil, err, &answered)
			continue
		}
		n := len(r.msgs)
		r.answerLocked(results[off:off+n:off+n], nil, &answered) // capped: the caller owns exactly its part
		off += n
	}
	p.mu.Unlock()
	return answered
}

// classifyApplyError maps a raft Apply error onto the outcome a caller can act on.
// index is the entry's log index, 0 when raft never appended it.
func classifyApplyError(err error, index uint64) error {
	switch {
	case errIsNotLeader(err):
		// Answered before the entry was appended to any log.
		return fmt.Errorf("%w: %w", ErrNotLeader, err)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("%w: %w", ErrBusy, err)
	case errors.Is(err, raft.ErrRaftShutdown) && index == 0:
		return fmt.Errorf("%w: %w", ErrClosed, err)
	default:
		// ErrLeadershipLost, a failed local log write, shutdown after append:
		// a later leader may or may not carry the entry.
		return fmt.Errorf("%w: index=%d: %w", ErrUnknownOutcome, index, err)
	}
}

func errIsNotLeader(err error) bool {
	return errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipTransferInProgress)
}
