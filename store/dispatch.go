package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"
)

// maxRoundBytes bounds one background dispatch round so that waiters and long polls
// are woken while a large backlog (catch-up after a snapshot) is worked off.
const maxRoundBytes = 16 << 20

// dispatcher is RocketMQ's ReputMessageService: it reads the CommitLog from the
// dispatched offset up to the confirmed offset (advanced by the owner after every
// append, i.e. the FSM's applied offset), writes ConsumeQueue and IndexFile entries and
// notifies long polls per queue.
//
// Concurrency: mu serialises dispatch rounds, recover, truncate and deleteBelow; the
// background goroutine is woken through wake (capacity 1, so wake-ups coalesce).
// dispatched advances after a round's entries are in place, so readers that wait for it
// find them.
type dispatcher struct {
	src recordSource
	cq  *consumeQueues
	idx *indexService
	log hclog.Logger

	mu sync.Mutex
	// Invariant: every message below dispatchedOff has its ConsumeQueue and index
	// entries; nothing at or beyond it has.
	dispatchedOff atomic.Int64
	confirmed     atomic.Int64
	// err is the first dispatch failure (corruption or a broken queue invariant);
	// dispatch stops there and waiters get it.
	err atomic.Pointer[error]

	// round numbers dispatch rounds; touched lists the queues a round wrote, once each.
	round   uint64
	touched []*consumeQueue
	// woken is liveRound's copy of touched, notified outside mu.
	woken []*consumeQueue
	// topics caches queues by topic and id so that the hot path does not build keys.
	topics map[string][]*consumeQueue

	notifier atomic.Pointer[Notifier]

	// dead is set on an entry-log store (entrymode.go): records carry no queue
	// offset, so dispatch assigns each queue's next one, passing over entry records
	// and the dead records Apply named.
	dead *deadRecords

	waitMu   sync.Mutex
	advanced chan struct{} // closed and replaced whenever dispatchedOff moves

	wake     chan struct{}
	stopCh   chan struct{}
	done     chan struct{}
	startOne sync.Once
	stopOne  sync.Once
	running  atomic.Bool
}

func newDispatcher(src recordSource, cq *consumeQueues, idx *indexService, log hclog.Logger) *dispatcher {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &dispatcher{
		src: src, cq: cq, idx: idx, log: log.Named("reput"),
		topics:   make(map[string][]*consumeQueue),
		advanced: make(chan struct{}),
		wake:     make(chan struct{}, 1),
		stopCh:   make(chan struct{}),
		done:     make(chan struct{}),
	}
}

func (d *dispatcher) setNotifier(n Notifier) {
	if n == nil {
		d.notifier.Store(nil)
		return
	}
	d.notifier.Store(&n)
}

func (d *dispatcher) dispatched() PhysicalOffset { return PhysicalOffset(d.dispatchedOff.Load()) }

// setConfirmed lets the background goroutine dispatch up to off.
func (d *dispatcher) setConfirmed(off PhysicalOffset) {
	d.confirmed.Store(int64(off))
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// start runs the background reput goroutine until stop.
func (d *dispatcher) start() {
	d.startOne.Do(func() {
		d.running.Store(true)
		go d.loop()
	})
}

// stop ends the background goroutine and waits for it.
func (d *dispatcher) stop() {
	d.stopOne.Do(func() { close(d.stopCh) })
	if d.running.Load() {
		<-d.done
	}
}

func (d *dispatcher) loop() {
	defer close(d.done)
	for {
		select {
		case <-d.stopCh:
			return
		case <-d.wake:
		}
		for d.err.Load() == nil {
			more, err := d.liveRound()
			if !more {
				break
			}
			if err != nil && errors.Is(err, syscall.ENOSPC) {
				// A full disk is not corruption: wait for space (retention, the
				// operator) and go on from where dispatch stopped.
				d.log.Error("dispatch waiting for disk space", "offset", d.dispatched(), "error", err)
				select {
				case <-d.stopCh:
					return
				case <-time.After(time.Second):
				}
				continue
			}
			if err != nil {
				d.log.Error("dispatch stopped", "offset", d.dispatched(), "error", err)
				d.err.Store(&err)
				d.broadcast()
			}
			select {
			case <-d.stopCh:
				return
			default:
			}
		}
	}
}

// liveRound dispatches up to maxRoundBytes towards the confirmed offset, then
// notifies the queues it wrote once it has let go of mu: a notifier may serve
// the long polls it wakes on this goroutine (the broker's does), reading the
// store meanwhile. It reports false when there was nothing to dispatch. One
// goroutine at a time runs it (loop; tests without a loop): it owns d.woken.
func (d *dispatcher) liveRound() (bool, error) {
	d.mu.Lock()
	limit := PhysicalOffset(d.confirmed.Load())
	from := d.dispatched()
	if from >= limit {
		d.mu.Unlock()
		return false, nil
	}
	err := d.dispatchTo(min(limit, from+maxRoundBytes), dispatchLive)
	d.woken = append(d.woken[:0], d.touched...)
	d.mu.Unlock()
	d.notify(d.woken)
	return true, err
}

// broadcast wakes every waitDispatched.
func (d *dispatcher) broadcast() {
	d.waitMu.Lock()
	close(d.advanced)
	d.advanced = make(chan struct{})
	d.waitMu.Unlock()
}

// waitDispatched blocks until everything below off is dispatched, dispatch failed, or
// ctx is done.
func (d *dispatcher) waitDispatched(ctx context.Context, off PhysicalOffset) error {
	for {
		d.waitMu.Lock()
		ch := d.advanced
		d.waitMu.Unlock()
		if d.dispatched() >= off {
			return nil
		}
		if e := d.err.Load(); e != nil {
			return *e
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("wait dispatched offset=%d (at %d): %w", off, d.dispatched(), ctx.Err())
		}
	}
}

// setDispatched publishes a new dispatched offset.
func (d *dispatcher) setDispatched(off PhysicalOffset) {
	d.dispatchedOff.Store(int64(off))
	d.cq.dispatchedHint.Store(int64(off))
	d.idx.setHint(off)
	d.broadcast()
}

// dispatchTo dispatches every record from the dispatched offset up to limit (a record
// boundary) and lists the queues written, once each, in d.touched: the caller
// notifies them (notify). With dispatchVerify (recovery) ConsumeQueue entries that
// already exist are checked instead of written. Caller holds mu.
func (d *dispatcher) dispatchTo(limit PhysicalOffset, mode dispatchMode) error {
	off := d.dispatched()
	d.round++
	d.touched = d.touched[:0]
	idxEnd := d.idx.lastEnd()
	var err error
	for off < limit {
		var next PhysicalOffset
		if next, err = d.dispatchOne(off, idxEnd, mode); err != nil {
			break
		}
		off = next
	}
	if off != d.dispatched() {
		d.setDispatched(off)
	}
	return err
}

// notify tells the notifier about each queue of qs.
func (d *dispatcher) notify(qs []*consumeQueue) {
	if n := d.notifier.Load(); n != nil {
		for _, q := range qs {
			(*n)(q.topic, q.queueID, q.maxOffset())
		}
	}
}

// dispatchMode is what dispatchOne does with a record.
type dispatchMode int

const (
	dispatchLive      dispatchMode = iota // write its ConsumeQueue entry and index it
	dispatchVerify                        // recovery: check the ConsumeQueue entry (rewrite it if it differs) and index it
	dispatchIndexOnly                     // recovery: index it only (reindex)
)

// dispatchOne dispatches the record at off and returns where the next one starts.
// Records at or below idxEnd are not indexed again.
func (d *dispatcher) dispatchOne(off, idxEnd PhysicalOffset, mode dispatchMode) (PhysicalOffset, error) {
	rec, next, release, err := d.src.recordAt(off)
	if err != nil {
		return off, fmt.Errorf("dispatch read offset=%d: %w", off, err)
	}
	defer release()
	_, magic, err := RecordSize(rec)
	if err != nil {
		return off, fmt.Errorf("dispatch offset=%d: %w", off, err)
	}
	if magic == MagicBlank {
		return next, nil
	}
	v, err := viewDispatched(rec)
	if err != nil {
		return off, fmt.Errorf("dispatch offset=%d: %w", off, err)
	}
	if phys := v.physicalOffset(); phys != off {
		return off, fmt.Errorf("%w: record at offset %d says physical offset %d", ErrCorrupt, off, phys)
	}
	topicB, propsB := v.Topic(), v.propsBytes()
	topic := unsafe.String(unsafe.SliceData(topicB), len(topicB))
	props := unsafe.String(unsafe.SliceData(propsB), len(propsB))
	tx := v.sysFlag() & SysFlagTxMask
	// Java gives prepared and rolled-back transaction records no queue offset and no
	// ConsumeQueue entry. Our append side assigns a queue offset to every record, so
	// every record gets its entry (skipping one would leave a gap); the broker stores
	// half messages with a cleared transaction type, as Java's TransactionalMessageBridge
	// does, so no prepared record reaches a consumer's queue.
	tag, _ := Property(props, PropertyTags)
	// TODO(delay): for SCHEDULE_TOPIC_XXXX Java stores the delivery time (from the
	// DELAY level) as the tags code; the delay feature must set it here.
	e := cqEntry{phys: off, size: int32(len(rec)), tagsCode: TagsCode(tag)}
	if d.dead != nil && (topic == RaftEntryTopic || d.dead.has(off)) {
		return next, nil
	}
	if mode != dispatchIndexOnly {
		q, err := d.queue(topic, v.QueueID())
		if err != nil {
			return off, err
		}
		qo := v.queueOffset()
		if d.dead != nil {
			qo = q.maxOffset()
		}
		if err := d.putCQ(q, qo, e, mode == dispatchVerify); err != nil {
			return off, err
		}
		if q.notifiedRound != d.round {
			q.notifiedRound = d.round
			d.touched = append(d.touched, q)
		}
	}
	// Java indexes no rolled-back record.
	if tx != SysFlagTxRollback && off > idxEnd {
		if err := d.index(topic, props, off, v.storeTimestamp()); err != nil {
			return off, fmt.Errorf("index offset=%d: %w", off, err)
		}
	}
	return next, nil
}

func (d *dispatcher) putCQ(q *consumeQueue, qo QueueOffset, e cqEntry, verify bool) error {
	if verify && qo < q.maxOffset() {
		if old, ok := q.entry(qo); ok && old == e {
			return nil
		}
		d.log.Warn("consumequeue entry differs from CommitLog, rewriting", "topic", q.topic, "queue", q.queueID, "queueOffset", qo, "phys", e.phys)
		if err := q.truncateQueueOffset(qo); err != nil {
			return err
		}
	}
	return q.put(qo, e)
}

// queue returns the ConsumeQueue of (topic, id) without allocating once it is cached;
// topic may alias mapped bytes, so it is copied before it is kept.
func (d *dispatcher) queue(topic string, id int32) (*consumeQueue, error) {
	byID := d.topics[topic]
	if int(id) < len(byID) && byID[id] != nil {
		return byID[id], nil
	}
	owned := strings.Clone(topic)
	q, err := d.cq.getOrCreate(owned, id)
	if err != nil {
		return nil, err
	}
	if int(id) >= len(byID) && id < 1<<16 {
		byID = append(byID, make([]*consumeQueue, int(id)+1-len(byID))...)
	}
	if int(id) < len(byID) {
		byID[id] = q
		d.topics[owned] = byID
	}
	return q, nil
}

// index adds "topic#UNIQ_KEY" and "topic#key" for every KEYS entry (space-separated),
// in Java's order.
func (d *dispatcher) index(topic, props string, off PhysicalOffset, storeTS int64) error {
	if uniq, ok := Property(props, PropertyUniqKey); ok && uniq != "" {
		if err := d.idx.putKey(topic, uniq, off, storeTS); err != nil {
			return err
		}
	}
	keys, _ := Property(props, PropertyKeys)
	for keys != "" {
		k := keys
		if i := strings.IndexByte(keys, ' '); i >= 0 {
			k, keys = keys[:i], keys[i+1:]
		} else {
			keys = ""
		}
		if k == "" {
			continue
		}
		if err := d.idx.putKey(topic, k, off, storeTS); err != nil {
			return err
		}
	}
	return nil
}

// viewDispatched is the parse the reput (and the read path's property loader) takes of
// a record: its structure (parseRecord) and a queue id that can name a ConsumeQueue,
// as the reput has always checked. It leaves out ViewRecord's topic rule, which every
// record here already passed on append or in the recovery scan.
func viewDispatched(r []byte) (RecordView, error) {
	v, err := parseRecord(r)
	if err != nil {
		return v, err
	}
	if q := v.QueueID(); q < 0 {
		return RecordView{}, corruptf("queue id %d", q)
	}
	return v, nil
}

// storeTimestampAt reads the store time of the message at off.
func (d *dispatcher) storeTimestampAt(off PhysicalOffset) (int64, bool) {
	rec, _, release, err := d.src.recordAt(off)
	if err != nil {
		return 0, false
	}
	defer release()
	v, err := viewDispatched(rec)
	if err != nil {
		return 0, false
	}
	return v.storeTimestamp(), true
}

// resumePoints is where recovery resumes the ConsumeQueues and the IndexFiles:
// each at its own checkpoint (the CommitLog's start without one), within
// [clMin, commitLogMax]. The IndexFiles' checkpoint moves only every
// IndexFlushInterval, so it is usually the older one; reindex brings them up to
// the ConsumeQueues' before dispatch resumes there (decision 0017).
func (d *dispatcher) resumePoints(commitLogMax PhysicalOffset) (clMin, cqFrom, idxFrom PhysicalOffset) {
	clMin = d.src.minOffset()
	cqFrom, idxFrom = clMin, clMin
	if cp, ok := d.cq.checkpoint(); ok {
		cqFrom = max(clMin, cp)
	}
	if cp, ok := d.idx.checkpoint(); ok {
		idxFrom = max(clMin, cp)
	}
	return clMin, min(cqFrom, commitLogMax), min(idxFrom, commitLogMax)
}

// recoverIndex cuts the IndexFiles back to their checkpoint, idxFrom (what a crash
// may have torn above it goes), and indexes the CommitLog again from there up to
// cqFrom, where dispatch resumes; dispatch indexes what lies beyond. Caller holds mu.
func (d *dispatcher) recoverIndex(idxFrom, cqFrom PhysicalOffset) error {
	if err := d.idx.recoverFiles(idxFrom, d.storeTimestampAt); err != nil {
		return fmt.Errorf("recover index: %w", err)
	}
	if err := d.reindex(idxFrom, cqFrom); err != nil {
		return fmt.Errorf("recover index: %w", err)
	}
	return nil
}

// reindex indexes the records in [from, to) that the IndexFiles do not hold yet,
// writing no ConsumeQueue entry: the index is derived from the CommitLog alone, so
// its entries above its checkpoint are rebuilt rather than flushed every second.
// Caller holds mu.
func (d *dispatcher) reindex(from, to PhysicalOffset) error {
	if from >= to {
		return nil
	}
	start := time.Now()
	idxEnd := d.idx.lastEnd()
	for off := from; off < to; {
		next, err := d.dispatchOne(off, idxEnd, dispatchIndexOnly)
		if err != nil {
			return fmt.Errorf("reindex from %d to %d: %w", from, to, err)
		}
		off = next
	}
	d.log.Info("reindexed CommitLog above the index checkpoint", "from", from, "to", to, "bytes", to-from, "took", time.Since(start))
	return nil
}

// recover makes the ConsumeQueues and IndexFiles match a CommitLog that ends at
// commitLogMax, then dispatches synchronously up to it. See doc.go "Dispatch recovery".
func (d *dispatcher) recover(commitLogMax PhysicalOffset) error {
	d.mu.Lock()
	err := d.recoverLocked(commitLogMax)
	woken := slices.Clone(d.touched)
	d.mu.Unlock()
	d.notify(woken)
	return err
}

func (d *dispatcher) recoverLocked(commitLogMax PhysicalOffset) error {
	clMin, resume, idxFrom := d.resumePoints(commitLogMax)
	for _, q := range d.cq.all() {
		if err := q.recoverEnd(commitLogMax); err != nil {
			return fmt.Errorf("recover consumequeue topic=%s queue=%d: %w", q.topic, q.queueID, err)
		}
	}
	if err := d.recoverIndex(idxFrom, resume); err != nil {
		return err
	}
	d.topics = make(map[string][]*consumeQueue)
	d.dispatchedOff.Store(int64(resume))
	err := d.dispatchTo(commitLogMax, dispatchVerify)
	if errors.Is(err, ErrQueueInvariant) && resume > clMin {
		// A queue lost entries below the checkpoint (files removed by hand): verify
		// every queue from the start of the CommitLog.
		d.log.Warn("consumequeue gap below checkpoint, re-dispatching from CommitLog start", "checkpoint", resume, "error", err)
		d.dispatchedOff.Store(int64(clMin))
		err = d.dispatchTo(commitLogMax, dispatchVerify)
	}
	if err != nil {
		return err
	}
	for _, q := range d.cq.all() {
		q.correctMin(clMin)
	}
	d.confirmed.Store(max(d.confirmed.Load(), int64(commitLogMax)))
	d.setDispatched(commitLogMax)
	d.err.Store(nil)
	return nil
}

// recoverCut is recover for an entry-log store, whose CommitLog tail holds raft
// entries not yet applied and records without queue offsets: nothing is dispatched.
// The ConsumeQueues and IndexFiles are cut back to their checkpoint, the last point
// known to be durable; the FSM then rewinds further to its apply checkpoint
// (Store.RewindDispatch), and raft's replay dispatches the rest.
func (d *dispatcher) recoverCut(commitLogMax PhysicalOffset) error {
	d.mu.Lock()
	clMin, resume, idxFrom := d.resumePoints(commitLogMax)
	var err error
	for _, q := range d.cq.all() {
		if err = q.recoverEnd(commitLogMax); err != nil {
			err = fmt.Errorf("recover consumequeue topic=%s queue=%d: %w", q.topic, q.queueID, err)
			break
		}
	}
	if err == nil {
		err = d.recoverIndex(idxFrom, resume)
	}
	d.topics = make(map[string][]*consumeQueue)
	d.dispatchedOff.Store(int64(resume))
	d.mu.Unlock()
	if err != nil {
		return err
	}
	if err := d.truncate(resume); err != nil {
		return err
	}
	for _, q := range d.cq.all() {
		q.correctMin(clMin)
	}
	d.confirmed.Store(int64(resume))
	d.setDispatched(resume)
	d.err.Store(nil)
	return nil
}

// truncate cuts ConsumeQueue and index entries at and beyond off. The checkpoints are
// lowered at once: after the cut, new records may start at offsets they name.
func (d *dispatcher) truncate(off PhysicalOffset) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, q := range d.cq.all() {
		if err := q.truncatePhys(off); err != nil {
			return fmt.Errorf("truncate consumequeue topic=%s queue=%d at %d: %w", q.topic, q.queueID, off, err)
		}
	}
	if err := d.idx.truncate(off, d.storeTimestampAt); err != nil {
		return fmt.Errorf("truncate index at %d: %w", off, err)
	}
	if cp, ok := d.cq.checkpoint(); ok && cp > off {
		if err := writeOffsetFile(filepath.Join(d.cq.dir, cqCheckpointName), off); err != nil {
			return err
		}
	}
	if cp, ok := d.idx.checkpoint(); ok && cp > off {
		if err := writeOffsetFile(filepath.Join(d.idx.dir, indexCheckpointName), off); err != nil {
			return err
		}
	}
	if PhysicalOffset(d.confirmed.Load()) > off {
		d.confirmed.Store(int64(off))
	}
	d.setDispatched(min(d.dispatched(), off))
	return nil
}

// deleteBelow applies retention after the CommitLog dropped everything below minPhys:
// ConsumeQueue files wholly below it go and min queue offsets advance; IndexFiles that
// end below it go too.
func (d *dispatcher) deleteBelow(minPhys PhysicalOffset) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, q := range d.cq.all() {
		if err := q.deleteBelow(minPhys); err != nil {
			return err
		}
	}
	return d.idx.deleteBelow(minPhys)
}
