package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// cqEntrySize is the size of one ConsumeQueue entry: physical offset int64, size
// int32, tags code int64 (RocketMQ's CQ_STORE_UNIT_SIZE).
const cqEntrySize = 20

// TopicQueue names one ConsumeQueue.
type TopicQueue struct {
	Topic   string
	QueueID int32
}

// cqEntry is one decoded ConsumeQueue entry.
type cqEntry struct {
	phys     PhysicalOffset
	size     int32
	tagsCode int64
}

// preBlankSize marks a filler entry (Java fillPreBlank): written in front of the first
// real entry when a queue starts at a non-zero offset (rebuilt after retention), so
// that recovery, which stops at the first empty entry, sees a contiguous run.
const preBlankSize = math.MaxInt32

func (e cqEntry) isPreBlank() bool { return e.phys == 0 && e.size == preBlankSize && e.tagsCode == 0 }

func putCQEntry(b []byte, e cqEntry) {
	binary.BigEndian.PutUint64(b[0:], uint64(e.phys))
	binary.BigEndian.PutUint32(b[8:], uint32(e.size))
	binary.BigEndian.PutUint64(b[12:], uint64(e.tagsCode))
}

func readCQEntry(b []byte) cqEntry {
	return cqEntry{
		phys:     PhysicalOffset(binary.BigEndian.Uint64(b[0:])),
		size:     int32(binary.BigEndian.Uint32(b[8:])),
		tagsCode: int64(binary.BigEndian.Uint64(b[12:])),
	}
}

// consumeQueue is one (topic, queueId) ConsumeQueue: a mappedFileQueue of 20-byte
// entries under <dir>/<topic>/<queueId>/, files named by their start BYTE offset in
// the queue (entry index × 20) as RocketMQ does.
//
// Concurrency: one writer (the dispatcher, which also runs truncate and retention);
// readers load entries below the atomically published write position.
type consumeQueue struct {
	topic   string
	queueID int32
	files   *mappedFileQueue

	// minOffset is the first readable entry. Invariant: files.minOffset()/20 <=
	// minOffset <= maxOffset(). It moves past entries whose messages retention removed.
	minOffset atomic.Int64

	// notifiedRound dedupes notifications within one dispatch round (dispatcher only).
	notifiedRound uint64

	// owner makes this queue's spares (cqspare.go).
	owner *consumeQueues
	// aheadAt is the position in a file at which put asks for the next one.
	aheadAt int64
	// createMu serializes creating this queue's files: the dispatcher's
	// nextFile against the background makeSpare.
	createMu sync.Mutex
	// spare is the queue's next file, made ahead and not yet one of files;
	// closed makes the queue refuse new spares. Both guarded by createMu.
	spare  *mappedFile
	closed bool
}

// consumeQueues is every ConsumeQueue of the store, created lazily on first dispatch.
type consumeQueues struct {
	dir            string
	entriesPerFile int
	log            hclog.Logger

	mu     sync.RWMutex
	queues map[TopicQueue]*consumeQueue

	// dispatchedHint is the dispatcher's progress; flush persists the value it had
	// before the files were synced as the point recovery may resume from.
	dispatchedHint atomic.Int64

	// spares creates queues' next files in the background (cqspare.go).
	spares spares
}

// cqCheckpointName holds the offset below which every ConsumeQueue entry is durable.
// The dot keeps it apart from topic directories (RocketMQ topics never contain one).
const cqCheckpointName = "dispatch.checkpoint"

// newConsumeQueues loads every ConsumeQueue found under dir. The write positions are
// the file sizes until the dispatcher's recover finds the real ends.
func newConsumeQueues(dir string, entriesPerFile int, log hclog.Logger) (*consumeQueues, error) {
	if entriesPerFile <= 0 {
		return nil, fmt.Errorf("store: consumequeue entries per file %d must be positive", entriesPerFile)
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	c := &consumeQueues{dir: dir, entriesPerFile: entriesPerFile, log: log, queues: make(map[TopicQueue]*consumeQueue)}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mkdir consumequeue: %w", err)
	}
	topics, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read consumequeue dir: %w", err)
	}
	for _, t := range topics {
		if !t.IsDir() {
			continue
		}
		qdirs, err := os.ReadDir(filepath.Join(dir, t.Name()))
		if err != nil {
			return nil, fmt.Errorf("read consumequeue topic=%s: %w", t.Name(), err)
		}
		for _, q := range qdirs {
			id, err := strconv.ParseInt(q.Name(), 10, 32)
			if err != nil || !q.IsDir() || id < 0 {
				continue
			}
			cq := c.newQueue(t.Name(), int32(id))
			if err := cq.files.load(); err != nil {
				c.close()
				return nil, fmt.Errorf("load consumequeue topic=%s queue=%d: %w", t.Name(), id, err)
			}
			cq.minOffset.Store(cq.files.minOffset() / cqEntrySize)
			c.queues[TopicQueue{t.Name(), int32(id)}] = cq
		}
	}
	return c, nil
}

func (c *consumeQueues) newQueue(topic string, queueID int32) *consumeQueue {
	qdir := filepath.Join(c.dir, topic, strconv.Itoa(int(queueID)))
	size := int64(c.entriesPerFile) * cqEntrySize
	return &consumeQueue{topic: topic, queueID: queueID, owner: c,
		files:   newMappedFileQueue(qdir, size, false),
		aheadAt: size * 3 / 4 / cqEntrySize * cqEntrySize}
}

// get returns the queue or nil.
func (c *consumeQueues) get(topic string, queueID int32) *consumeQueue {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.queues[TopicQueue{topic, queueID}]
}

// getOrCreate returns the queue, creating its (empty) directory on first use.
func (c *consumeQueues) getOrCreate(topic string, queueID int32) (*consumeQueue, error) {
	if q := c.get(topic, queueID); q != nil {
		return q, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := TopicQueue{topic, queueID}
	if q := c.queues[key]; q != nil {
		return q, nil
	}
	q := c.newQueue(topic, queueID)
	if err := os.MkdirAll(q.files.dir, 0o755); err != nil {
		return nil, fmt.Errorf("create consumequeue topic=%s queue=%d: %w", topic, queueID, err)
	}
	c.queues[key] = q
	return q, nil
}

// all returns the queues in a stable order (topic, queue id).
func (c *consumeQueues) all() []*consumeQueue {
	c.mu.RLock()
	qs := make([]*consumeQueue, 0, len(c.queues))
	for _, q := range c.queues {
		qs = append(qs, q)
	}
	c.mu.RUnlock()
	sort.Slice(qs, func(i, j int) bool {
		if qs[i].topic != qs[j].topic {
			return qs[i].topic < qs[j].topic
		}
		return qs[i].queueID < qs[j].queueID
	})
	return qs
}

// maxOffsets returns the next queue offset of every queue (the append side's table).
func (c *consumeQueues) maxOffsets() map[TopicQueue]QueueOffset {
	c.mu.RLock()
	defer c.mu.RUnlock()
	m := make(map[TopicQueue]QueueOffset, len(c.queues))
	for k, q := range c.queues {
		m[k] = q.maxOffset()
	}
	return m
}

// flush syncs every queue and then records the dispatch progress they cover.
func (c *consumeQueues) flush() error {
	hint := c.dispatchedHint.Load()
	for _, q := range c.all() {
		if _, err := q.files.flush(); err != nil {
			return fmt.Errorf("flush consumequeue topic=%s queue=%d: %w", q.topic, q.queueID, err)
		}
	}
	return writeOffsetFile(filepath.Join(c.dir, cqCheckpointName), PhysicalOffset(hint))
}

func (c *consumeQueues) checkpoint() (PhysicalOffset, bool) {
	return readOffsetFile(filepath.Join(c.dir, cqCheckpointName))
}

// close stops making spares, removes them and unmaps every queue.
func (c *consumeQueues) close() {
	c.stopSpares()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, q := range c.queues {
		q.dropSpare()
		q.files.close()
	}
	c.queues = make(map[TopicQueue]*consumeQueue)
}

// maxOffset is the next queue offset to be written.
func (q *consumeQueue) maxOffset() QueueOffset {
	return QueueOffset(q.files.maxOffset() / cqEntrySize)
}

func (q *consumeQueue) min() QueueOffset { return QueueOffset(q.minOffset.Load()) }

// entry returns the entry at qo, or false if it is outside [files' min, max).
func (q *consumeQueue) entry(qo QueueOffset) (cqEntry, bool) {
	pos := int64(qo) * cqEntrySize
	f := q.files.find(pos)
	if f == nil || pos-f.start+cqEntrySize > f.wrotePosition.Load() {
		return cqEntry{}, false
	}
	rel := pos - f.start
	return readCQEntry(f.data[rel : rel+cqEntrySize]), true
}

// fileRun returns the entries from qo to the end of the file holding it (at most
// limit), aliasing the mapping, with a reference held; release with f.release().
// RocketMQ's getIndexBuffer: a read never spans two ConsumeQueue files.
func (q *consumeQueue) fileRun(qo QueueOffset, limit int) ([]byte, *mappedFile) {
	pos := int64(qo) * cqEntrySize
	f := q.files.find(pos)
	if f == nil || !f.acquire() {
		return nil, nil
	}
	rel := pos - f.start
	end := f.wrotePosition.Load()
	end -= end % cqEntrySize
	if rel >= end {
		f.release()
		return nil, nil
	}
	end = min(end, rel+int64(limit)*cqEntrySize)
	return f.data[rel:end:end], f
}

// ErrQueueInvariant reports a ConsumeQueue write that would leave a gap or overwrite
// an entry: dispatch and the append side disagree about queue offsets.
var ErrQueueInvariant = errors.New("store: consumequeue invariant broken")

// put writes e at qo, which must be the queue's max offset. An empty queue may start
// at any offset (rebuilt after retention): the space before it is pre-blank filled.
func (q *consumeQueue) put(qo QueueOffset, e cqEntry) error {
	maxQO := q.maxOffset()
	pos := int64(qo) * cqEntrySize
	fileSize := q.files.fileSize
	if maxQO == 0 && q.files.last() == nil && qo > 0 {
		if err := q.startAt(qo); err != nil {
			return err
		}
		maxQO = qo
	}
	if qo != maxQO {
		return fmt.Errorf("%w: topic=%s queue=%d put at queue offset %d, next is %d", ErrQueueInvariant, q.topic, q.queueID, qo, maxQO)
	}
	f := q.files.last()
	if f == nil || f.remaining() < cqEntrySize {
		var err error
		if f, err = q.nextFile(pos / fileSize * fileSize); err != nil {
			return fmt.Errorf("consumequeue topic=%s queue=%d: %w", q.topic, q.queueID, err)
		}
	}
	var buf [cqEntrySize]byte
	putCQEntry(buf[:], e)
	f.appendBytes(buf[:])
	if rel := pos - f.start; rel < q.aheadAt && rel+cqEntrySize >= q.aheadAt {
		q.owner.askSpare(spareRequest{q: q, start: f.end()})
	}
	return nil
}

// startAt makes an empty queue begin at qo: the file holding qo is created and the
// entries before qo are pre-blank, as a first entry past 0 needs
// (put; a restored entry-log queue, entrymode.go).
func (q *consumeQueue) startAt(qo QueueOffset) error {
	if qo == 0 || q.files.last() != nil {
		return nil
	}
	pos := int64(qo) * cqEntrySize
	fileStart := pos / q.files.fileSize * q.files.fileSize
	f, err := q.nextFile(fileStart)
	if err != nil {
		return fmt.Errorf("consumequeue topic=%s queue=%d: %w", q.topic, q.queueID, err)
	}
	var blank [cqEntrySize]byte
	putCQEntry(blank[:], cqEntry{size: preBlankSize})
	for p := fileStart; p < pos; p += cqEntrySize {
		f.appendBytes(blank[:])
	}
	q.minOffset.Store(int64(qo))
	return nil
}

// truncateQueueOffset cuts every entry at and after qo.
func (q *consumeQueue) truncateQueueOffset(qo QueueOffset) error {
	if err := q.files.truncate(int64(qo) * cqEntrySize); err != nil {
		return err
	}
	if q.min() > qo {
		q.minOffset.Store(int64(qo))
	}
	return nil
}

// searchPhys returns the first queue offset in [lo, hi) whose entry's physical offset
// is >= off (hi if none). Physical offsets grow with queue offsets, pre-blank entries
// (phys 0) included.
func (q *consumeQueue) searchPhys(lo, hi QueueOffset, off PhysicalOffset) QueueOffset {
	n := sort.Search(int(hi-lo), func(i int) bool {
		e, ok := q.entry(lo + QueueOffset(i))
		return !ok || (!e.isPreBlank() && e.phys >= off)
	})
	return lo + QueueOffset(n)
}

// truncatePhys cuts every entry that points at or beyond off.
func (q *consumeQueue) truncatePhys(off PhysicalOffset) error {
	lo := QueueOffset(q.files.minOffset() / cqEntrySize)
	return q.truncateQueueOffset(q.searchPhys(lo, q.maxOffset(), off))
}

// recoverEnd finds the valid end of the queue: the first all-zero entry, or an entry
// whose message does not lie wholly below clMax, ends it; everything after is cut.
// Only the last files are scanned: earlier files are full and were valid when the
// next one was created.
func (q *consumeQueue) recoverEnd(clMax PhysicalOffset) error {
	files := q.files.snapshot()
	if len(files) == 0 {
		return nil
	}
	startIdx := max(0, len(files)-3)
	end := files[startIdx].start
scan:
	for _, f := range files[startIdx:] {
		for rel := int64(0); rel+cqEntrySize <= f.size; rel += cqEntrySize {
			e := readCQEntry(f.data[rel : rel+cqEntrySize])
			valid := e.isPreBlank() || (e.phys >= 0 && e.size > 0 && e.phys+PhysicalOffset(e.size) <= clMax)
			if !valid {
				break scan
			}
			end = f.start + rel + cqEntrySize
		}
	}
	// files.truncate zeroes from end to the write position, which load set to the
	// file size, so torn bytes after the end are cleared too.
	if err := q.truncateQueueOffset(QueueOffset(end / cqEntrySize)); err != nil {
		return err
	}
	// The last file is written on. Reserve its blocks again: if it was a spare
	// taken after the last sync, a crash may have lost its fallocate (cqspare.go).
	// A file already allocated costs an extent lookup.
	if last := q.files.last(); last != nil {
		if err := allocate(last.file, last.size); err != nil {
			q.owner.log.Warn("reserving the blocks of the consumequeue file being written", "topic", q.topic, "queue", q.queueID, "file", fileName(last.start), "error", err)
		}
	}
	return nil
}

// correctMin moves the min offset to the first entry whose message is still stored
// (at or above clMin), as Java's correctMinOffset does.
func (q *consumeQueue) correctMin(clMin PhysicalOffset) {
	lo := max(q.min(), QueueOffset(q.files.minOffset()/cqEntrySize))
	q.minOffset.Store(int64(q.searchPhys(lo, q.maxOffset(), clMin)))
}

// deleteBelow destroys files whose last entry points below clMin (never the last
// file, which carries the max offset) and advances the min offset.
func (q *consumeQueue) deleteBelow(clMin PhysicalOffset) error {
	files := q.files.snapshot()
	n := 0
	for _, f := range files[:max(0, len(files)-1)] {
		w := f.wrotePosition.Load()
		if w < cqEntrySize {
			break
		}
		last := readCQEntry(f.data[w-cqEntrySize : w])
		if !last.isPreBlank() && last.phys+PhysicalOffset(last.size) > clMin {
			break
		}
		n++
	}
	if n > 0 {
		if err := q.files.deleteFirstFiles(n); err != nil {
			return fmt.Errorf("delete consumequeue files topic=%s queue=%d: %w", q.topic, q.queueID, err)
		}
	}
	q.correctMin(clMin)
	return nil
}

// writeOffsetFile atomically replaces path with off (8 bytes, big-endian).
func writeOffsetFile(path string, off PhysicalOffset) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(off))
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	_, err = f.Write(b[:])
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return syncDir(filepath.Dir(path))
}

func readOffsetFile(path string) (PhysicalOffset, bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) != 8 {
		return 0, false
	}
	return PhysicalOffset(binary.BigEndian.Uint64(b)), true
}
