package store

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// mappedFileQueue is an ordered run of equally sized mappedFiles in one directory,
// each named by its 20-digit start offset (RocketMQ's MappedFileQueue). The CommitLog
// uses one (offsets in bytes); every ConsumeQueue uses one (offsets in bytes of 20-byte
// entries).
//
// Concurrency: the file list is guarded by mu; appends to the last file are the
// owner's (single writer); lookups may run concurrently with appends.
type mappedFileQueue struct {
	dir      string
	fileSize int64
	preZero  bool

	mu sync.RWMutex
	// Invariant: files are contiguous: files[i+1].start == files[i].end().
	files []*mappedFile
}

func newMappedFileQueue(dir string, fileSize int64, preZero bool) *mappedFileQueue {
	return &mappedFileQueue{dir: dir, fileSize: fileSize, preZero: preZero}
}

// load maps every file of the directory. Write positions are set to the full file
// size; recovery then finds the real end. Leftover *.tmp files from a crash during
// pre-allocation are removed.
func (q *mappedFileQueue) load() error {
	if err := os.MkdirAll(q.dir, 0o755); err != nil {
		return fmt.Errorf("mkdir %s: %w", q.dir, err)
	}
	entries, err := os.ReadDir(q.dir)
	if err != nil {
		return fmt.Errorf("read dir %s: %w", q.dir, err)
	}
	var starts []int64
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") {
			_ = os.Remove(filepath.Join(q.dir, name))
			continue
		}
		start, err := strconv.ParseInt(name, 10, 64)
		if err != nil || len(name) != 20 || e.IsDir() {
			continue // not ours
		}
		starts = append(starts, start)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, start := range starts {
		if i > 0 && start != starts[i-1]+q.fileSize {
			return fmt.Errorf("%w: %s: file %s does not follow %s (file size %d)", ErrCorrupt, q.dir, fileName(start), fileName(starts[i-1]), q.fileSize)
		}
		mf, err := openMappedFile(filepath.Join(q.dir, fileName(start)), start, q.fileSize)
		if err != nil {
			return err
		}
		mf.wrotePosition.Store(q.fileSize)
		mf.flushedPosition.Store(q.fileSize)
		q.files = append(q.files, mf)
	}
	return nil
}

// snapshot returns the current file list (callers must not modify it).
func (q *mappedFileQueue) snapshot() []*mappedFile {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return q.files
}

func (q *mappedFileQueue) last() *mappedFile {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if len(q.files) == 0 {
		return nil
	}
	return q.files[len(q.files)-1]
}

func (q *mappedFileQueue) first() *mappedFile {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if len(q.files) == 0 {
		return nil
	}
	return q.files[0]
}

// createFile appends a new file starting at start, which must be the end of the last
// file (or any multiple of fileSize when the queue is empty).
func (q *mappedFileQueue) createFile(start int64) (*mappedFile, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n := len(q.files); n > 0 && q.files[n-1].end() != start {
		return nil, fmt.Errorf("store: new file %s does not follow %s", fileName(start), fileName(q.files[n-1].start))
	}
	mf, err := createMappedFile(q.dir, start, q.fileSize, fillOf(q.preZero))
	if err != nil {
		return nil, err
	}
	q.files = append(q.files, mf)
	return mf, nil
}

// adopt appends an already created file (from a pre-allocator) to the queue.
func (q *mappedFileQueue) adopt(mf *mappedFile) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n := len(q.files); n > 0 && q.files[n-1].end() != mf.start {
		return fmt.Errorf("store: adopted file %s does not follow %s", fileName(mf.start), fileName(q.files[n-1].start))
	}
	q.files = append(q.files, mf)
	return nil
}

// find returns the file holding offset, or nil.
func (q *mappedFileQueue) find(offset int64) *mappedFile {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if len(q.files) == 0 || offset < q.files[0].start {
		return nil
	}
	i := int((offset - q.files[0].start) / q.fileSize)
	if i >= len(q.files) {
		return nil
	}
	return q.files[i]
}

// minOffset is the start of the first file; maxOffset is the write position of the last.
func (q *mappedFileQueue) minOffset() int64 {
	if f := q.first(); f != nil {
		return f.start
	}
	return 0
}

func (q *mappedFileQueue) maxOffset() int64 {
	if f := q.last(); f != nil {
		return f.start + f.wrotePosition.Load()
	}
	return 0
}

// truncate cuts everything at and after offset: later files are destroyed, the file
// holding offset is cut and zeroed after it.
func (q *mappedFileQueue) truncate(offset int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	keep := q.files[:0:0]
	var firstErr error
	for _, f := range q.files {
		switch {
		case f.end() <= offset:
			keep = append(keep, f)
		case f.start < offset:
			f.truncateTo(offset - f.start)
			keep = append(keep, f)
		default:
			if err := f.destroy(); err != nil && firstErr == nil {
				firstErr = err
			}
		}
	}
	q.files = keep
	return firstErr
}

// deleteFirstFiles destroys the first n files (retention).
func (q *mappedFileQueue) deleteFirstFiles(n int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(n, len(q.files))
	var firstErr error
	for _, f := range q.files[:n] {
		if err := f.destroy(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	q.files = append(q.files[:0:0], q.files[n:]...)
	return firstErr
}

// flush syncs every file with unflushed bytes, in order, and returns the global
// offset up to which everything is durable.
func (q *mappedFileQueue) flush() (int64, error) {
	files := q.snapshot()
	for _, f := range files {
		if f.flushedPosition.Load() < f.wrotePosition.Load() {
			if _, err := f.flush(); err != nil {
				return f.start + f.flushedPosition.Load(), err
			}
		}
	}
	if len(files) == 0 {
		return 0, nil
	}
	l := files[len(files)-1]
	return l.start + l.flushedPosition.Load(), nil
}

// close unmaps every file.
func (q *mappedFileQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, f := range q.files {
		f.close()
	}
	q.files = nil
}
