package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"
	"unsafe"
)

// GetStatus is the outcome of GetMessages (Java GetMessageStatus).
type GetStatus int

const (
	Found GetStatus = iota
	NoMatchedMessage
	OffsetTooSmall
	OffsetOverflowOne
	OffsetOverflowBadly
	NoMessageInQueue
	OffsetFoundNull
	MessageWasRemoving
)

func (s GetStatus) String() string {
	switch s {
	case Found:
		return "FOUND"
	case NoMatchedMessage:
		return "NO_MATCHED_MESSAGE"
	case OffsetTooSmall:
		return "OFFSET_TOO_SMALL"
	case OffsetOverflowOne:
		return "OFFSET_OVERFLOW_ONE"
	case OffsetOverflowBadly:
		return "OFFSET_OVERFLOW_BADLY"
	case NoMessageInQueue:
		return "NO_MESSAGE_IN_QUEUE"
	case OffsetFoundNull:
		return "OFFSET_FOUND_NULL"
	case MessageWasRemoving:
		return "MESSAGE_WAS_REMOVING"
	}
	return fmt.Sprintf("GetStatus(%d)", int(s))
}

// MessageFilter decides whether a message is returned. tagsCode is the ConsumeQueue
// tag hash (a match may be a hash collision: compare the TAGS property when it
// matters); props loads the message's encoded properties from the CommitLog only when
// called. nil accepts everything.
type MessageFilter func(tagsCode int64, props func() string) bool

// maxScanEntries bounds the ConsumeQueue entries one filtered read walks: Java's
// maxFilterMessageCount is 16,000 bytes of ConsumeQueue, i.e. 800 entries (or maxMsgs
// if larger), so a selective filter cannot turn a pull into a full queue scan.
const maxScanEntries = 16000 / cqEntrySize

// GetResult is the answer of GetMessages. Messages alias the mapped CommitLog (no
// copy) and stay valid until Release.
type GetResult struct {
	Status          GetStatus
	NextBeginOffset QueueOffset
	MinOffset       QueueOffset
	MaxOffset       QueueOffset
	// Messages are the stored bytes of each message, in queue order.
	Messages [][]byte
	// QueueOffsets[i] is the queue offset of Messages[i].
	QueueOffsets []QueueOffset
	// TotalBytes is the sum of the message sizes (the PULL body length).
	TotalBytes int

	releases []func()
}

// Release drops the references on the mapped CommitLog; Messages must not be used after.
func (r *GetResult) Release() {
	for _, rel := range r.releases {
		rel()
	}
	r.releases = r.releases[:0]
	r.Messages = nil
}

// propsLoader lets a filter load a message's properties on demand; one per call so
// that the filter callback costs no allocation per entry.
type propsLoader struct {
	src     recordSource
	e       cqEntry
	b       []byte
	release func()
	err     error
	loaded  bool
}

func (p *propsLoader) reset(e cqEntry) {
	p.e, p.b, p.release, p.err, p.loaded = e, nil, nil, nil, false
}

func (p *propsLoader) load() ([]byte, func(), error) {
	if !p.loaded {
		p.loaded = true
		p.b, p.release, p.err = p.src.bytesAt(p.e.phys, p.e.size)
	}
	return p.b, p.release, p.err
}

// drop releases bytes loaded for a message that was not taken.
func (p *propsLoader) drop() {
	if p.loaded && p.err == nil && p.release != nil {
		p.release()
	}
	p.loaded = false
}

func (p *propsLoader) props() string {
	b, _, err := p.load()
	if err != nil {
		return ""
	}
	v, err := viewDispatched(b)
	if err != nil {
		return ""
	}
	return string(v.propsBytes())
}

// GetMessages reads up to maxMsgs messages (and about maxBytes: the first message is
// always taken) of (topic, queueID) from offset, with RocketMQ's statuses and next
// offsets (Java DefaultMessageStore.getMessage). A read never crosses a ConsumeQueue
// file; NextBeginOffset tells where to continue.
func (s *Store) GetMessages(topic string, queueID int32, offset QueueOffset, maxMsgs int, maxBytes int, filter MessageFilter) (*GetResult, error) {
	r := &GetResult{}
	q := s.cq.get(topic, queueID)
	if q == nil {
		r.Status = NoMessageInQueue
		return r, nil
	}
	minO, maxO := q.min(), q.maxOffset()
	r.MinOffset, r.MaxOffset = minO, maxO
	switch {
	case maxO == 0:
		r.Status = NoMessageInQueue
		return r, nil
	case offset < minO:
		r.Status, r.NextBeginOffset = OffsetTooSmall, minO
		return r, nil
	case offset == maxO:
		r.Status, r.NextBeginOffset = OffsetOverflowOne, offset
		return r, nil
	case offset > maxO:
		r.Status, r.NextBeginOffset = OffsetOverflowBadly, maxO
		return r, nil
	}
	maxMsgs = max(maxMsgs, 1)
	run, f := q.fileRun(offset, max(maxScanEntries, maxMsgs))
	if run == nil {
		// The entry is gone (file deleted between the bound check and now): continue
		// at the start of the next ConsumeQueue file, as Java's rollNextFile.
		perFile := q.files.fileSize / cqEntrySize
		r.Status, r.NextBeginOffset = OffsetFoundNull, QueueOffset((int64(offset)/perFile+1)*perFile)
		return r, nil
	}
	defer f.release()
	src := s.dispatcher.src
	pl := &propsLoader{src: src}
	propsFn := pl.props
	r.Status = NoMatchedMessage
	n := len(run) / cqEntrySize
	want := min(maxMsgs, n)
	r.Messages = make([][]byte, 0, want)
	r.QueueOffsets = make([]QueueOffset, 0, want)
	r.releases = make([]func(), 0, want)
	i := 0
	for ; i < n; i++ {
		e := readCQEntry(run[i*cqEntrySize:])
		if e.size <= 0 || e.isPreBlank() {
			if e.size <= 0 {
				break // being truncated
			}
			continue
		}
		if len(r.Messages) > 0 && (len(r.Messages) >= maxMsgs || r.TotalBytes+int(e.size) > maxBytes) {
			break
		}
		pl.reset(e)
		if filter != nil && !filter(e.tagsCode, propsFn) {
			pl.drop()
			continue
		}
		b, release, err := pl.load()
		if err != nil {
			if len(r.Messages) == 0 {
				r.Status = MessageWasRemoving
			}
			continue
		}
		r.Messages = append(r.Messages, b)
		r.QueueOffsets = append(r.QueueOffsets, offset+QueueOffset(i))
		r.releases = append(r.releases, release)
		r.TotalBytes += len(b)
		r.Status = Found
	}
	r.NextBeginOffset = offset + QueueOffset(i)
	return r, nil
}

// MinQueueOffset is the first readable offset of the queue (0 if it does not exist).
func (s *Store) MinQueueOffset(topic string, queueID int32) QueueOffset {
	if q := s.cq.get(topic, queueID); q != nil {
		return q.min()
	}
	return 0
}

// MaxQueueOffset is the next offset to be written (0 if the queue does not exist).
func (s *Store) MaxQueueOffset(topic string, queueID int32) QueueOffset {
	if q := s.cq.get(topic, queueID); q != nil {
		return q.maxOffset()
	}
	return 0
}

// SearchOffsetByTimestamp returns the first offset whose message was stored at or
// after ts (RocketMQ's LOWER boundary); the max offset if every message is older; 0
// for an empty or absent queue. It binary-searches the store timestamps of the
// messages the entries point to.
func (s *Store) SearchOffsetByTimestamp(topic string, queueID int32, ts int64) QueueOffset {
	q := s.cq.get(topic, queueID)
	if q == nil {
		return 0
	}
	minO, maxO := q.min(), q.maxOffset()
	if maxO == 0 || minO >= maxO {
		return maxO
	}
	n := sort.Search(int(maxO-minO), func(i int) bool {
		e, ok := q.entry(minO + QueueOffset(i))
		if !ok {
			return false
		}
		t, ok := s.dispatcher.storeTimestampAt(e.phys)
		return ok && t >= ts
	})
	return minO + QueueOffset(n)
}

// QueryByKey returns the physical offsets (newest first, at most maxNum) of messages of
// topic indexed under key (a KEYS entry or the UNIQ_KEY) stored in [begin, end] ms.
// Offsets are hash matches: callers re-check the key on the message, as Java's
// client does.
func (s *Store) QueryByKey(topic, key string, maxNum int, begin, end int64) ([]PhysicalOffset, error) {
	offs := s.index.query(topic, key, maxNum, begin, end)
	minPhys := s.dispatcher.src.minOffset()
	kept := offs[:0]
	for _, o := range offs {
		if o >= minPhys {
			kept = append(kept, o)
		}
	}
	return kept, nil
}

// ErrNoMessage reports a read by physical offset of a record that is not a message a
// client may see: blank padding, a dead record (one Apply refused: it has no
// ConsumeQueue entry, decision 0016), or one not dispatched within
// readDispatchWait. It wraps ErrOffsetOutOfRange, which callers (and the response
// code table) already treat as "no message there".
var ErrNoMessage = fmt.Errorf("%w: no message", ErrOffsetOutOfRange)

// readDispatchWait bounds how long ReadMessageAt waits for the reput to reach a
// record. The reput is asynchronous, so a read right after a send (VIEW_MESSAGE by
// the offset msgId just returned, END_TRANSACTION of a fresh half message) can find
// its record not yet dispatched; the reput is normally well under a millisecond
// behind. A var so that tests can shorten it.
var readDispatchWait = time.Second

// ReadMessageAt returns the stored message at off (VIEW_MESSAGE_BY_ID, query by key,
// send-back, END_TRANSACTION's half message), with QUEUEOFFSET taken from the
// message's ConsumeQueue entry. When the record already holds that value (every
// record of the old layout) the bytes alias the mapping until release is called;
// otherwise they are a patched copy and release is a no-op.
//
// A record the reput has not reached yet is waited for (readDispatchWait at most):
// only then is its ConsumeQueue entry there to say whether it is a message. A record
// below the dispatched offset with no entry is dead and answers ErrNoMessage, as does
// a blank record or one still undispatched after the wait.
func (s *Store) ReadMessageAt(off PhysicalOffset) ([]byte, func(), error) {
	src := s.dispatcher.src
	if off < src.minOffset() || off >= src.maxOffset() {
		return nil, nil, fmt.Errorf("%w: read message at %d, stored [%d, %d)", ErrOffsetOutOfRange, off, src.minOffset(), src.maxOffset())
	}
	if err := s.awaitDispatch(off); err != nil {
		return nil, nil, err
	}
	rec, _, release, err := src.recordAt(off)
	if err != nil {
		return nil, nil, fmt.Errorf("read message at %d: %w", off, err)
	}
	if _, magic, _ := RecordSize(rec); magic != MagicV1 && magic != MagicV2 {
		release()
		return nil, nil, fmt.Errorf("%w at %d (magic %#x)", ErrNoMessage, off, uint32(magic))
	}
	v, err := viewDispatched(rec)
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("read message at %d: %w", off, err)
	}
	// The topic aliases the mapping only for the lookup, which keeps no reference.
	topicB := v.Topic()
	qo, ok := s.QueueOffsetOf(unsafe.String(unsafe.SliceData(topicB), len(topicB)), v.QueueID(), off)
	if !ok {
		release()
		return nil, nil, fmt.Errorf("%w at %d: record of %s queue %d is in no ConsumeQueue", ErrNoMessage, off, v.Topic(), v.QueueID())
	}
	out, copied := withQueueOffset(rec, qo)
	if copied {
		release()
		return out, func() {}, nil
	}
	return rec, release, nil
}

// awaitDispatch waits until the reput has passed off (dispatched offsets are record
// boundaries, so the record at off is then dispatched), at most readDispatchWait.
func (s *Store) awaitDispatch(off PhysicalOffset) error {
	d := s.dispatcher
	if d.dispatched() > off {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), readDispatchWait)
	defer cancel()
	if err := d.waitDispatched(ctx, off+1); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w at %d: not dispatched within %s: %w", ErrNoMessage, off, readDispatchWait, err)
		}
		return fmt.Errorf("read message at %d: %w", off, err)
	}
	return nil
}

// EarliestMessageTime is the STORETIMESTAMP of the oldest message kept, false
// when there is none (Apache's getEarliestMessageTime). Raft's entry records
// (decision 0016) and blank padding are passed over; the walk stops at the
// dispatched offset, so nothing uncommitted is read. It needs no ConsumeQueue
// lookup and does not wait for the reput, unlike ReadMessageAt.
func (s *Store) EarliestMessageTime() (int64, bool) {
	src := s.dispatcher.src
	end := s.dispatcher.dispatched()
	for off, n := src.minOffset(), 0; off < end && n < maxEarliestWalk; n++ {
		rec, next, release, err := src.recordAt(off)
		if err != nil {
			return 0, false
		}
		if _, magic, _ := RecordSize(rec); magic != MagicBlank {
			if v, err := viewDispatched(rec); err == nil && string(v.Topic()) != RaftEntryTopic {
				ts := v.storeTimestamp()
				release()
				return ts, true
			}
		}
		release()
		off = next
	}
	return 0, false
}

// maxEarliestWalk bounds EarliestMessageTime's walk: the first message follows at
// most a few entry records (configuration, leader no-ops), or a segment's padding.
const maxEarliestWalk = 4096

// SetNotifier installs the function told about new messages per queue after each
// dispatch round (long polling). nil removes it.
func (s *Store) SetNotifier(n Notifier) { s.dispatcher.setNotifier(n) }

// WaitDispatched blocks until every message below off is readable through the
// ConsumeQueues and index, or ctx is done.
func (s *Store) WaitDispatched(ctx context.Context, off PhysicalOffset) error {
	return s.dispatcher.waitDispatched(ctx, off)
}

// Topics lists the queues that hold files, ordered by topic and queue id: not
// those PrepareQueues made ahead of their first message, nor those cut empty.
func (s *Store) Topics() []TopicQueue {
	qs := s.cq.all()
	out := make([]TopicQueue, 0, len(qs))
	for _, q := range qs {
		if q.files.last() != nil {
			out = append(out, TopicQueue{q.topic, q.queueID})
		}
	}
	return out
}

// PrepareQueues creates, in the background, the first ConsumeQueue file of each
// of the queues 0 … queues-1 of topic that has none, so that a new topic's
// first messages do not wait for them on the dispatch path (cqspare.go). It
// does not block; a queue it does not get to in time is created as before.
func (s *Store) PrepareQueues(topic string, queues int32) {
	if s.closed.Load() || queues <= 0 {
		return
	}
	s.cq.prepare(topic, min(queues, maxPreparedQueues))
}

// maxPreparedQueues bounds the queues PrepareQueues makes ahead per call
// (RocketMQ's topics have at most a few hundred; more are made on first use).
const maxPreparedQueues = 1024

// DispatchedPhysicalOffset is how far reput has indexed the CommitLog; the gap to
// MaxPhysicalOffset is the dispatch lag (messages applied but not yet pullable).
func (s *Store) DispatchedPhysicalOffset() PhysicalOffset { return s.dispatcher.dispatched() }
