package node

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

// ErrDiskStalled is what every outgoing raft RPC of a fenced node returns.
var ErrDiskStalled = errors.New("node: disk stalled: raft RPCs fenced")

// diskGuard fences a node whose disk stopped answering. hashicorp/raft's leader
// writes its log from the leader loop and sends heartbeats from goroutines of
// their own, so a leader whose log write (or FSM apply, once raft's apply queue
// is full) hangs keeps heartbeating: the followers never elect anyone else,
// and the group acknowledges nothing for as long as the disk hangs (chaos
// scenario D8 on the leader: 0 msgs/s for the 10 s stall). The guard times
// every raft log write and CommitLog append; while one has run longer than
// the threshold, every outgoing raft RPC fails, as if the node were cut off:
// its heartbeats stop, the followers elect a new leader, and a stalled
// follower stops campaigning. Failing RPCs is always safe in raft (it is what
// a partition does). When the write returns the fence lifts by itself, and the
// node rejoins at the new term.
//
// Safe for concurrent use.
type diskGuard struct {
	threshold time.Duration
	log       hclog.Logger
	// Each slot is the start (unix ns) of the write of its kind in progress,
	// 0 if none: raft's log writes, the FSM's CommitLog appends, and the
	// leader's deferred raft log fsyncs (raftlog's leadersync.go, run apart
	// from StoreLogs). Writes of one kind are serial, so one slot each is enough.
	logStart, storeStart, syncStart atomic.Int64
	fences                          atomic.Int64
	fenced                          atomic.Bool
	// logFailed is when (unix ns) a raft log write last failed, 0 once one
	// succeeded since. For campaignHold after it the node asks nobody for a
	// vote (campaignCheck).
	logFailed atomic.Int64
}

// ErrLogFailing is what a node whose raft log write just failed gets from
// RequestVote and RequestPreVote.
var ErrLogFailing = errors.New("node: raft log write failing: not campaigning")

// campaignHold is how long after a failed raft log write the node does not
// campaign: twice the stall threshold (4 s by default), several election
// timeouts. A node whose log write fails (ENOSPC, an I/O error) steps down, as
// hashicorp/raft makes it, but its log is as long as anyone's, so it can win
// the next election, fail its first write again and step down again, each
// round costing an election timeout in which nobody acknowledges anything
// (chaos D1 counts those wins; D9 on the leader failed when the full node won
// every election of its 4 s of ENOSPC). Not asking for votes is safe in raft
// (a partition does the same) and ends with the hold, or at the first write
// that succeeds (as a follower), so a group whose every disk failed still
// elects.
func (g *diskGuard) campaignHold() time.Duration { return 2 * g.threshold }

// logWritten records the outcome of a raft log write.
func (g *diskGuard) logWritten(err error) {
	if err != nil {
		if g.logFailed.Swap(time.Now().UnixNano()) == 0 {
			g.log.Error("raft log write failed: not campaigning until one succeeds or the hold ends", "hold", g.campaignHold(), "error", err)
		}
	} else if g.logFailed.Load() != 0 {
		g.logFailed.Store(0)
	}
}

// campaignCheck fails while the node must not ask for votes (stalled, or a
// raft log write failed within campaignHold).
func (g *diskGuard) campaignCheck() error {
	if err := g.check(); err != nil {
		return err
	}
	if failed := g.logFailed.Load(); failed != 0 && time.Duration(time.Now().UnixNano()-failed) < g.campaignHold() {
		return fmt.Errorf("%w (failed %v ago)", ErrLogFailing, time.Duration(time.Now().UnixNano()-failed).Round(time.Millisecond))
	}
	return nil
}

// newDiskGuard returns a guard that fences after threshold; threshold ≤ 0
// disables it (writes are not timed and nothing is fenced).
func newDiskGuard(threshold time.Duration, log hclog.Logger) *diskGuard {
	return &diskGuard{threshold: threshold, log: log}
}

func (g *diskGuard) enabled() bool { return g.threshold > 0 }

// time runs write with slot holding its start.
func (g *diskGuard) time(slot *atomic.Int64, write func() error) error {
	if !g.enabled() {
		return write()
	}
	slot.Store(time.Now().UnixNano())
	defer slot.Store(0)
	return write()
}

// stalled reports whether a write has been running longer than the threshold,
// and counts each new fence.
func (g *diskGuard) stalled() bool {
	if !g.enabled() {
		return false
	}
	now := time.Now().UnixNano()
	s := false
	for _, start := range []int64{g.logStart.Load(), g.storeStart.Load(), g.syncStart.Load()} {
		if start != 0 && time.Duration(now-start) > g.threshold {
			s = true
		}
	}
	if s && !g.fenced.Swap(true) {
		g.fences.Add(1)
		g.log.Error("disk stalled: a write has run longer than the threshold; fencing raft RPCs", "threshold", g.threshold)
	} else if !s && g.fenced.Swap(false) {
		g.log.Warn("disk answers again: raft RPCs unfenced")
	}
	return s
}

func (g *diskGuard) check() error {
	if g.stalled() {
		return fmt.Errorf("%w (a write has run longer than %v)", ErrDiskStalled, g.threshold)
	}
	return nil
}

// guardedLogStore times StoreLogs (each one is written and fsynced).
type guardedLogStore struct {
	raft.LogStore
	g *diskGuard
}

func (s guardedLogStore) StoreLogs(logs []*raft.Log) error {
	err := s.g.time(&s.g.logStart, func() error { return s.LogStore.StoreLogs(logs) })
	s.g.logWritten(err)
	return err
}

func (s guardedLogStore) StoreLog(log *raft.Log) error {
	return s.StoreLogs([]*raft.Log{log})
}

// IsMonotonic forwards raft.MonotonicLogStore (raft-wal refuses gaps).
func (s guardedLogStore) IsMonotonic() bool {
	m, ok := s.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

// guardedStore times the FSM's CommitLog appends.
type guardedStore struct {
	*store.Store
	g *diskGuard
}

var _ fsm.MessageStore = guardedStore{}

func (s guardedStore) AppendBatch(recs [][]byte, ts int64) (out []store.AppendResult, err error) {
	err = s.g.time(&s.g.storeStart, func() error {
		out, err = s.Store.AppendBatch(recs, ts)
		return err
	})
	return out, err
}

// fencedTransport fails every outgoing RPC while the guard says the disk is
// stalled. Incoming RPCs are untouched (a stalled node cannot serve them
// anyway).
type fencedTransport struct {
	raft.Transport
	g *diskGuard
}

var (
	_ raft.WithPreVote = fencedTransport{}
	_ raft.WithClose   = fencedTransport{}
)

func (t fencedTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	if err := t.g.check(); err != nil {
		return nil, err
	}
	p, err := t.Transport.AppendEntriesPipeline(id, target)
	if err != nil {
		return nil, err
	}
	return fencedPipeline{AppendPipeline: p, g: t.g}, nil
}

func (t fencedTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	if err := t.g.check(); err != nil {
		return err
	}
	return t.Transport.AppendEntries(id, target, args, resp)
}

func (t fencedTransport) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	if err := t.g.campaignCheck(); err != nil {
		return err
	}
	return t.Transport.RequestVote(id, target, args, resp)
}

// RequestPreVote forwards raft.WithPreVote; without it raft would turn
// pre-vote off. Every transport this node is given supports it.
func (t fencedTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	pv, ok := t.Transport.(raft.WithPreVote)
	if !ok {
		return fmt.Errorf("node: transport %T has no pre-vote", t.Transport)
	}
	if err := t.g.campaignCheck(); err != nil {
		return err
	}
	return pv.RequestPreVote(id, target, args, resp)
}

func (t fencedTransport) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	if err := t.g.check(); err != nil {
		return err
	}
	return t.Transport.InstallSnapshot(id, target, args, resp, data)
}

func (t fencedTransport) TimeoutNow(id raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	if err := t.g.check(); err != nil {
		return err
	}
	return t.Transport.TimeoutNow(id, target, args, resp)
}

// Close forwards raft.WithClose (raft closes its transport on Shutdown).
func (t fencedTransport) Close() error {
	if c, ok := t.Transport.(raft.WithClose); ok {
		return c.Close()
	}
	return nil
}

// fencedPipeline fails pipelined AppendEntries while fenced.
type fencedPipeline struct {
	raft.AppendPipeline
	g *diskGuard
}

func (p fencedPipeline) AppendEntries(args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	if err := p.g.check(); err != nil {
		return nil, err
	}
	return p.AppendPipeline.AppendEntries(args, resp)
}
