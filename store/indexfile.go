package store

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edsrzf/mmap-go"
	"golang.org/x/sys/unix"
)

// IndexFile layout (RocketMQ's IndexFile, big-endian):
//
//	header  40 bytes: beginTimestamp int64, endTimestamp int64, beginPhyOffset int64,
//	                  endPhyOffset int64, hashSlotCount int32, indexCount int32
//	slots   hashSlots × int32: number of the newest entry whose hash falls in the slot (0 = none)
//	entries maxEntries × 20 bytes: keyHash int32, phyOffset int64, timeDiff int32 (seconds
//	        since beginTimestamp), prevIndex int32 (older entry of the same slot, 0 = end)
//
// Entry 0 is never used (indexCount starts at 1, as in Java), so 0 can mean "none".
const (
	indexHeaderSize = 40
	indexSlotSize   = 4
	indexEntrySize  = 20

	hdrBeginTimestamp = 0
	hdrEndTimestamp   = 8
	hdrBeginPhy       = 16
	hdrEndPhy         = 24
	hdrSlotCount      = 32
	hdrIndexCount     = 36

	// indexNameLayout is yyyyMMddHHmmssSSS, Java's IndexFile naming.
	indexNameLayout = "20060102150405.000"
)

// indexFile is one mmap'd IndexFile.
//
// Concurrency: one writer (the dispatcher); readers walk chains concurrently. The
// writer fills an entry before publishing it through its slot and then indexCount, so
// a reader that follows a slot sees a complete entry; a torn chain is only possible
// during truncation, which runs with dispatch stopped and readers tolerate (they stop
// at an index beyond indexCount).
//
// The hash slot table of the file being written lives in memory (mem), not in the
// mapping (decision 0018): every key rewrites a slot at a random place in it, so
// through the mapping it was a file region dirty all over, written back by the
// kernel in 20 MB bursts. The entries and the header stay in the mapping. Once the
// file is full the flusher copies the table into the mapping a piece at a time
// (writeOutSlots) and then drops mem; close copies what is left (flush with final).
type indexFile struct {
	path       string
	name       string
	file       *os.File
	data       mmap.MMap
	hashSlots  int
	maxEntries int
	// dirty is set by put and cut and cleared by flush.
	dirty atomic.Bool
	// startedEntries is how many entries writeBackEntries has handed to the
	// kernel; only the flusher goroutine (flushMu) touches it.
	startedEntries int
	// mem, when set, is the hash slot table; the mapping's slot region is then
	// stale until writeOutSlots has copied all of mem into it.
	mem atomic.Pointer[slotTable]
	// slotsMu orders writeOutSlots and cut, the writers of a full file's slots
	// (put never writes a full file). copied is how many slots of mem the
	// write-out has copied into the mapping so far; guarded by slotsMu.
	slotsMu sync.Mutex
	copied  int
	// staleSlots: the store did not close cleanly while this file was written,
	// so the slot table in the mapping is older than its entries; recovery
	// rebuilds it (indexService.recoverFiles).
	staleSlots bool
}

// slotTable is a hash slot table in memory: slot i is entry number, native order.
type slotTable []atomic.Int32

// slotsPerWriteOut is how many slots one writeOutSlots call copies into the mapping
// (1 MiB): a 20 MB table goes out over 20 flusher rounds (10 s at 500 ms), not at once.
const slotsPerWriteOut = 1 << 18

// indexFileName names a file by the store time of its first message (UTC, so that
// replicas agree whatever their time zone).
func indexFileName(ts int64) string {
	t := time.UnixMilli(ts).UTC()
	s := t.Format(indexNameLayout)
	return s[:14] + s[15:] // drop the '.' of the fractional seconds
}

func indexFileSize(hashSlots, maxEntries int) int64 {
	return indexHeaderSize + int64(hashSlots)*indexSlotSize + int64(maxEntries)*indexEntrySize
}

// createIndexFile creates and maps a zeroed IndexFile named name.
func createIndexFile(dir, name string, hashSlots, maxEntries int) (*indexFile, error) {
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	if err := writeZeroFile(tmp, indexFileSize(hashSlots, maxEntries), fillAllocate); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("rename index %s: %w", name, err)
	}
	if err := syncDir(dir); err != nil {
		return nil, err
	}
	f, err := openIndexFile(dir, name, hashSlots, maxEntries)
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(f.data[hdrSlotCount:], uint32(hashSlots))
	f.setCount(1)
	f.dirty.Store(true)
	m := make(slotTable, hashSlots)
	f.mem.Store(&m)
	return f, nil
}

// openIndexFile maps an existing IndexFile whose size must match the configuration.
func openIndexFile(dir, name string, hashSlots, maxEntries int) (*indexFile, error) {
	path := filepath.Join(dir, name)
	fh, err := os.OpenFile(path, os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", name, err)
	}
	size := indexFileSize(hashSlots, maxEntries)
	st, err := fh.Stat()
	if err == nil && st.Size() != size {
		err = fmt.Errorf("%w: index %s has %d bytes, want %d (hashSlots %d, maxEntries %d)", ErrCorrupt, name, st.Size(), size, hashSlots, maxEntries)
	}
	if err != nil {
		fh.Close()
		return nil, err
	}
	data, err := mmap.MapRegion(fh, int(size), mmap.RDWR, 0, 0)
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("mmap index %s: %w", name, err)
	}
	f := &indexFile{path: path, name: name, file: fh, data: data, hashSlots: hashSlots, maxEntries: maxEntries}
	if got := int(int32(binary.BigEndian.Uint32(data[hdrSlotCount:]))); got != 0 && got != hashSlots {
		f.close()
		return nil, fmt.Errorf("%w: index %s has %d hash slots, configured %d", ErrCorrupt, name, got, hashSlots)
	}
	return f, nil
}

func (f *indexFile) u64(pos int) int64       { return int64(binary.BigEndian.Uint64(f.data[pos:])) }
func (f *indexFile) setU64(pos int, v int64) { binary.BigEndian.PutUint64(f.data[pos:], uint64(v)) }
func (f *indexFile) u32(pos int) int32       { return int32(binary.BigEndian.Uint32(f.data[pos:])) }
func (f *indexFile) setU32(pos int, v int32) { binary.BigEndian.PutUint32(f.data[pos:], uint32(v)) }

func (f *indexFile) beginTimestamp() int64    { return f.u64(hdrBeginTimestamp) }
func (f *indexFile) endTimestamp() int64      { return f.u64(hdrEndTimestamp) }
func (f *indexFile) beginPhy() PhysicalOffset { return PhysicalOffset(f.u64(hdrBeginPhy)) }
func (f *indexFile) endPhy() PhysicalOffset   { return PhysicalOffset(f.u64(hdrEndPhy)) }
func (f *indexFile) count() int               { return int(f.u32(hdrIndexCount)) }
func (f *indexFile) setCount(n int)           { f.setU32(hdrIndexCount, int32(n)) }
func (f *indexFile) full() bool               { return f.count() >= f.maxEntries }
func (f *indexFile) empty() bool              { return f.count() <= 1 }
func (f *indexFile) slotOf(hash int32) int    { return int(hash) % f.hashSlots }

// slot is the newest entry number of slot i (0 = none), from mem when set.
func (f *indexFile) slot(i int) int32 {
	if m := f.mem.Load(); m != nil {
		return (*m)[i].Load()
	}
	return f.u32(indexHeaderSize + i*indexSlotSize)
}

func (f *indexFile) setSlot(i int, v int32) {
	if m := f.mem.Load(); m != nil {
		(*m)[i].Store(v)
		return
	}
	f.setU32(indexHeaderSize+i*indexSlotSize, v)
}

// loadSlots puts the mapping's slot table into memory, for the file that is
// written next (indexService's open).
func (f *indexFile) loadSlots() {
	m := make(slotTable, f.hashSlots)
	for i := range m {
		m[i].Store(f.u32(indexHeaderSize + i*indexSlotSize))
	}
	f.mem.Store(&m)
}
func (f *indexFile) entryPos(i int) int {
	return indexHeaderSize + f.hashSlots*indexSlotSize + i*indexEntrySize
}
func (f *indexFile) entryPhy(i int) PhysicalOffset { return PhysicalOffset(f.u64(f.entryPos(i) + 4)) }

// put adds one key hash for the message at phy stored at storeTS. The caller checks
// full() first.
func (f *indexFile) put(hash int32, phy PhysicalOffset, storeTS int64) {
	n := f.count()
	if n >= f.maxEntries {
		panic(fmt.Sprintf("store: index %s put beyond %d entries (caller must roll the file)", f.name, f.maxEntries))
	}
	if f.empty() {
		f.setU64(hdrBeginTimestamp, storeTS)
		f.setU64(hdrBeginPhy, int64(phy))
	}
	diff := (storeTS - f.beginTimestamp()) / 1000
	diff = max(0, min(diff, 1<<31-1))
	si := f.slotOf(hash)
	e := f.entryPos(n)
	f.setU32(e, hash)
	f.setU64(e+4, int64(phy))
	f.setU32(e+12, int32(diff))
	f.setU32(e+16, f.slot(si))
	f.setSlot(si, int32(n))
	f.setU64(hdrEndTimestamp, storeTS)
	f.setU64(hdrEndPhy, int64(phy))
	f.setCount(n + 1)
	f.dirty.Store(true)
}

// timeMatched is Java's isTimeMatched: the file's time span overlaps [begin, end].
func (f *indexFile) timeMatched(begin, end int64) bool {
	fb, fe := f.beginTimestamp(), f.endTimestamp()
	return (begin < fb && end > fe) || (begin >= fb && begin <= fe) || (end >= fb && end <= fe)
}

// lookup appends to out the physical offsets of entries with hash whose time lies in
// [begin, end], newest first, until out holds maxNum.
func (f *indexFile) lookup(out []PhysicalOffset, hash int32, maxNum int, begin, end int64) []PhysicalOffset {
	n := f.count()
	i := int(f.slot(f.slotOf(hash)))
	fb := f.beginTimestamp()
	for steps := 0; i > 0 && i < n && len(out) < maxNum && steps < n; steps++ {
		e := f.entryPos(i)
		diff := f.u32(e + 12)
		if diff < 0 {
			break
		}
		t := fb + int64(diff)*1000
		if f.u32(e) == hash && t >= begin && t <= end {
			out = append(out, PhysicalOffset(f.u64(e+4)))
		}
		prev := int(f.u32(e + 16))
		if prev >= i { // chains only point to older entries; anything else is damage
			break
		}
		i = prev
	}
	return out
}

// cut keeps the first keep entries (entry numbers below keep) and rebuilds the slots
// from them, in memory, which also repairs chains torn by a crash and a slot table
// left stale by one. endTimestamp becomes the time of the last kept entry as given by
// tsOf (second precision if unknown).
func (f *indexFile) cut(keep int, tsOf func(PhysicalOffset) (int64, bool)) {
	keep = max(1, min(keep, f.maxEntries))
	f.slotsMu.Lock()
	defer f.slotsMu.Unlock()
	f.dirty.Store(true)
	m := make(slotTable, f.hashSlots)
	for i := 1; i < keep; i++ {
		e := f.entryPos(i)
		si := f.slotOf(f.u32(e))
		f.setU32(e+16, m[si].Load())
		m[si].Store(int32(i))
	}
	f.mem.Store(&m)
	f.copied = 0
	f.staleSlots = false
	clearNonZero(f.data[f.entryPos(keep):f.entryPos(f.maxEntries)])
	f.setCount(keep)
	if keep <= 1 {
		clear(f.data[0:hdrSlotCount])
		return
	}
	last := f.entryPos(keep - 1)
	phy := PhysicalOffset(f.u64(last + 4))
	f.setU64(hdrEndPhy, int64(phy))
	ts, ok := tsOf(phy)
	if !ok {
		ts = f.beginTimestamp() + int64(f.u32(last+12))*1000 + 999
	}
	f.setU64(hdrEndTimestamp, ts)
}

// validCount is the number of leading entries (from 1) that look written and point
// below limit, a torn or stale tail ends it.
func (f *indexFile) validCount(limit PhysicalOffset) int {
	n := min(max(f.count(), 1), f.maxEntries)
	// Entries beyond indexCount may have reached the disk before the header did.
	for n < f.maxEntries && f.u32(f.entryPos(n)) != 0 {
		n++
	}
	valid := 1
	var prevPhy PhysicalOffset
	for i := 1; i < n; i++ {
		e := f.entryPos(i)
		phy := PhysicalOffset(f.u64(e + 4))
		if f.u32(e) < 0 || phy >= limit || phy < prevPhy || (f.u32(e) == 0 && phy == 0) || f.u32(e+16) >= int32(i) || f.u32(e+16) < 0 {
			break
		}
		prevPhy = phy
		valid = i + 1
	}
	return valid
}

// writeOutSlots copies up to limit slots (all when limit < 0) of a full file's table
// from memory into the mapping and starts their write-back; once every slot is
// there, mem goes and readers use the mapping. final (close: nothing is written any
// more) does the same for a file that is not full and starts no write-back (the
// sync follows). A write-back the kernel refuses is reported; the copy stands.
// Flusher goroutine.
func (f *indexFile) writeOutSlots(limit int, final bool) error {
	f.slotsMu.Lock()
	defer f.slotsMu.Unlock()
	m := f.mem.Load()
	if m == nil || (!final && !f.full()) { // a file not full: the dispatcher writes it
		return nil
	}
	var err error
	from := f.copied
	to := len(*m)
	if limit >= 0 {
		to = min(to, from+limit)
	}
	for i := from; i < to; i++ {
		f.setU32(indexHeaderSize+i*indexSlotSize, (*m)[i].Load())
	}
	f.copied = to
	f.dirty.Store(true)
	if to > from && !final {
		off := int64(indexHeaderSize + from*indexSlotSize)
		if e := unix.SyncFileRange(int(f.file.Fd()), off, int64(to-from)*indexSlotSize, unix.SYNC_FILE_RANGE_WRITE); e != nil {
			err = fmt.Errorf("write back index %s slots: %w", f.name, e)
		}
	}
	if to == len(*m) {
		f.mem.Store(nil)
	}
	return err
}

func (f *indexFile) flush() error {
	if !f.dirty.Swap(false) {
		return nil
	}
	if err := unix.Msync(f.data, unix.MS_SYNC); err != nil {
		f.dirty.Store(true)
		return fmt.Errorf("msync index %s: %w", f.name, err)
	}
	return nil
}

// writeBackEntries starts the write-back of the entries added since it last ran,
// without waiting and without making them durable (flush does that). Entries are
// only ever appended, so writing them as they come costs no extra disk writes,
// while leaving them for the IndexFlushInterval's msync, or for the kernel, which
// writes back a whole dirty file once it is 30 s old, sent tens of MB at once
// ahead of raft's fsyncs. The hash slot table is not in the mapping while the file
// is written (mem); writeOutSlots writes it once the file is full.
func (f *indexFile) writeBackEntries() error {
	n := min(f.count(), f.maxEntries)
	if n <= f.startedEntries {
		f.startedEntries = min(f.startedEntries, n) // cut back
		return nil
	}
	from, to := int64(f.entryPos(f.startedEntries)), int64(f.entryPos(n))
	if err := unix.SyncFileRange(int(f.file.Fd()), from, to-from, unix.SYNC_FILE_RANGE_WRITE); err != nil {
		return fmt.Errorf("write back index %s entries: %w", f.name, err)
	}
	f.startedEntries = n
	return nil
}

func (f *indexFile) close() {
	_ = f.data.Unmap()
	_ = f.file.Close()
}

func (f *indexFile) destroy() error {
	f.close()
	if err := os.Remove(f.path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove index %s: %w", f.name, err)
	}
	return nil
}

// indexKeyHash is Java's indexKeyHashMethod over "topic#key": String.hashCode (UTF-16
// code units) made non-negative with Math.abs, 0 for MIN_VALUE. It hashes the parts
// in sequence so that no key string is built.
func indexKeyHash(topic, key string) int32 {
	h := javaHashAppend(0, topic)
	h = 31*h + '#'
	return nonNegativeHash(javaHashAppend(h, key))
}

// nonNegativeHash is Java's Math.abs with MIN_VALUE (which abs leaves negative) mapped to 0.
func nonNegativeHash(h int32) int32 {
	if h < 0 {
		h = -h
	}
	if h < 0 {
		h = 0
	}
	return h
}

func javaHashAppend(h int32, s string) int32 {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x80 {
			h = 31*h + int32(c)
			continue
		}
		// Non-ASCII: fall back to the UTF-16 definition for the rest.
		return int32(int64(h)*pow31(utf16Len(s[i:])) + TagsCode(s[i:]))
	}
	return h
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func pow31(n int) int64 {
	var p int32 = 1
	for range n {
		p *= 31
	}
	return int64(p)
}
