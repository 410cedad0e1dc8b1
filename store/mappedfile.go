package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/edsrzf/mmap-go"
	"golang.org/x/sys/unix"
)

// mappedFile is one fixed-size file mapped read-write into memory: a CommitLog
// segment or a ConsumeQueue file (RocketMQ's MappedFile). Writers append at
// wrotePosition; readers take slices of the mapping, holding a reference so that the
// mapping outlives them even if retention deletes the file meanwhile.
//
// Concurrency: one writer at a time (the owner serialises appends); any number of
// readers. wrotePosition is published atomically after the bytes are in place, so a
// reader that loads it sees complete bytes below it.
type mappedFile struct {
	path string
	// start is the global offset of the file's first byte (its name).
	start int64
	size  int64
	file  *os.File
	data  mmap.MMap

	// Invariant: flushedPosition <= wrotePosition <= size.
	wrotePosition   atomic.Int64
	flushedPosition atomic.Int64
	// warmed is the file-relative position below which the warmer populated the
	// page cache (warmer.go); it only grows.
	warmed atomic.Int64
	// dropped is the file-relative position below which the page cache was handed
	// back (cachetail.go). Guarded by the Store's flushMu.
	dropped int64

	// refs counts the owner (1 until destroy) plus readers holding slices.
	refs    atomic.Int64
	closing atomic.Bool
	// releaseFunc is release as a func value, made once: a method value built
	// per read (f.release) is an allocation per record dispatched or read.
	releaseFunc func()
}

// fileName is the 20-digit, zero-padded start offset RocketMQ names its files with.
func fileName(start int64) string {
	return fmt.Sprintf("%020d", start)
}

// fileFill is how a new file gets its size: with its blocks reserved
// (fallocate), with zeros written through it, or with neither (a sparse file).
type fileFill int

const (
	fillAllocate fileFill = iota
	fillZeros
	fillSparse
)

// fillOf is the fill of a file created with or without pre-zeroing.
func fillOf(preZero bool) fileFill {
	if preZero {
		return fillZeros
	}
	return fillAllocate
}

// createMappedFile creates a new file of size bytes under its real name, synced,
// and maps it. fillZeros writes zeros through the whole file, so later
// fdatasyncs of appended data do not also have to convert unwritten blocks
// (measured ~2× faster per fdatasync, which matters with FlushSync);
// fillAllocate reserves the blocks with fallocate, which under the default async
// flush costs less in all (docs/performance.md, fifth pass); fillSparse reserves
// nothing (a ConsumeQueue spare, cqspare.go).
func createMappedFile(dir string, start, size int64, fill fileFill) (*mappedFile, error) {
	path := filepath.Join(dir, fileName(start))
	tmp := path + ".tmp"
	if err := writeZeroFile(tmp, size, fill); err != nil {
		_ = os.Remove(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("rename %s: %w", filepath.Base(tmp), err)
	}
	if err := syncDir(dir); err != nil {
		return nil, err
	}
	return openMappedFile(path, start, size)
}

func writeZeroFile(path string, size int64, fill fileFill) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	switch fill {
	case fillZeros:
		zeros := make([]byte, 1<<20)
		for written := int64(0); written < size; {
			n := min(int64(len(zeros)), size-written)
			if _, err := f.Write(zeros[:n]); err != nil {
				return fmt.Errorf("pre-zero %s: %w", filepath.Base(path), err)
			}
			written += n
		}
	case fillSparse:
		if err := f.Truncate(size); err != nil {
			return fmt.Errorf("size %s: %w", filepath.Base(path), err)
		}
	default:
		if err := allocate(f, size); err != nil {
			return fmt.Errorf("size %s: %w", filepath.Base(path), err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", filepath.Base(path), err)
	}
	return nil
}

// openMappedFile maps an existing file. Its write and flush positions start at 0; the
// owner sets them during recovery.
func openMappedFile(path string, start, size int64) (*mappedFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Base(path), err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", filepath.Base(path), err)
	}
	if st.Size() != size {
		f.Close()
		return nil, fmt.Errorf("%w: file %s has %d bytes, want %d", ErrCorrupt, filepath.Base(path), st.Size(), size)
	}
	data, err := mmap.MapRegion(f, int(size), mmap.RDWR, 0, 0)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("mmap %s: %w", filepath.Base(path), err)
	}
	m := &mappedFile{path: path, start: start, size: size, file: f, data: data}
	m.releaseFunc = m.release
	m.refs.Store(1)
	return m, nil
}

// end is the global offset one past the file's last byte.
func (m *mappedFile) end() int64 { return m.start + m.size }

// remaining is the number of free bytes after the write position.
func (m *mappedFile) remaining() int64 { return m.size - m.wrotePosition.Load() }

// appendBytes copies b at the write position and publishes the new position.
// Precondition: len(b) <= remaining().
func (m *mappedFile) appendBytes(b []byte) {
	pos := m.wrotePosition.Load()
	copy(m.data[pos:], b)
	m.wrotePosition.Store(pos + int64(len(b)))
}

// raiseWarmed moves the warmed mark up to pos unless it is already past it.
func (m *mappedFile) raiseWarmed(pos int64) {
	for {
		cur := m.warmed.Load()
		if cur >= pos || m.warmed.CompareAndSwap(cur, pos) {
			return
		}
	}
}

// slice returns the mapped bytes [from, to) of the file (file-relative positions).
// The caller must hold a reference (acquire) while it uses them after the file may
// have been destroyed.
func (m *mappedFile) slice(from, to int64) []byte {
	return m.data[from:to:to]
}

// acquire takes a reader reference; it fails once the file is being destroyed.
func (m *mappedFile) acquire() bool {
	for {
		n := m.refs.Load()
		if n <= 0 || m.closing.Load() {
			return false
		}
		if m.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference; the last one unmaps and closes the file.
func (m *mappedFile) release() {
	if m.refs.Add(-1) == 0 {
		_ = m.data.Unmap()
		_ = m.file.Close()
	}
}

// flush makes the bytes up to the write position durable and returns the new flushed
// position. It msyncs only the dirty page range.
func (m *mappedFile) flush() (int64, error) {
	wrote := m.wrotePosition.Load()
	flushed := m.flushedPosition.Load()
	if wrote <= flushed {
		return flushed, nil
	}
	page := int64(os.Getpagesize())
	from := flushed / page * page
	if err := unix.Msync(m.data[from:wrote], unix.MS_SYNC); err != nil {
		return flushed, fmt.Errorf("msync %s [%d,%d): %w", filepath.Base(m.path), from, wrote, err)
	}
	m.flushedPosition.Store(wrote)
	return wrote, nil
}

// datasync is flush for a file written with pwrite: fdatasync instead of msync.
func (m *mappedFile) datasync() (int64, error) {
	wrote := m.wrotePosition.Load()
	if wrote <= m.flushedPosition.Load() {
		return m.flushedPosition.Load(), nil
	}
	if err := unix.Fdatasync(int(m.file.Fd())); err != nil {
		return m.flushedPosition.Load(), fmt.Errorf("fdatasync %s: %w", filepath.Base(m.path), err)
	}
	m.flushedPosition.Store(wrote)
	return wrote, nil
}

// truncateTo cuts the logical content at pos (file-relative) and zeroes the bytes
// after it, so a later recovery scan cannot mistake stale bytes for records.
func (m *mappedFile) truncateTo(pos int64) {
	wrote := m.wrotePosition.Load()
	if pos < wrote {
		clearNonZero(m.data[pos:wrote])
	} else if pos > wrote {
		pos = wrote
	}
	m.wrotePosition.Store(pos)
	if m.flushedPosition.Load() > pos {
		m.flushedPosition.Store(pos)
	}
}

// destroy unlinks the file and drops the owner reference; readers still holding
// slices keep the mapping alive until they release.
func (m *mappedFile) destroy() error {
	if !m.closing.CompareAndSwap(false, true) {
		return nil
	}
	err := os.Remove(m.path)
	m.release()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", filepath.Base(m.path), err)
	}
	return nil
}

// close unmaps the file without deleting it.
func (m *mappedFile) close() {
	if m.closing.CompareAndSwap(false, true) {
		m.release()
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", filepath.Base(dir), err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", filepath.Base(dir), err)
	}
	return nil
}

// clearNonZero zeroes b, writing only the pages that hold non-zero bytes. Reading a
// hole of a sparse mapping allocates nothing, writing does: zeroing a mostly
// unwritten region page by page would allocate all of it (hundreds of MiB for an
// IndexFile) and, on a full disk, kill the process with SIGBUS.
func clearNonZero(b []byte) {
	for len(b) > 0 {
		n := min(len(zeroPage), len(b))
		if !bytes.Equal(b[:n], zeroPage[:n]) {
			clear(b[:n])
		}
		b = b[n:]
	}
}

var zeroPage [4096]byte

// allocate gives f its size with the blocks reserved (fallocate), so that writing
// through a mapping of it can never hit a full disk: a page fault that finds no
// space kills the process with SIGBUS, where fallocate fails cleanly with ENOSPC.
// Filesystems without fallocate get a sparse file.
func allocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return f.Truncate(size)
	}
	return err
}
