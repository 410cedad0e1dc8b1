package store

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
)

// commitLog is the CommitLog: one mappedFileQueue of equally sized segments under
// <Dir>/commitlog/, each named by its 20-digit start offset. Records are appended back
// to back; a record never spans two segments: when the next one does not fit (with
// MinBlankRecord bytes to spare), the rest of the segment is a blank padding record
// and the record goes to the start of the next segment.
//
// Concurrency: one writer (the Store's write lock serialises appendBatch, cut,
// deleteFirst and the per-segment timestamp table); readers (recordAt, bytesAt,
// min/maxOffset, the flusher) run concurrently with it. A segment's wrotePosition is
// published only after every byte below it is in place, so readers never see a
// half-copied or unpatched record.
type commitLog struct {
	dir     string
	segSize int64
	mfq     *mappedFileQueue
	alloc   *allocator
	warm    *warmer
	log     hclog.Logger

	// emptyStart is where the first segment goes while there is none (a new store, or
	// one whose every record was cut). Invariant: a multiple of segSize.
	emptyStart atomic.Int64

	// segMaxTs caches the largest STORETIMESTAMP of each segment (by start) for
	// retention. Guarded by the Store's write lock; missing entries are computed lazily.
	segMaxTs map[int64]int64

	// views is scratch space reused by appendBatch (no allocation per batch).
	views []RecordView
	// hook is Config.IOHook (nil in production).
	hook IOHook
	// writeThrough makes appendBatch gather the records it places into wbuf, to be
	// written with one pwrite per segment by writePending, and flush use fdatasync,
	// instead of copying into the mapping and msyncing it. Readers of the mapping see
	// the bytes once writePending has run (the page cache is shared). The entry log
	// uses it (entrylog.go): a store through the mapping faults on the page each
	// msync cleaned, and measured 2.4x slower per synced batch than raft-wal
	// (BenchmarkStoreLogs, batch=1); through pwrite it is level.
	writeThrough bool
	wbuf         []byte
	wfile        *mappedFile // the segment wbuf goes to
	wpos         int64       // where in wfile
}

// writePending writes what appendBatch gathered in writeThrough mode. On an error the
// gathered bytes are dropped; the caller cuts the CommitLog back.
func (c *commitLog) writePending() error {
	if len(c.wbuf) == 0 {
		return nil
	}
	f, pos, b := c.wfile, c.wpos, c.wbuf
	c.wbuf, c.wfile = c.wbuf[:0], nil
	if _, err := f.file.WriteAt(b, pos); err != nil {
		return fmt.Errorf("write %d bytes at %d: %w", len(b), f.start+pos, err)
	}
	// Published only now: a sync running alongside (the leader's deferred fsync)
	// must not count bytes still in wbuf as durable, nor a reader see them.
	f.wrotePosition.Store(pos + int64(len(b)))
	return nil
}

// setHook installs the IOHook on the CommitLog and its pre-allocator. Called once,
// before any append.
func (c *commitLog) setHook(h IOHook) {
	c.hook = h
	c.alloc.mu.Lock()
	c.alloc.hook = h
	c.alloc.mu.Unlock()
}

func newCommitLog(dir string, segSize int64, preZero bool, log hclog.Logger) *commitLog {
	return &commitLog{
		dir:      dir,
		segSize:  segSize,
		mfq:      newMappedFileQueue(dir, segSize, preZero),
		alloc:    newAllocator(dir, segSize, preZero, log),
		log:      log,
		segMaxTs: make(map[int64]int64),
	}
}

// startWarmer starts populating the page cache window bytes ahead of the write
// position (warmer.go); window <= 0 leaves it off. Open calls it once recovery has
// set the write position, before any append.
func (c *commitLog) startWarmer(window int64) {
	if window <= 0 {
		return
	}
	c.alloc.warmAhead = window
	c.warm = newWarmer(c.mfq, window, c.log)
}

// minOffset is the first byte still stored.
func (c *commitLog) minOffset() PhysicalOffset {
	if f := c.mfq.first(); f != nil {
		return PhysicalOffset(f.start)
	}
	return PhysicalOffset(c.emptyStart.Load())
}

// maxOffset is one past the last byte written (published).
func (c *commitLog) maxOffset() PhysicalOffset {
	if f := c.mfq.last(); f != nil {
		return PhysicalOffset(f.start + f.wrotePosition.Load())
	}
	return PhysicalOffset(c.emptyStart.Load())
}

// flushedOffset is the offset below which every byte has been msync'd.
func (c *commitLog) flushedOffset() PhysicalOffset {
	if f := c.mfq.last(); f != nil {
		return PhysicalOffset(f.start + f.flushedPosition.Load())
	}
	return PhysicalOffset(c.emptyStart.Load())
}

// segmentStart is the start of the segment that holds off.
func (c *commitLog) segmentStart(off PhysicalOffset) int64 {
	return int64(off) / c.segSize * c.segSize
}

// recordAt implements recordSource.
func (c *commitLog) recordAt(off PhysicalOffset) ([]byte, PhysicalOffset, func(), error) {
	f := c.mfq.find(int64(off))
	if f == nil || !f.acquire() {
		return nil, 0, nil, fmt.Errorf("%w: record at %d: no segment (min %d, max %d)", ErrOffsetOutOfRange, off, c.minOffset(), c.maxOffset())
	}
	pos := int64(off) - f.start
	wrote := f.wrotePosition.Load()
	if pos+MinBlankRecord > wrote {
		f.release()
		return nil, 0, nil, fmt.Errorf("%w: record at %d: beyond written end %d", ErrOffsetOutOfRange, off, f.start+wrote)
	}
	size, _, _ := RecordSize(f.data[pos:wrote])
	if size < MinBlankRecord || pos+int64(size) > wrote {
		f.release()
		return nil, 0, nil, corruptf("record at %d in segment %s: total size %d does not fit written end %d", off, fileName(f.start), size, f.start+wrote)
	}
	return f.slice(pos, pos+int64(size)), off + PhysicalOffset(size), f.releaseFunc, nil
}

// bytesAt implements recordSource.
func (c *commitLog) bytesAt(off PhysicalOffset, size int32) ([]byte, func(), error) {
	f := c.mfq.find(int64(off))
	if f == nil || size < 0 || !f.acquire() {
		return nil, nil, fmt.Errorf("%w: %d bytes at %d: no segment (min %d, max %d)", ErrOffsetOutOfRange, size, off, c.minOffset(), c.maxOffset())
	}
	pos := int64(off) - f.start
	if pos+int64(size) > f.wrotePosition.Load() {
		f.release()
		return nil, nil, fmt.Errorf("%w: %d bytes at %d: beyond written end %d", ErrOffsetOutOfRange, size, off, f.start+f.wrotePosition.Load())
	}
	return f.slice(pos, pos+int64(size)), f.releaseFunc, nil
}

var _ recordSource = (*commitLog)(nil)

// appendBatch copies recs into the CommitLog and patches QUEUEOFFSET, PHYSICALOFFSET
// and STORETIMESTAMP in the copy (the caller's slices are not modified). Queue offsets
// come from tbl; with a nil tbl QUEUEOFFSET is written as 0 (entrylog.go). The batch
// is checked whole before anything is written, so an illegal record rejects the batch
// without side effects; an I/O error while rolling over cuts the partial batch back
// out and restores tbl.
func (c *commitLog) appendBatch(recs [][]byte, ts int64, tbl *queueOffsetTable, out []AppendResult) ([]AppendResult, error) {
	limit := c.segSize - MinBlankRecord
	c.views = c.views[:0]
	for i, rec := range recs {
		v, err := ViewRecord(rec)
		if err != nil {
			return out, fmt.Errorf("%w: record %d of batch: %w", ErrMessageIllegal, i, err)
		}
		if int64(len(rec)) > limit {
			return out, fmt.Errorf("%w: record %d of batch has %d bytes, segment holds at most %d", ErrMessageIllegal, i, len(rec), limit)
		}
		c.views = append(c.views, v)
	}
	startOff := c.maxOffset()
	first := len(out)
	f := c.mfq.last()
	var pos int64
	if f != nil {
		pos = f.wrotePosition.Load()
		if c.writeThrough && c.wfile == f {
			pos = c.wpos + int64(len(c.wbuf)) // gathered, not written yet
		}
	}
	for i, rec := range recs {
		n := int64(len(rec))
		if f == nil || n+MinBlankRecord > f.size-pos {
			next := c.emptyStart.Load()
			if f != nil {
				if err := c.writePending(); err != nil {
					c.undo(startOff, tbl, out[first:])
					return out[:first], err
				}
				if pos < f.size {
					putBlank(f.data[pos:], f.size-pos)
					f.wrotePosition.Store(f.size)
				}
				next = f.end()
			}
			var err error
			if f, err = c.newSegment(next); err != nil {
				c.undo(startOff, tbl, out[first:])
				return out[:first], fmt.Errorf("append at %d: %w", next, err)
			}
			pos = 0
		}
		if err := c.hook.call(IOCall{Op: IOWrite, Path: f.path, Record: i, Records: len(recs)}); err != nil {
			// Publish what this batch copied so far, so that undo's cut zeroes it too.
			f.wrotePosition.Store(pos)
			c.undo(startOff, tbl, out[first:])
			return out[:first], fmt.Errorf("append record %d of %d at %d: %w", i, len(recs), f.start+pos, err)
		}
		phys := f.start + pos
		v := &c.views[i]
		queueID := v.QueueID()
		var topic string // left empty without a table: entry logs (entrylog.go) take no queue offsets
		var qo QueueOffset
		if tbl != nil {
			topic, qo = tbl.assign(v.Topic(), queueID)
		}
		var dst []byte // where the record's bytes go: the mapping, or the pwrite buffer
		if c.writeThrough {
			if c.wfile != f {
				if err := c.writePending(); err != nil {
					f.wrotePosition.Store(pos)
					c.undo(startOff, tbl, out[first:])
					return out[:first], err
				}
				c.wfile, c.wpos = f, pos
			}
			at := len(c.wbuf)
			c.wbuf = append(c.wbuf, rec...)
			dst = c.wbuf[at:]
		} else {
			dst = f.data[pos : pos+n]
			copy(dst, rec)
		}
		PatchOffsets(dst, qo, PhysicalOffset(phys))
		PatchStoreTimestamp(dst, ts)
		pos += n
		out = append(out, AppendResult{
			Topic: topic, QueueID: queueID, QueueOffset: qo,
			PhysicalOffset: PhysicalOffset(phys), Size: int32(n), StoreTimestamp: ts,
		})
		if ts > c.segMaxTs[f.start] {
			c.segMaxTs[f.start] = ts
		}
	}
	if f != nil {
		if !c.writeThrough { // writeThrough: writePending publishes
			f.wrotePosition.Store(pos)
		}
		if c.warm != nil {
			c.warm.nudge(f, pos)
		}
	}
	return out, nil
}

// undo reverts a partially applied batch: the CommitLog goes back to startOff and
// every queue whose offset the batch advanced goes back to its first assigned offset.
func (c *commitLog) undo(startOff PhysicalOffset, tbl *queueOffsetTable, done []AppendResult) {
	c.wbuf, c.wfile = c.wbuf[:0], nil
	for i := len(done) - 1; tbl != nil && i >= 0; i-- {
		tbl.set(done[i].Topic, done[i].QueueID, done[i].QueueOffset)
	}
	if err := c.cut(startOff); err != nil {
		c.log.Error("undoing partial batch", "offset", startOff, "error", err)
	}
}

// newSegment makes the segment starting at start the last one: the pre-allocated
// file when there is one, otherwise a synchronously created file. It then asks for
// the following segment in the background.
func (c *commitLog) newSegment(start int64) (*mappedFile, error) {
	mf, ok := c.alloc.take(start)
	if ok {
		if err := c.mfq.adopt(mf); err != nil {
			_ = mf.destroy()
			ok = false
		}
	}
	if !ok {
		if err := c.hook.call(IOCall{Op: IOCreate, Path: filepath.Join(c.dir, fileName(start))}); err != nil {
			return nil, err
		}
		var err error
		if mf, err = c.mfq.createFile(start); err != nil {
			return nil, err
		}
	}
	c.alloc.request(start + c.segSize)
	return mf, nil
}

// flush msyncs every segment with unflushed bytes and returns the durable offset.
// The caller serialises flushes (Store.flushMu) so flushed positions only grow.
func (c *commitLog) flush() (PhysicalOffset, error) {
	for _, f := range c.mfq.snapshot() {
		if f.flushedPosition.Load() >= f.wrotePosition.Load() || !f.acquire() {
			continue
		}
		if err := c.hook.call(IOCall{Op: IOSync, Path: f.path}); err != nil {
			f.release()
			return PhysicalOffset(f.start + f.flushedPosition.Load()), err
		}
		var err error
		if c.writeThrough {
			_, err = f.datasync()
		} else {
			_, err = f.flush()
		}
		f.release()
		if err != nil {
			return PhysicalOffset(f.start + f.flushedPosition.Load()), err
		}
	}
	return c.flushedOffset(), nil
}

// cut removes everything at and after off: the segment holding off is zeroed after it
// (and the zeroes are msync'd, so a crash cannot bring the cut records back for
// recovery to find), later segments are destroyed. off must be within [min, max].
func (c *commitLog) cut(off PhysicalOffset) error {
	if f := c.mfq.find(int64(off)); f != nil {
		if err := zeroTail(f, int64(off)-f.start); err != nil {
			return err
		}
	}
	if err := c.mfq.truncate(int64(off)); err != nil {
		return err
	}
	if c.mfq.last() == nil {
		c.emptyStart.Store(c.segmentStart(off))
	}
	for start := range c.segMaxTs {
		if start+c.segSize > int64(off) {
			delete(c.segMaxTs, start)
		}
	}
	return nil
}

// zeroTail makes pos the write position of f, zeroing and syncing the bytes from pos
// up to the last non-zero byte of the file.
func zeroTail(f *mappedFile, pos int64) error {
	hi := lastNonZero(f.data[pos:f.wrotePosition.Load()]) + pos
	if hi > pos {
		clear(f.data[pos:hi])
		page := int64(os.Getpagesize())
		from := pos / page * page
		if err := unix.Msync(f.data[from:hi], unix.MS_SYNC); err != nil {
			return fmt.Errorf("msync cut %s [%d,%d): %w", filepath.Base(f.path), from, hi, err)
		}
	}
	f.wrotePosition.Store(pos)
	if f.flushedPosition.Load() > pos {
		f.flushedPosition.Store(pos)
	}
	return nil
}

// lastNonZero returns one past the last non-zero byte of b (0 if all zero). It walks
// backwards in pages so that a mostly empty (sparse) tail costs reads, not writes.
func lastNonZero(b []byte) int64 {
	const chunk = 4096
	end := len(b)
	for end > 0 {
		from := max(0, end-chunk)
		for i := end - 1; i >= from; i-- {
			if b[i] != 0 {
				return int64(i + 1)
			}
		}
		end = from
	}
	return 0
}

// deleteFirst destroys the first n segments (retention).
func (c *commitLog) deleteFirst(n int) error {
	files := c.mfq.snapshot()
	for _, f := range files[:min(n, len(files))] {
		delete(c.segMaxTs, f.start)
	}
	return c.mfq.deleteFirstFiles(n)
}

// segmentMaxTimestamp is the largest STORETIMESTAMP of the messages in f, walking its
// records once when it is not cached (segments loaded at Open).
func (c *commitLog) segmentMaxTimestamp(f *mappedFile) int64 {
	if ts, ok := c.segMaxTs[f.start]; ok {
		return ts
	}
	maxTs := maxStoreTimestamp(f)
	c.segMaxTs[f.start] = maxTs
	return maxTs
}

// maxStoreTimestamp walks f's records and returns their largest STORETIMESTAMP. The
// caller holds a reference to f or a lock that keeps it mapped.
func maxStoreTimestamp(f *mappedFile) int64 {
	var maxTs int64
	wrote := f.wrotePosition.Load()
	for pos := int64(0); pos+MinBlankRecord <= wrote; {
		size, magic, _ := RecordSize(f.data[pos:wrote])
		if magic == MagicBlank || size < fixedV1Size || pos+int64(size) > wrote {
			break
		}
		maxTs = max(maxTs, StoreTimestampOf(f.data[pos:pos+int64(size)]))
		pos += int64(size)
	}
	return maxTs
}

func (c *commitLog) close() {
	if c.warm != nil {
		c.warm.stop()
	}
	c.alloc.close()
	c.mfq.close()
}
