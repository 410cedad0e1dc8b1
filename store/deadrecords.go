package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// deadRecords are the CommitLog positions of message records Apply refused in an
// entry-log store (decision 0016): the record stays, takes no queue offset, and the
// reput passes over it. They are rare (a topic deleted before its message committed,
// a lost schedule compare-and-set, a transaction already decided).
//
// The set is durable in deadRecordsFile, rewritten by the store's flush before the
// checkpoint when it changed: the ConsumeQueues a checkpoint covers were dispatched
// with it, and a snapshot of them carries it. Positions above the apply checkpoint
// are named again when raft replays their entries.
//
// Concurrency: Apply adds while the reput reads; mu guards both.
type deadRecords struct {
	mu    sync.Mutex
	pos   []PhysicalOffset // sorted
	dirty bool
}

// deadRecordsFile holds the set: "RRDR" | count u32 | count × offset u64 | crc32c u32
// (of everything before it), big-endian.
const deadRecordsFile = "deadrecords"

var deadRecordsMagic = []byte("RRDR")

func (d *deadRecords) add(off PhysicalOffset) {
	d.mu.Lock()
	defer d.mu.Unlock()
	i, found := slices.BinarySearch(d.pos, off)
	if !found {
		d.pos = slices.Insert(d.pos, i, off)
		d.dirty = true
	}
}

func (d *deadRecords) has(off PhysicalOffset) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.pos) == 0 {
		return false
	}
	_, found := slices.BinarySearch(d.pos, off)
	return found
}

// dropFrom forgets every position at or above off (a rewind or a cut).
func (d *deadRecords) dropFrom(off PhysicalOffset) {
	d.mu.Lock()
	defer d.mu.Unlock()
	i, _ := slices.BinarySearch(d.pos, off)
	if i < len(d.pos) {
		d.pos = d.pos[:i]
		d.dirty = true
	}
}

// dropBelow forgets every position below off (retention removed their segments).
func (d *deadRecords) dropBelow(off PhysicalOffset) {
	d.mu.Lock()
	defer d.mu.Unlock()
	i, _ := slices.BinarySearch(d.pos, off)
	if i > 0 {
		d.pos = slices.Delete(d.pos, 0, i)
		d.dirty = true
	}
}

// below returns a copy of the positions below off.
func (d *deadRecords) below(off PhysicalOffset) []PhysicalOffset {
	d.mu.Lock()
	defer d.mu.Unlock()
	i, _ := slices.BinarySearch(d.pos, off)
	return slices.Clone(d.pos[:i])
}

func (d *deadRecords) replace(pos []PhysicalOffset) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pos = slices.Clone(pos)
	slices.Sort(d.pos)
	d.dirty = true
}

// persist rewrites the file when the set changed since the last persist.
func (d *deadRecords) persist(dir string) error {
	d.mu.Lock()
	if !d.dirty {
		d.mu.Unlock()
		return nil
	}
	b := make([]byte, 0, 12+8*len(d.pos))
	b = append(b, deadRecordsMagic...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(d.pos)))
	for _, p := range d.pos {
		b = binary.BigEndian.AppendUint64(b, uint64(p))
	}
	d.dirty = false
	d.mu.Unlock()
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	if err := writeFileAtomic(dir, deadRecordsFile, b); err != nil {
		d.mu.Lock()
		d.dirty = true
		d.mu.Unlock()
		return fmt.Errorf("store: dead records: %w", err)
	}
	return nil
}

// loadDeadRecords reads dir's set; none is an empty set.
func loadDeadRecords(dir string) (*deadRecords, error) {
	b, err := os.ReadFile(filepath.Join(dir, deadRecordsFile))
	if errors.Is(err, os.ErrNotExist) {
		return &deadRecords{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: read dead records: %w", err)
	}
	if len(b) < 12 || string(b[:4]) != string(deadRecordsMagic) {
		return nil, corruptf("%s: %d bytes, bad magic", deadRecordsFile, len(b))
	}
	n := binary.BigEndian.Uint32(b[4:])
	if uint64(len(b)) != 12+8*uint64(n) {
		return nil, corruptf("%s: %d bytes for %d positions", deadRecordsFile, len(b), n)
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return nil, corruptf("%s: crc mismatch", deadRecordsFile)
	}
	d := &deadRecords{pos: make([]PhysicalOffset, n)}
	for i := range d.pos {
		d.pos[i] = PhysicalOffset(binary.BigEndian.Uint64(body[8+8*i:]))
	}
	if !slices.IsSorted(d.pos) {
		return nil, corruptf("%s: positions not sorted", deadRecordsFile)
	}
	return d, nil
}
