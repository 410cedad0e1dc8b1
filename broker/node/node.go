package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker/loop"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/raftlog"
	"github.com/rocketraft/rocketraft/store"
)

// Node is one member of a broker group.
//
// Concurrency: every method is safe for concurrent use. Propose callers share
// raft entries through the proposer; role changes are observed by one goroutine
// that runs the leader barrier and publishes to subscribers; a ticker goroutine
// writes the FSM's apply checkpoint.
type Node struct {
	cfg    Config
	log    hclog.Logger
	raft   *raft.Raft
	fsm    *fsm.FSM
	store  *store.Store
	stores *raftlog.Stores
	snaps  raft.SnapshotStore
	prop   *proposer[fsm.MessageResult]

	roles *roleWatcher
	// leadership keeps this node's last LeadershipRing leader changes.
	leadership *leadershipLog

	stop chan struct{}
	// raftForFSM is n.raft for callbacks on raft's FSM goroutine (onDiskFull),
	// which starts before Open assigns n.raft.
	raftForFSM atomic.Pointer[raft.Raft]
	// raftDown is closed once raft has shut down: futures not answered by then
	// never will be.
	raftDown  chan struct{}
	bg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Open opens (or creates) the node's stores, loads the FSM from its checkpoint,
// starts raft and, when the node has no raft state and is in cfg.Peers,
// bootstraps the group.
func Open(cfg Config) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	// "auto": the kind this node's raft state was written with, commitlog when new.
	cfg.LogStore = raftlog.ResolveKind(filepath.Join(cfg.Dir, RaftDirName), cfg.LogStore)
	n := &Node{cfg: cfg, log: cfg.Logger.Named("node").With("id", cfg.ID), stop: make(chan struct{}), raftDown: make(chan struct{})}
	var closers []func()
	fail := func(err error) (*Node, error) {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		return nil, err
	}
	closers = append(closers, func() { closeTransport(cfg.Transport) })

	// The commitlog kind (decision 0016) keeps the raft log in the Store's
	// CommitLog: every message is written once, by raft.
	entryLog := cfg.LogStore == raftlog.LogStoreCommitLog
	cfg.Store.RaftEntryLog = entryLog
	st, err := store.Open(withStoreLogger(cfg.Store, cfg.Logger))
	if err != nil {
		return fail(fmt.Errorf("node id=%s open store: %w", cfg.ID, err))
	}
	n.store = st
	closers = append(closers, func() { _ = st.Close() })

	guard := newDiskGuard(cfg.DiskStallTimeout, n.log)
	n.fsm, err = fsm.New(fsm.Config{
		Store:       guardedStore{Store: st, g: guard},
		Dir:         cfg.Store.Dir,
		Logger:      cfg.Logger,
		SegmentSize: cfg.Store.CommitLogSegmentSize,
		OnDiskFull:  diskFullHandler(n.raftForFSM.Load, n.log, &n.bg),
		// n.stores is open before raft starts, the first caller.
		WaitLogDurable: func(index uint64, stop <-chan struct{}) error { return n.stores.WaitDurable(index, stop) },
		EntryLog:       entryLog,
	})
	if err != nil {
		return fail(fmt.Errorf("node id=%s open fsm: %w", cfg.ID, err))
	}

	openStores := raftlog.OpenStores
	if cfg.OpenRaftStores != nil {
		openStores = cfg.OpenRaftStores
	}
	if entryLog {
		// OpenRaftStores hooks raft-wal's files (fault injection); this kind has
		// none of its own.
		openStores = func(dir string, _ raftlog.LogStoreKind, logger hclog.Logger) (*raftlog.Stores, error) {
			return raftlog.OpenStoresOnEntryLog(dir, st.EntryLog(), logger)
		}
	}
	n.stores, err = openStores(filepath.Join(cfg.Dir, RaftDirName), cfg.LogStore, cfg.Logger)
	if err != nil {
		return fail(fmt.Errorf("node id=%s open raft stores: %w", cfg.ID, err))
	}
	closers = append(closers, func() { _ = n.stores.Close() })
	// On the commitlog kind (decision 0016) message batches are stored as CommitLog
	// records; other kinds ignore this.
	n.stores.SetEntrySplitter(raftlog.EntrySplitter{Split: fsm.SplitRecords, Join: fsm.JoinRecords})
	if cfg.WrapLogStore != nil {
		n.stores.Log = cfg.WrapLogStore(n.stores.Log)
	}
	if guard.enabled() {
		n.stores.Log = guardedLogStore{LogStore: n.stores.Log, g: guard}
	}

	snapDir := filepath.Join(cfg.Dir, SnapshotDirName)
	if err := os.MkdirAll(snapDir, 0o750); err != nil {
		return fail(fmt.Errorf("node id=%s create %s: %w", cfg.ID, snapDir, err))
	}
	// Local snapshots reference the CommitLog instead of copying it; the store
	// also installs the CommitLog's retention guard (raftlog doc § Snapshots).
	n.snaps, err = raftlog.NewSnapshotStore(raftlog.SnapshotConfig{
		Dir: snapDir, Retain: cfg.SnapshotRetain, CommitLog: st,
		SegmentSize: cfg.Store.CommitLogSegmentSize, Logger: cfg.Logger,
	})
	if err != nil {
		return fail(fmt.Errorf("node id=%s open snapshot store: %w", cfg.ID, err))
	}
	if err := n.restoreNewerSnapshot(); err != nil {
		return fail(err)
	}

	hasState, err := raft.HasExistingState(n.stores.Log, n.stores.Stable, n.snaps)
	if err != nil {
		return fail(fmt.Errorf("node id=%s inspect raft state: %w", cfg.ID, err))
	}

	notify := make(chan bool, 16)
	rc := cfg.raftConfig()
	rc.NotifyCh = notify
	var trans raft.Transport = drainedTransport{Transport: cfg.Transport}
	if !cfg.SerialLeaderFsync {
		trans = commitCapTransport{Transport: trans, durable: n.stores.DurableIndex}
	}
	if guard.enabled() {
		n.stores.TimeDeferredFsync(func(sync func() error) error {
			err := guard.time(&guard.syncStart, sync)
			guard.logWritten(err)
			return err
		})
		trans = fencedTransport{Transport: trans, g: guard}
	}
	r, err := raft.NewRaft(rc, n.fsm, n.stores.Log, n.stores.Stable, n.snaps, trans)
	if err != nil {
		return fail(fmt.Errorf("node id=%s start raft: %w", cfg.ID, err))
	}
	if !cfg.SerialLeaderFsync {
		// raft stores its leader's batches from its main goroutine, the one
		// that changes its state, so State() read in StoreLogs is exact.
		n.stores.DeferLeaderFsync(func() bool { return r.State() == raft.Leader })
	}
	n.raft = r
	n.raftForFSM.Store(r)
	// raft owns the transport now and closes it on Shutdown.
	closers = append(closers[1:], func() { _ = r.Shutdown().Error() })

	if !hasState && inPeers(cfg.ID, cfg.Peers) {
		err := r.BootstrapCluster(raft.Configuration{Servers: cfg.Peers}).Error()
		if err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			return fail(fmt.Errorf("node id=%s bootstrap: %w", cfg.ID, err))
		}
	}

	n.prop = newProposer(cfg.Proposer, n.proposeEntry, putResults)
	n.roles = newRoleWatcher(r, n.log)
	n.leadership = newLeadershipLog(cfg.ID, cfg.HeartbeatTimeout)
	n.bg.Add(3)
	go func() { defer n.bg.Done(); watchLeadership(r, n.leadership, cfg.Now, n.stop) }()
	go func() { defer n.bg.Done(); n.roles.run(notify, n.stop) }()
	go func() { defer n.bg.Done(); n.checkpointLoop() }()
	n.log.Info("node open", "dir", cfg.Dir, "bootstrapped", !hasState && inPeers(cfg.ID, cfg.Peers),
		"appliedIndex", n.fsm.AppliedIndex(), "lastIndex", r.LastIndex())
	return n, nil
}

func withStoreLogger(c store.Config, l hclog.Logger) store.Config {
	if c.Logger == nil {
		c.Logger = l
	}
	return c
}

func inPeers(id raft.ServerID, peers []raft.Server) bool {
	for _, p := range peers {
		if p.ID == id {
			return true
		}
	}
	return false
}

func closeTransport(t raft.Transport) {
	if c, ok := t.(raft.WithClose); ok {
		_ = c.Close()
	}
}

// restoreNewerSnapshot installs the newest local snapshot when it is ahead of
// the FSM's apply checkpoint. raft (NoSnapshotRestoreOnStart) starts replaying
// after the newest snapshot's index, so entries between the checkpoint and the
// snapshot would otherwise never be applied here.
func (n *Node) restoreNewerSnapshot() error {
	metas, err := n.snaps.List()
	if err != nil {
		return fmt.Errorf("node id=%s list snapshots: %w", n.cfg.ID, err)
	}
	applied := n.fsm.AppliedIndex()
	for _, meta := range metas { // newest first
		if meta.Index <= applied {
			return nil
		}
		if el := n.store.EntryLog(); el != nil && el.LastIndex() > meta.Index {
			// The raft log is the CommitLog the restore replaces: entries above the
			// snapshot (possibly counted toward a quorum) would be lost with it.
			return fmt.Errorf("node id=%s: snapshot %s (index %d) is ahead of the apply checkpoint (%d), and restoring it would discard raft log entries up to %d kept in the CommitLog; "+
				"the apply checkpoint (%s) is missing or stale: restore it, or wipe this node's data so it catches up from the leader",
				n.cfg.ID, meta.ID, meta.Index, applied, el.LastIndex(), fsm.CheckpointFile)
		}
		_, rc, err := n.snaps.Open(meta.ID)
		if err != nil {
			n.log.Warn("cannot open snapshot, trying an older one", "snapshot", meta.ID, "error", err)
			continue
		}
		err = n.fsm.Restore(rc) // Restore closes rc
		if err != nil {
			return fmt.Errorf("node id=%s restore snapshot %s (index %d > applied %d): %w", n.cfg.ID, meta.ID, meta.Index, applied, err)
		}
		n.log.Info("restored local snapshot ahead of the checkpoint", "snapshot", meta.ID, "index", meta.Index, "checkpointIndex", applied)
		return nil
	}
	return nil
}

// proposeEntry encodes one PutMessages command with the leader's clock and
// store host and hands it to raft. Runs on the proposer's batching goroutine.
func (n *Node) proposeEntry(msgs [][]byte) raft.ApplyFuture {
	size := fsm.PutMessagesSize(n.cfg.StoreHost, msgs)
	cmd, err := fsm.AppendPutMessages(make([]byte, 0, size), n.cfg.Now().UnixMilli(), n.cfg.StoreHost, msgs)
	if err != nil {
		return errorFuture{err: err}
	}
	return n.raft.Apply(cmd, 0)
}

func putResults(resp any, count int) ([]fsm.MessageResult, error) {
	switch r := resp.(type) {
	case *fsm.PutResult:
		return r.Results, nil
	case error:
		return nil, r
	}
	return nil, fmt.Errorf("node: PutMessages entry answered %T, want *fsm.PutResult", resp)
}

// errorFuture answers a proposal that never reached raft.
type errorFuture struct{ err error }

func (e errorFuture) Error() error  { return e.err }
func (e errorFuture) Response() any { return nil }
func (e errorFuture) Index() uint64 { return 0 }

// Propose replicates msgs (encoded by store.AppendMessage) through raft, sharing
// one entry with concurrent callers, and returns one result per message once the
// entry is applied here. See proposer.Propose for the error contract: ErrNotLeader,
// ErrBusy and ErrClosed mean not applied; ErrUnknownOutcome means maybe applied.
//
// A leader that has not yet passed its barrier holds the call until it has, so
// nothing is accepted before the node has applied every earlier entry.
func (n *Node) Propose(ctx context.Context, msgs [][]byte) ([]fsm.MessageResult, error) {
	if err := n.roles.waitWritable(ctx); err != nil {
		return nil, err
	}
	return n.prop.Propose(ctx, msgs)
}

// ProposeAsync is Propose answered through done, which runs exactly once and
// must not block (it runs on the proposer's completion goroutine). A node that
// is waiting for its leader barrier proposes from a goroutine of its own once
// the barrier passed, as Propose would wait for it.
func (n *Node) ProposeAsync(ctx context.Context, msgs [][]byte, done func([]fsm.MessageResult, error)) {
	if !n.roles.writableNow() {
		go func() { done(n.Propose(ctx, msgs)) }()
		return
	}
	n.prop.ProposeAsync(ctx, msgs, done)
}

// Apply replicates one non-message command (topic, group, offsets, …) on its own
// raft entry and returns the FSM's response (*fsm.ConfigResult).
func (n *Node) Apply(ctx context.Context, cmd fsm.Command) (any, error) {
	b, err := fsm.Encode(nil, cmd)
	if err != nil {
		return nil, err
	}
	if err := n.roles.waitWritable(ctx); err != nil {
		return nil, err
	}
	f := n.raft.Apply(b, timeoutOf(ctx))
	if err := n.waitFuture(ctx, f); err != nil {
		switch {
		case errors.Is(err, ErrUnknownOutcome):
			return nil, err
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			return nil, fmt.Errorf("%w: %w", ErrUnknownOutcome, err)
		}
		return nil, classifyApplyError(err, f.Index())
	}
	return f.Response(), nil
}

// ProposerStats reports group-commit counters.
func (n *Node) ProposerStats() ProposerStats { return n.prop.Stats() }

// LogWriteStats are the raft log's writes (each fsynced) since the node opened.
func (n *Node) LogWriteStats() raftlog.WriteStats { return n.stores.WriteStats() }

// LogFsyncStats are the deferred raft log fsync rounds this node ran as
// leader (raftlog's leadersync.go) and their total time: on a leader,
// LogWriteStats counts the writes only.
func (n *Node) LogFsyncStats() raftlog.WriteStats { return n.stores.DeferredFsyncStats() }

// Store is the node's message store (reads: GetMessages, ReadMessageAt, …).
// Writes go through Propose only.
func (n *Node) Store() *store.Store { return n.store }

// FSM is the node's state machine (metadata accessors).
func (n *Node) FSM() *fsm.FSM { return n.fsm }

// Now is the leader's clock (Config.Now): every entry that carries a store
// timestamp is stamped with it.
func (n *Node) Now() time.Time { return n.cfg.Now() }

// ID is the node's raft server id.
func (n *Node) ID() raft.ServerID { return n.cfg.ID }

// Raft exposes the raft instance to tests and diagnostics.
func (n *Node) Raft() *raft.Raft { return n.raft }

// Snapshot asks raft for a snapshot now (and log compaction behind it).
func (n *Node) Snapshot() error {
	if err := n.raft.Snapshot().Error(); err != nil {
		return fmt.Errorf("node id=%s snapshot: %w", n.cfg.ID, err)
	}
	return nil
}

// Checkpoint writes the FSM's apply checkpoint now (the ticker does it every
// CheckpointInterval, and Close once more).
func (n *Node) Checkpoint() error { return n.fsm.Checkpoint() }

func (n *Node) checkpointLoop() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-n.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	loop.Every(ctx, n.cfg.CheckpointInterval, loop.AfterFirstTick, func(time.Time) {
		if err := n.fsm.Checkpoint(); err != nil {
			n.log.Error("apply checkpoint failed", "error", err)
		}
	})
}

// Close shuts raft down, answers every pending proposal, writes a final apply
// checkpoint and closes the stores. It is idempotent.
func (n *Node) Close() error {
	n.closeOnce.Do(func() { n.closeErr = n.shutdown(true) })
	return n.closeErr
}

// Kill stops the node the way a process crash leaves its disk as far as the
// apply state goes: no final checkpoint is written, so a restart replays from
// the last periodic one. (Files are still closed so the test can reopen them.)
func (n *Node) Kill() error {
	n.closeOnce.Do(func() { n.closeErr = n.shutdown(false) })
	return n.closeErr
}

func (n *Node) shutdown(checkpoint bool) error {
	var errs []error
	// raft first: it answers every future (proposals, a barrier in progress).
	// An FSM waiting for disk space would hold raft's shutdown forever.
	n.fsm.Stop()
	if err := n.raft.Shutdown().Error(); err != nil {
		errs = append(errs, fmt.Errorf("raft shutdown: %w", err))
	}
	close(n.raftDown)
	close(n.stop)
	n.bg.Wait()
	n.prop.Close(abandonGrace)
	n.roles.close()
	if checkpoint {
		if err := n.fsm.Checkpoint(); err != nil {
			errs = append(errs, fmt.Errorf("final checkpoint: %w", err))
		}
	}
	if err := n.store.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close store: %w", err))
	}
	if err := n.stores.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close raft stores: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("node id=%s close: %w", n.cfg.ID, err)
	}
	n.log.Info("node closed", "checkpoint", checkpoint)
	return nil
}

// abandonGrace is how long Close lets the proposer's completion goroutine
// drain answered futures after raft has shut down before answering the rest
// ErrUnknownOutcome. Answered futures drain in microseconds.
const abandonGrace = 200 * time.Millisecond

// timeoutOf turns a ctx deadline into raft's enqueue timeout (0 = none).
func timeoutOf(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		if t := time.Until(d); t > 0 {
			return t
		}
		return time.Millisecond
	}
	return 0
}

// waitFuture waits for f, ctx or raft's shutdown (after which raft answers
// nothing more). raft futures cannot be cancelled: on ctx or shutdown the
// operation may still have taken effect.
func (n *Node) waitFuture(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-n.raftDown:
		select {
		case err := <-done:
			return err
		default:
			return fmt.Errorf("%w: raft shut down without answering", ErrUnknownOutcome)
		}
	}
}
