package fsm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/store"
)

// MessageStore is the subset of *store.Store the FSM drives. It is declared here, on the
// consumer side, so tests can substitute a fake; *store.Store satisfies it.
type MessageStore interface {
	// AppendBatch copies recs into the CommitLog, assigning queue and physical offsets
	// and patching STORETIMESTAMP. An illegal record rejects the batch without writing.
	AppendBatch(recs [][]byte, storeTimestamp int64) ([]store.AppendResult, error)
	// Truncate cuts the CommitLog (and what was dispatched from it) back to off.
	Truncate(off store.PhysicalOffset) error
	// Flush makes the CommitLog durable and returns the durable offset.
	Flush() (store.PhysicalOffset, error)
	MinPhysicalOffset() store.PhysicalOffset
	MaxPhysicalOffset() store.PhysicalOffset
	// ReadRange streams the committed bytes of [from, to).
	ReadRange(from, to store.PhysicalOffset, fn func(chunk []byte) error) error
	// ResetFrom drops everything and writes the stream as the CommitLog from start.
	ResetFrom(start store.PhysicalOffset, r io.Reader) error
}

var _ MessageStore = (*store.Store)(nil)

// EntryStore is what the FSM drives instead of AppendBatch and Truncate when the
// store's CommitLog is also the raft log (Config.EntryLog; decision 0016): the
// messages are already there, and Apply only decides which of them are stored.
type EntryStore interface {
	// ApplyEntry assigns queue offsets to the kept records of entry index and makes
	// the others dead; it returns the kept ones' results and the applied end.
	ApplyEntry(index uint64, keep []bool, out []store.AppendResult) ([]store.AppendResult, store.PhysicalOffset, error)
	// RewindDispatch cuts what was dispatched at or above off (after a restart).
	RewindDispatch(off store.PhysicalOffset) error
	// WaitDispatched blocks until the reput passed off.
	WaitDispatched(ctx context.Context, off store.PhysicalOffset) error
	// EntrySnapshotState is what a snapshot carries besides the CommitLog bytes.
	EntrySnapshotState() (store.EntrySnapshot, error)
	// MarkApplyCheckpoint says where the latest durable apply checkpoint is:
	// retention keeps what a restart would replay.
	MarkApplyCheckpoint(off store.PhysicalOffset)
	// ResetFromEntries is ResetFrom for this layout.
	ResetFromEntries(start store.PhysicalOffset, r io.Reader, es store.EntrySnapshot, nextIndex uint64) error
}

var _ EntryStore = (*store.Store)(nil)

// QueuePreparer is a store that can make a topic's ConsumeQueue files ahead of
// its first message, in the background; the FSM asks it on every node when a
// topic is created or changed, so the first sends do not wait for the files.
type QueuePreparer interface {
	PrepareQueues(topic string, queues int32)
}

var _ QueuePreparer = (*store.Store)(nil)

// Config configures an FSM.
type Config struct {
	Store MessageStore
	// Dir holds the apply checkpoint (one file). It may be the store root.
	Dir    string
	Logger hclog.Logger
	// SegmentSize is this node's CommitLog segment size (mappedFileSizeCommitLog). When
	// set, it must equal the size pinned in the log (CmdPinSegmentSize), and records
	// larger than a segment fail alone instead of failing their whole batch. 0 skips both.
	SegmentSize int64
	// OnDiskFull, when set, is told (from the FSM goroutine; it must not block)
	// when a committed entry cannot be applied for want of disk space; the FSM
	// then waits for space (diskwait.go).
	OnDiskFull func(error)
	// WaitLogDurable, when set, is called (from the FSM goroutine, before an
	// entry is applied) with the entry's raft index and the FSM's stop channel;
	// it returns once the raft log holds the entry on stable storage. The
	// leader's log fsync runs alongside replication (raftlog's leadersync.go),
	// so an entry can be committed before it is durable on the leader; applying
	// it only then keeps "applied" meaning "fsynced on a quorum". An error (the
	// fsync failed, or the FSM is stopping) stops the FSM: that entry and every
	// later one stay unapplied until a restart replays them.
	WaitLogDurable func(index uint64, stop <-chan struct{}) error
	// EntryLog says the store's CommitLog is the raft log (store.Config.RaftEntryLog,
	// decision 0016): Store must implement EntryStore, and Apply stores no bytes.
	EntryLog bool
}

// Errors of the FSM lifecycle.
var (
	ErrConfig = errors.New("fsm: bad config")
	// ErrCheckpointAhead: the checkpoint names CommitLog bytes the store does not have
	// (flushed data lost, or a store directory that does not belong to this checkpoint).
	ErrCheckpointAhead = errors.New("fsm: checkpoint ahead of the CommitLog")
	ErrSnapshotFormat  = errors.New("fsm: bad snapshot")
)

// MessageResult is the outcome of one message of a PutMessages command: where
// the store put it (store.AppendResult, set when Err is nil), its offsetMsgId,
// or Err, a business failure (topic missing, message illegal) that only this
// message met. It is the put result every floor above uses (broker/node,
// broker/replica, the handlers), so a result is never retyped on its way up.
type MessageResult struct {
	store.AppendResult
	OffsetMsgID string
	Err         error
}

// PutResult is what Apply returns for a PutMessages command (ApplyFuture.Response):
// one result per message, in command order. Err is set when the whole entry failed.
type PutResult struct {
	Results []MessageResult
	Err     error
}

// ConfigResult is what Apply returns for every other command.
type ConfigResult struct {
	DataVersion DataVersion
	Err         error
}

// FSM is the raft.BatchingFSM of a broker group.
//
// Concurrency: raft calls Apply, ApplyBatch, Snapshot and Restore from its one FSM
// goroutine; Checkpoint (the node's ticker), FSMSnapshot.Persist and every read
// accessor may run concurrently with them.
type FSM struct {
	cfg  Config
	st   MessageStore
	es   EntryStore // set with Config.EntryLog
	log  hclog.Logger
	meta *Metadata

	// mu is held by Apply/ApplyBatch/Restore for their whole run and by Checkpoint and
	// Snapshot while they capture state, so a capture is always of one applied index.
	mu sync.Mutex
	// Invariant: the store holds exactly the messages of entries ≤ applied, ending at
	// clOffset (== st.MaxPhysicalOffset() between applies).
	applied     uint64
	appliedTerm uint64
	// appliedIdx mirrors applied for AppliedIndex, which must not wait for mu:
	// Apply holds mu across the store's write, so a stalled disk would hold
	// every status read (the broker asks on every request) behind it.
	appliedIdx atomic.Uint64
	clOffset   store.PhysicalOffset
	// broken is set when a Restore failed half way: the store no longer matches any
	// index, so every later Apply stops the node.
	broken error

	// Scratch reused by applyPut (single writer), so the hot path allocates only the
	// results.
	recs  [][]byte
	slots []int
	keep  []bool // per record of the entry (EntryStore)
	// entryDone: the entry being applied was handed to ApplyEntry (EntryStore).
	entryDone bool
	arena     []byte
	ids       []byte
	idEnds    []int

	// stopCh is closed by Stop; stopped is set once an entry was left unapplied
	// because of it, and from then on nothing is applied.
	stopCh   chan struct{}
	stopOnce sync.Once
	stopped  bool

	// ckMu serialises checkpoint writes (ticker, Persist, Restore).
	ckMu sync.Mutex
	// ckIndex is the appliedIndex of the last checkpoint written or loaded.
	ckIndex uint64
}

var _ raft.BatchingFSM = (*FSM)(nil)

// New loads the apply checkpoint from cfg.Dir, cuts the store back to the checkpoint's
// CommitLog offset (whatever was applied after it is replayed by raft, which must run
// with NoSnapshotRestoreOnStart) and installs the checkpoint's metadata.
func New(cfg Config) (*FSM, error) {
	if cfg.Store == nil || cfg.Dir == "" {
		return nil, fmt.Errorf("%w: Store and Dir are required", ErrConfig)
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	f := &FSM{cfg: cfg, st: cfg.Store, log: cfg.Logger.Named("fsm"), meta: newMetadata(), stopCh: make(chan struct{})}
	if cfg.EntryLog {
		es, ok := cfg.Store.(EntryStore)
		if !ok {
			return nil, fmt.Errorf("%w: EntryLog needs a store that implements EntryStore, got %T", ErrConfig, cfg.Store)
		}
		f.es = es
	}
	ck, found, err := readCheckpoint(cfg.Dir)
	if err != nil {
		return nil, err
	}
	minOff, maxOff := f.st.MinPhysicalOffset(), f.st.MaxPhysicalOffset()
	target := minOff
	if found {
		if ck.CommitLogOffset > maxOff || ck.CommitLogOffset < minOff {
			return nil, fmt.Errorf("%w: checkpoint index=%d offset=%d, CommitLog holds [%d, %d)",
				ErrCheckpointAhead, ck.AppliedIndex, ck.CommitLogOffset, minOff, maxOff)
		}
		img, err := unmarshalImage(ck.Metadata)
		if err != nil {
			return nil, fmt.Errorf("checkpoint in %s: %w", cfg.Dir, err)
		}
		if img.SegmentSize != 0 && cfg.SegmentSize != 0 && img.SegmentSize != cfg.SegmentSize {
			return nil, fmt.Errorf("%w: segment size %d configured, group pinned %d", ErrConfig, cfg.SegmentSize, img.SegmentSize)
		}
		f.meta.install(img)
		f.applied, f.appliedTerm, f.ckIndex = ck.AppliedIndex, ck.AppliedTerm, ck.AppliedIndex
		f.appliedIdx.Store(f.applied)
		target = ck.CommitLogOffset
	}
	if f.es != nil {
		// The CommitLog's tail is raft's log: it stays. What was dispatched from
		// entries past the checkpoint is cut, and raft's replay applies them again.
		if err := f.es.RewindDispatch(target); err != nil {
			return nil, fmt.Errorf("rewind dispatch to checkpoint offset %d: %w", target, err)
		}
		f.clOffset = target
		f.log.Info("apply state loaded", "appliedIndex", f.applied, "appliedTerm", f.appliedTerm, "commitLogOffset", f.clOffset, "checkpoint", found, "raftEntryLog", true)
		return f, nil
	}
	if maxOff > target {
		// Bytes past the checkpoint belong to entries raft will replay; keeping them
		// would store those messages twice.
		f.log.Info("cutting CommitLog back to the apply checkpoint", "from", maxOff, "to", target, "appliedIndex", f.applied)
		if err := f.st.Truncate(target); err != nil {
			return nil, fmt.Errorf("cut CommitLog to checkpoint offset %d: %w", target, err)
		}
	}
	f.clOffset = f.st.MaxPhysicalOffset()
	if f.clOffset != target {
		return nil, fmt.Errorf("%w: CommitLog ends at %d after cutting to %d", ErrCheckpointAhead, f.clOffset, target)
	}
	f.log.Info("apply state loaded", "appliedIndex", f.applied, "appliedTerm", f.appliedTerm, "commitLogOffset", f.clOffset, "checkpoint", found)
	return f, nil
}

// Metadata returns the replicated metadata (read accessors are safe on any goroutine).
func (f *FSM) Metadata() *Metadata { return f.meta }

// AppliedIndex returns the last raft index applied. At start-up the node compares it
// with raft's newest local snapshot: if the snapshot is newer (raft will not replay
// below it), the node must Restore that snapshot before starting raft.
func (f *FSM) AppliedIndex() uint64 { return f.appliedIdx.Load() }

// CommitLogOffset returns the CommitLog end after the last applied entry.
func (f *FSM) CommitLogOffset() store.PhysicalOffset {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clOffset
}

// Apply implements raft.FSM.
func (f *FSM) Apply(l *raft.Log) any {
	waitErr := f.waitDurable(l.Index)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopOnLogError(waitErr)
	return f.applyLocked(l)
}

// ApplyBatch implements raft.BatchingFSM: one lock for the batch, results in order.
func (f *FSM) ApplyBatch(ls []*raft.Log) []any {
	var waitErr error
	if len(ls) > 0 {
		waitErr = f.waitDurable(ls[len(ls)-1].Index)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopOnLogError(waitErr)
	out := make([]any, len(ls))
	for i, l := range ls {
		out[i] = f.applyLocked(l)
	}
	return out
}

// waitDurable waits, without f.mu, until the raft log holds index on stable
// storage (Config.WaitLogDurable).
func (f *FSM) waitDurable(index uint64) error {
	if f.cfg.WaitLogDurable == nil {
		return nil
	}
	return f.cfg.WaitLogDurable(index, f.stopCh)
}

// stopOnLogError stops applying for good when the wait for durability failed.
// Caller holds f.mu.
func (f *FSM) stopOnLogError(err error) {
	if err == nil || f.stopped {
		return
	}
	select {
	case <-f.stopCh: // shutting down: nothing to report
	default:
		f.log.Error("raft log not durable here: applying nothing more until a restart", "applied_index", f.applied, "error", err)
	}
	f.stopped = true
	f.Stop()
}

func (f *FSM) applyLocked(l *raft.Log) any {
	if f.broken != nil {
		panic(fmt.Sprintf("fsm: raft index %d: a failed snapshot restore left the store inconsistent (%v); "+
			"refusing to apply on top of it — restart the node so it restores a snapshot again", l.Index, f.broken))
	}
	if l.Index <= f.applied {
		// Replay after a restart: the checkpoint already contains this entry.
		return nil
	}
	if f.stopped {
		return fmt.Errorf("raft index %d: %w", l.Index, ErrStopped)
	}
	var resp any
	if l.Type == raft.LogCommand {
		f.entryDone = false
		resp = f.applyCommand(l)
	}
	if f.stopped {
		// Not applied: the index stays, a restart replays it. An error, not a
		// result: callers read a *PutResult as one result per message.
		return fmt.Errorf("raft index %d: %w", l.Index, ErrStopped)
	}
	// LogConfiguration, LogNoop, LogBarrier carry no FSM state; they only move the index.
	f.applied, f.appliedTerm = l.Index, l.Term
	f.appliedIdx.Store(l.Index)
	return resp
}

// applyCommand decodes and applies one command. An undecodable or unknown command is
// corruption of the replicated log (or a node too old for it): it panics, because
// every way of continuing diverges — skipping it leaves this replica without a state
// change the others applied, and retrying cannot succeed.
func (f *FSM) applyCommand(l *raft.Log) any {
	cmd, err := DecodeCommand(l.Data)
	if err != nil {
		panic(fmt.Sprintf("fsm: raft index %d term %d: cannot decode command type %d (%s), %d bytes: %v; "+
			"stopping: skipping it would make this replica diverge (corrupt log, or a node older than the leader)",
			l.Index, l.Term, uint8(Type(l.Data)), Type(l.Data), len(l.Data), err))
	}
	if f.es != nil {
		defer f.applyEntryLeft(l.Index, cmd)
	}
	switch c := cmd.(type) {
	case *PutMessages:
		return f.applyPut(l.Index, c, nil, len(c.Messages))
	case *TopicUpsert:
		v, err := f.meta.upsertTopic(c.Topic)
		if p, ok := f.st.(QueuePreparer); ok && err == nil {
			p.PrepareQueues(c.Topic.Name, c.Topic.WriteQueueNums)
		}
		return &ConfigResult{DataVersion: v, Err: err}
	case *TopicDelete:
		v, err := f.meta.deleteTopic(c.Topic)
		return &ConfigResult{DataVersion: v, Err: err}
	case *SubscriptionGroupUpsert:
		v, err := f.meta.upsertGroup(c.Group)
		return &ConfigResult{DataVersion: v, Err: err}
	case *SubscriptionGroupDelete:
		v, err := f.meta.deleteGroup(c.Group, c.CleanOffsets)
		return &ConfigResult{DataVersion: v, Err: err}
	case *ConsumerOffsets:
		f.meta.setOffsets(c.Offsets)
		return &ConfigResult{DataVersion: f.meta.DataVersion()}
	case *OffsetReset:
		f.meta.setOffsets(c.Offsets)
		f.meta.setResets(c.At, c.Offsets)
		return &ConfigResult{DataVersion: f.meta.DataVersion()}
	case *ScheduleProgress:
		f.meta.setSchedule(c.Levels)
		return &ConfigResult{DataVersion: f.meta.DataVersion()}
	case *DeliverScheduled:
		return f.applyDeliverScheduled(l.Index, c)
	case *TransactionOps:
		return f.applyTransactionOps(l.Index, c)
	case *ACLSet:
		return &ConfigResult{DataVersion: f.meta.DataVersion(), Err: f.meta.setACL(c)}
	case *MemberUpsert:
		f.meta.upsertMember(c.Member)
		return &ConfigResult{DataVersion: f.meta.DataVersion()}
	case *PinSegmentSize:
		if err := f.meta.pin(c.SegmentSize); err != nil {
			return &ConfigResult{DataVersion: f.meta.DataVersion(), Err: err}
		}
		if f.cfg.SegmentSize != 0 && f.cfg.SegmentSize != c.SegmentSize {
			panic(fmt.Sprintf("fsm: raft index %d: group pinned CommitLog segment size %d, this node is configured with %d; "+
				"stopping: its CommitLog bytes would diverge (fix mappedFileSizeCommitLog)", l.Index, c.SegmentSize, f.cfg.SegmentSize))
		}
		return &ConfigResult{DataVersion: f.meta.DataVersion()}
	}
	panic(fmt.Sprintf("fsm: raft index %d: decoded command %T has no apply case (broken invariant)", l.Index, cmd))
}

// applyPut checks every message against the replicated metadata, patches STOREHOST,
// and appends the accepted ones in one store batch (one copy each into the CommitLog).
// With an EntryStore the messages are already in the CommitLog as the entry's
// records: c.Messages[i] is record recIdx[i] of nrec (recIdx nil: record i), and the
// accepted ones are handed to ApplyEntry instead.
func (f *FSM) applyPut(index uint64, c *PutMessages, recIdx []int, nrec int) *PutResult {
	res := &PutResult{Results: make([]MessageResult, len(c.Messages))}
	f.recs, f.slots, f.arena = f.recs[:0], f.slots[:0], f.arena[:0]
	segLimit := f.segmentLimit()
	f.meta.mu.RLock()
	for i, rec := range c.Messages {
		r := &res.Results[i]
		v, err := viewPutRecord(rec)
		if err != nil {
			r.Err = fmt.Errorf("%w: message %d: %w", store.ErrMessageIllegal, i, err)
			continue
		}
		queueID := v.QueueID()
		r.QueueID = queueID
		if segLimit > 0 && int64(len(rec)) > segLimit {
			r.Err = fmt.Errorf("%w: message %d has %d bytes, a segment holds %d", store.ErrMessageIllegal, i, len(rec), segLimit)
			continue
		}
		topic := v.Topic()
		tc, ok := f.meta.topics[string(topic)]
		if !ok {
			r.Err = fmt.Errorf("put topic=%s: %w", topic, ErrTopicNotFound)
			continue
		}
		if queueID >= tc.WriteQueueNums {
			r.Err = fmt.Errorf("put topic=%s queue=%d writeQueueNums=%d: %w", topic, queueID, tc.WriteQueueNums, ErrQueueIDInvalid)
			continue
		}
		if f.es != nil {
			// The record is in the log as the leader encoded it; nothing is patched.
			f.recs = append(f.recs, rec)
			f.slots = append(f.slots, i)
			continue
		}
		rec, err = f.withStoreHost(v, c.StoreHost)
		if err != nil {
			r.Err = fmt.Errorf("%w: message %d: %w", store.ErrMessageIllegal, i, err)
			continue
		}
		f.recs = append(f.recs, rec)
		f.slots = append(f.slots, i)
	}
	f.meta.mu.RUnlock()
	if f.es != nil {
		return f.applyPutEntry(index, c, res, recIdx, nrec)
	}
	if len(f.recs) == 0 {
		return res
	}
	before := f.st.MaxPhysicalOffset()
	out, err := f.appendWaitingForSpace(index, f.recs, c.StoreTimestamp)
	if errors.Is(err, ErrStopped) {
		f.stopped = true
		res.Err = err
		return res
	}
	if err != nil {
		if errors.Is(err, store.ErrMessageIllegal) && f.st.MaxPhysicalOffset() == before {
			// The store refused the batch before writing; every replica refuses it alike.
			for _, s := range f.slots {
				res.Results[s].Err = err
			}
			res.Err = err
			return res
		}
		// The CommitLog could not take a committed entry (an I/O error; a full disk
		// is waited out above). This replica cannot continue without diverging; stop,
		// and let a restart replay from the checkpoint once the disk is fixed.
		panic(fmt.Sprintf("fsm: raft index %d: command type %d (%s): CommitLog append of %d messages at %d failed: %v; "+
			"stopping: this replica cannot apply a committed entry", index, uint8(CmdPutMessages), CmdPutMessages, len(f.recs), before, err))
	}
	if len(out) != len(f.recs) {
		panic(fmt.Sprintf("fsm: raft index %d: store appended %d results for %d messages (broken store invariant)", index, len(out), len(f.recs)))
	}
	f.fillResults(c, res, out)
	f.clOffset = f.st.MaxPhysicalOffset()
	return res
}

// fillResults sets the results of the stored messages (f.recs, f.slots) from the
// store's out, one per record.
func (f *FSM) fillResults(c *PutMessages, res *PutResult, out []store.AppendResult) {
	// All msgIds of the entry are hex-encoded into one string and handed out as
	// substrings: one allocation per entry instead of three per message.
	f.ids = f.ids[:0]
	for j, ar := range out {
		host := c.StoreHost
		if !host.Addr().IsValid() {
			v, _ := store.ViewRecord(f.recs[j]) // already validated
			host = v.StoreHost()
		}
		f.ids = store.AppendOffsetMsgID(f.ids, host, ar.PhysicalOffset)
		f.idEnds = append(f.idEnds[:j], len(f.ids))
	}
	ids := string(f.ids)
	start := 0
	for j, ar := range out {
		r := &res.Results[f.slots[j]]
		r.AppendResult = ar
		r.OffsetMsgID = ids[start:f.idEnds[j]]
		start = f.idEnds[j]
	}
}

func (f *FSM) segmentLimit() int64 {
	size := f.cfg.SegmentSize
	if p := f.meta.PinnedSegmentSize(); p != 0 {
		size = p
	}
	if size == 0 {
		return 0
	}
	return size - store.MinBlankRecord
}

// viewPutRecord views one record of a PutMessages command and checks what Apply takes
// beyond the layout: the v1 layout (the leader encodes with store.AppendMessage) and a
// queue id that can name a queue.
func viewPutRecord(rec []byte) (store.RecordView, error) {
	v, err := store.ViewRecord(rec)
	if err != nil {
		return v, err
	}
	if magic := v.Magic(); magic != store.MagicV1 {
		return v, fmt.Errorf("magic %#x is not v1", uint32(magic))
	}
	if q := v.QueueID(); q < 0 {
		return v, fmt.Errorf("queue id %d", q)
	}
	return v, nil
}

// withStoreHost returns the viewed record with STOREHOST set to host. The leader
// normally encodes its own host already, so the common case returns the record
// untouched; otherwise it is copied into the arena (never patched in place: it aliases
// the raft log entry, which the leader may still be sending to followers). A zero host
// leaves the record as encoded.
func (f *FSM) withStoreHost(v store.RecordView, host netip.AddrPort) ([]byte, error) {
	rec := v.Bytes()
	if !host.Addr().IsValid() || v.StoreHostIs(host) {
		return rec, nil
	}
	start := len(f.arena)
	if arena, ok := v.AppendWithStoreHost(f.arena, host); ok {
		f.arena = arena
		return f.arena[start:len(f.arena):len(f.arena)], nil
	}
	// Width change (IPv4 record, IPv6 host or back): re-encode; rare.
	m, err := store.DecodeMessage(rec, false)
	if err != nil {
		return nil, err
	}
	m.StoreHost = host
	f.arena, err = store.AppendMessage(f.arena, &m)
	if err != nil {
		return nil, err
	}
	return f.arena[start:len(f.arena):len(f.arena)], nil
}
