package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/netip"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// EntryLog is a raft log kept in CommitLog form: step 1 of decision 0016 (the single
// write). Each entry is an entry record (a RocketMQ record in RaftEntryTopic whose body
// holds the index, term, type and data) followed by the entry's message records, at
// the CommitLog's tail. PHYSICALOFFSET is the position a record lands at; QUEUEOFFSET is
// written as 0, because queue offsets stay with Apply (decision 0016); STORETIMESTAMP is
// the entry's. Since every byte is a function of the entries appended, replicas fed
// the same log hold the same bytes.
//
// raftlog's commitlog LogStore kind (step 2, which no configuration selects yet) is
// its only user; step 3 makes it the Store's CommitLog.
//
// Durability: Append writes (one pwrite per segment it touches); Sync makes
// everything appended durable (fdatasync of the segments written since the last
// one). A crash loses at most what was appended after the last Sync. Open drops a
// torn tail: an entry missing records, or records that fail the CommitLog's checks
// (checkRecord), is cut with everything after it.
//
// Concurrency: safe for concurrent use; one mutex orders every call.
type EntryLog struct {
	mu     sync.Mutex
	syncMu sync.Mutex
	cl     *commitLog
	first  uint64           // raft index of pos[0]; meaningless while pos is empty
	pos    []PhysicalOffset // pos[i]: where entry first+i's entry record starts
	// floor is the durable first-index marker (entryFloorFile): entries below it are
	// forgotten, and open skips them. It only rises, except when a snapshot replaces
	// the whole log (reset).
	floor uint64
	// floorAt, kept with floor, is where open starts its scan (decision 0019): the
	// entry record of an entry at or below the floor, so every entry at or above the
	// floor starts after it. 0 (a log written before decision 0019, or just reset)
	// scans from the first segment.
	floorAt PhysicalOffset
	// scannedFrom is where open's scan started: the records below it were not
	// checked (the Store's scrub does, scrub.go).
	scannedFrom PhysicalOffset
	// owned: the log has its own directory and closes its CommitLog. A Store's entry
	// log (Config.RaftEntryLog) leaves that to the Store.
	owned bool
	// onReset is OnReset's function (nil: none).
	onReset func(next uint64)

	// Scratch reused by Append (no allocation per entry in steady state).
	hdr  []byte
	recs [][]byte
	out  []AppendResult
}

// LogEntry is one raft entry as the EntryLog stores it.
type LogEntry struct {
	Index, Term uint64
	Type        uint8  // raft.LogType
	Data        []byte // opaque: the whole entry for non-message entries, else what the batch carries besides its records
	// Records are encoded CommitLog records (AppendMessage). Get returns them as
	// stored: PHYSICALOFFSET and STORETIMESTAMP patched, QUEUEOFFSET 0.
	Records        [][]byte
	StoreTimestamp int64
}

// RaftEntryTopic is the system topic of entry records. Nothing dispatches it.
const RaftEntryTopic = "RMQ_SYS_RAFT_ENTRY"

var (
	// ErrEntryNotFound is Get of an index the log does not hold.
	ErrEntryNotFound = errors.New("store: raft entry not in the entry log")
	// ErrEntryGap is Append of entries that do not continue the log.
	ErrEntryGap = errors.New("store: raft entries do not follow the log")
)

// Entry record body: "RFTE" | version | index u64 | term u64 | type u8 | records u32 |
// records' CRC-32C u32 | data.
//
// The records' CRC covers every byte of the entry's message records as stored, except
// the three fields the log fills in (QUEUEOFFSET, PHYSICALOFFSET, STORETIMESTAMP),
// which recovery checks against their known values instead (0, the position, the
// entry's timestamp). RocketMQ's own BODYCRC covers only a message's body: without
// this, a torn write in a record's properties would pass recovery (chaos D3 found it).
const (
	entryMagic      = "RFTE"
	entryVersion    = 2
	entryBodyFixed  = 4 + 1 + 8 + 8 + 1 + 4 + 4
	maxEntryRecords = 1 << 24 // bounds a corrupt count
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcZeros stands in for the fields the log fills in. A package variable, not a
// local: a local array escapes through crc32.Update and cost every stored
// message an allocation on every node.
var crcZeros [16]byte

// recordsCRC extends crc over rec with the fields the log fills in read as zero.
func recordsCRC(crc uint32, rec []byte) uint32 {
	zeros := crcZeros[:]
	ts := storeTimestampPos(rec)
	crc = crc32.Update(crc, castagnoli, rec[:posQueueOffset])
	crc = crc32.Update(crc, castagnoli, zeros[:16]) // QUEUEOFFSET, PHYSICALOFFSET
	crc = crc32.Update(crc, castagnoli, rec[posPhysicalOffset+8:ts])
	crc = crc32.Update(crc, castagnoli, zeros[:8]) // STORETIMESTAMP
	return crc32.Update(crc, castagnoli, rec[ts+8:])
}

// checkFilledIn reports whether the fields the log fills in hold what it wrote.
func checkFilledIn(rec []byte, off PhysicalOffset, ts int64) error {
	switch {
	case QueueOffsetOf(rec) != 0:
		return corruptf("record at %d: QUEUEOFFSET %d in the entry log", off, QueueOffsetOf(rec))
	case StoreTimestampOf(rec) != ts:
		return corruptf("record at %d: STORETIMESTAMP %d, its entry's is %d", off, StoreTimestampOf(rec), ts)
	}
	return nil
}

// entryHost is the born and store host of entry records: no client sent them.
var entryHost = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)

// OpenEntryLog opens (or creates) the entry log in dir, whose segments are segSize
// bytes, finds its entries and cuts a torn tail. Leading message records whose entry
// record is gone (retention removed the segment it started in) are skipped.
func OpenEntryLog(dir string, segSize int64, log hclog.Logger) (*EntryLog, error) {
	if segSize < minSegmentSize {
		return nil, fmt.Errorf("store: entry log segment size %d, minimum %d", segSize, minSegmentSize)
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	cl := newCommitLog(dir, segSize, false, log)
	if err := cl.mfq.load(); err != nil {
		cl.close()
		return nil, err
	}
	l, err := openEntryLogOn(cl, log)
	if err != nil {
		cl.close()
		return nil, err
	}
	l.owned = true
	return l, nil
}

// openEntryLogOn opens the entry log kept in cl, whose segments are loaded: its own
// directory (OpenEntryLog), or a Store's CommitLog (Config.RaftEntryLog).
func openEntryLogOn(cl *commitLog, log hclog.Logger) (*EntryLog, error) {
	cl.writeThrough = true // pwrite and fdatasync: see commitLog.writeThrough
	l := &EntryLog{cl: cl}
	floor, at, err := readEntryFloor(cl.dir)
	if err != nil {
		return nil, err
	}
	l.floor, l.floorAt = floor, at
	if err := l.recover(log); err != nil {
		return nil, err
	}
	return l, nil
}

// recover rebuilds pos by scanning the segments from the floor's entry (scanStart),
// cuts the log after its last whole entry and makes the last segments durable (a
// process crash can leave written, unsynced entries in the page cache; raft must not
// count them before they are on disk).
func (l *EntryLog) recover(log hclog.Logger) error {
	files := l.cl.mfq.snapshot()
	if len(files) == 0 {
		return nil
	}
	off := l.scanStart(files, log)
	l.scannedFrom = off
	validEnd := off // end of the last whole entry
	var (
		entryStart    PhysicalOffset
		want          uint32 // records still missing from the entry being read
		inEntry, keep bool   // keep: the entry being read is at or above the floor
		skipped       bool   // entries below the floor were passed over
		stopErr       error
		head          entryHeader // of the entry being read
		crc           uint32      // of its records read so far
	)
	for {
		f := l.cl.mfq.find(int64(off))
		if f == nil {
			break
		}
		rest := f.data[int64(off)-f.start:]
		size, kind, err := checkRecord(rest, off)
		if err != nil {
			stopErr = err
			break
		}
		if kind == recordEnd {
			break
		}
		if kind == recordBlank {
			off = PhysicalOffset(f.end())
			continue
		}
		h, isEntry, err := entryHeaderOf(rest[:size])
		switch {
		case err != nil:
			stopErr = fmt.Errorf("entry record at %d: %w", off, err)
		case inEntry && isEntry:
			stopErr = corruptf("entry record at %d inside an entry that misses %d records", off, want)
		case !inEntry && !isEntry && len(l.pos) > 0:
			stopErr = corruptf("message record at %d outside any entry", off)
		case isEntry && len(l.pos) > 0 && h.index != l.first+uint64(len(l.pos)):
			stopErr = corruptf("entry record at %d has index %d, want %d", off, h.index, l.first+uint64(len(l.pos)))
		case isEntry && len(l.pos) == 0 && h.index >= l.floor && skipped && h.index != l.floor:
			stopErr = corruptf("entry record at %d has index %d; the log was emptied to start at %d", off, h.index, l.floor)
		case isEntry && h.records == 0 && h.crc != 0:
			stopErr = corruptf("entry %d has no records and a records' CRC %08x", h.index, h.crc)
		case inEntry && !isEntry:
			if stopErr = checkFilledIn(rest[:size], off, head.ts); stopErr == nil {
				crc = recordsCRC(crc, rest[:size])
				if want == 1 && crc != head.crc {
					stopErr = corruptf("entry %d: its records' CRC is %08x, its entry record says %08x", head.index, crc, head.crc)
				}
			}
		}
		if stopErr != nil {
			break
		}
		off += PhysicalOffset(size)
		switch {
		case isEntry:
			entryStart, want, inEntry = off-PhysicalOffset(size), h.records, true
			head, crc = h, 0
			keep = h.index >= l.floor
			if keep && len(l.pos) == 0 {
				l.first = h.index
			}
		case inEntry:
			want--
		default:
			validEnd = off // an orphan record before the first entry
			continue
		}
		if want == 0 {
			if keep {
				l.pos = append(l.pos, entryStart)
			} else {
				skipped = true
			}
			validEnd, inEntry = off, false
		}
	}
	if stopErr != nil || inEntry {
		// Only what the last Append wrote after the last Sync can be torn, and one
		// Append spans at most the segment it starts in and the next (an entry is far
		// smaller than a segment). Bad bytes before that are corruption of entries
		// raft may have counted: refuse to open rather than cut them away.
		if seg, last := l.cl.segmentStart(validEnd), lastWrittenSegment(files); last > seg+l.cl.segSize {
			return fmt.Errorf("%w: entry log broken at %d in segment %s, %d segments before its last written one: %v",
				ErrCorrupt, validEnd, fileName(seg), (last-seg)/l.cl.segSize, stopErr)
		}
		log.Warn("cutting entry log tail", "offset", validEnd, "entries", len(l.pos), "reason", stopErr, "torn_entry", inEntry)
	}
	if err := l.cl.cut(validEnd); err != nil {
		return fmt.Errorf("cut entry log at %d: %w", validEnd, err)
	}
	files = l.cl.mfq.snapshot()
	for _, f := range files[max(0, len(files)-2):] {
		f.flushedPosition.Store(0)
	}
	if _, err := l.cl.flush(); err != nil {
		return fmt.Errorf("sync entry log: %w", err)
	}
	return nil
}

// scanStart is where recover starts: floorAt when the record there is an entry record
// that passes every check, else the first segment. Everything before floorAt is
// forgotten entries and the messages they carried, which raft never reads again; the
// CommitLog's recovery checks its own tail segments (decision 0019). A floorAt that
// does not hold an entry record (the entry it names was lost in a crash before its
// sync, or the file was damaged) falls back to the scan of every segment, which is
// always right, only slower.
func (l *EntryLog) scanStart(files []*mappedFile, log hclog.Logger) PhysicalOffset {
	first := PhysicalOffset(files[0].start)
	if l.floorAt <= first {
		return first
	}
	// The first append after the log emptied records where it started writing, and
	// its entry record lands after the blank padding when it did not fit there.
	for at, hops := l.floorAt, 0; hops < 2; hops++ {
		f := l.cl.mfq.find(int64(at))
		if f == nil {
			break
		}
		rest := f.data[int64(at)-f.start:]
		size, kind, err := checkRecord(rest, at)
		if err == nil && kind == recordBlank {
			at = PhysicalOffset(f.end())
			continue
		}
		if err == nil && kind == recordData {
			if h, isEntry, err := entryHeaderOf(rest[:size]); err == nil && isEntry && h.index <= l.floor {
				return l.floorAt
			}
		}
		break
	}
	log.Warn("entry log floor position holds no entry record at or below the floor; scanning every segment",
		"floor", l.floor, "position", l.floorAt, "first_segment", first)
	return first
}

// lastWrittenSegment is the start of the last segment whose first record slot is
// not zero. A segment the allocator created ahead and nothing wrote is all zeros.
func lastWrittenSegment(files []*mappedFile) int64 {
	for i := len(files) - 1; i >= 0; i-- {
		if lastNonZero(files[i].data[:MinBlankRecord]) > 0 {
			return files[i].start
		}
	}
	return -1
}

// entryHeader is the decoded fixed part of an entry record's body.
type entryHeader struct {
	index, term uint64
	typ         uint8
	records     uint32
	crc         uint32 // of the records (recordsCRC)
	ts          int64  // the entry record's STORETIMESTAMP, which its records share
	data        []byte // aliases the record
}

// entryHeaderOf decodes rec's entry header when rec is an entry record (isEntry false,
// nil error otherwise). rec has passed checkRecord.
func entryHeaderOf(rec []byte) (h entryHeader, isEntry bool, err error) {
	v, err := ViewRecord(rec)
	if err != nil {
		return h, false, err
	}
	if string(v.Topic()) != RaftEntryTopic {
		return h, false, nil
	}
	b := v.bodyBytes()
	if len(b) < entryBodyFixed || string(b[:4]) != entryMagic {
		return h, true, corruptf("entry record body of %d bytes does not start with %q", len(b), entryMagic)
	}
	if b[4] != entryVersion {
		return h, true, corruptf("entry record version %d, this build reads %d", b[4], entryVersion)
	}
	be := binary.BigEndian
	h = entryHeader{index: be.Uint64(b[5:]), term: be.Uint64(b[13:]), typ: b[21], records: be.Uint32(b[22:]), crc: be.Uint32(b[26:]),
		ts: StoreTimestampOf(rec), data: b[entryBodyFixed:]}
	if h.records > maxEntryRecords {
		return h, true, corruptf("entry %d claims %d records", h.index, h.records)
	}
	return h, true, nil
}

// appendEntryRecord encodes e's entry record into dst.
func appendEntryRecord(dst []byte, e *LogEntry) ([]byte, error) {
	body := make([]byte, entryBodyFixed, entryBodyFixed+len(e.Data))
	copy(body, entryMagic)
	body[4] = entryVersion
	be := binary.BigEndian
	be.PutUint64(body[5:], e.Index)
	be.PutUint64(body[13:], e.Term)
	body[21] = e.Type
	be.PutUint32(body[22:], uint32(len(e.Records)))
	var crc uint32
	for _, r := range e.Records {
		crc = recordsCRC(crc, r)
	}
	be.PutUint32(body[26:], crc)
	body = append(body, e.Data...)
	m := Message{
		Topic: RaftEntryTopic, BornTimestamp: e.StoreTimestamp, StoreTimestamp: e.StoreTimestamp,
		BornHost: entryHost, StoreHost: entryHost, Body: body,
	}
	return AppendMessage(dst, &m)
}

// SegmentSize is the size of the log's segments: no record can be larger (minus
// MinBlankRecord).
func (l *EntryLog) SegmentSize() int64 { return l.cl.segSize }

// FirstIndex is the first entry held, 0 when the log is empty (raft's LogStore rule).
func (l *EntryLog) FirstIndex() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pos) == 0 {
		return 0
	}
	return l.first
}

// LastIndex is the last entry held, 0 when the log is empty.
func (l *EntryLog) LastIndex() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pos) == 0 {
		return 0
	}
	return l.first + uint64(len(l.pos)) - 1
}

// Append writes es at the tail. Their indexes must be consecutive and, unless the log
// is empty, follow LastIndex. On any error nothing of es stays in the log.
func (l *EntryLog) Append(es []LogEntry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(es) == 0 {
		return nil
	}
	if n := len(l.pos); n > 0 && es[0].Index != l.first+uint64(n) {
		return fmt.Errorf("%w: first appended index %d, log ends at %d", ErrEntryGap, es[0].Index, l.first+uint64(n)-1)
	}
	start, n0, first0 := l.cl.maxOffset(), len(l.pos), l.first
	if n0 == 0 {
		// The first entry of an emptied log: whatever the segments still hold
		// below it must stay forgotten after a restart, so the floor moves first.
		if err := l.raiseFloor(es[0].Index, start); err != nil {
			return err
		}
		l.first = es[0].Index
	}
	for i := range es {
		e := &es[i]
		err := l.appendOne(e, i > 0 && e.Index != es[i-1].Index+1)
		if err == nil && i == len(es)-1 {
			err = l.cl.writePending()
		}
		if err != nil {
			l.pos, l.first = l.pos[:n0], first0
			if cerr := l.cl.cut(start); cerr != nil {
				return errors.Join(err, fmt.Errorf("undo append at %d: %w", start, cerr))
			}
			return err
		}
	}
	return nil
}

// appendOne writes one entry (gap: its index does not follow the previous one).
func (l *EntryLog) appendOne(e *LogEntry, gap bool) error {
	if gap {
		return fmt.Errorf("%w: index %d does not follow the entry before it", ErrEntryGap, e.Index)
	}
	if len(e.Records) > maxEntryRecords {
		return fmt.Errorf("%w: entry %d has %d records, at most %d", ErrMessageIllegal, e.Index, len(e.Records), maxEntryRecords)
	}
	var err error
	if l.hdr, err = appendEntryRecord(l.hdr[:0], e); err != nil {
		return fmt.Errorf("entry %d: %w", e.Index, err)
	}
	l.recs = append(append(l.recs[:0], l.hdr), e.Records...)
	out, err := l.cl.appendBatch(l.recs, e.StoreTimestamp, nil, l.out[:0])
	l.out = out[:0]
	clear(l.recs) // do not pin the caller's records
	if err != nil {
		return fmt.Errorf("entry %d: %w", e.Index, err)
	}
	l.pos = append(l.pos, out[0].PhysicalOffset)
	return nil
}

// Sync makes every appended entry durable. The fdatasync runs without the lock, so
// Apply's Positions of committed entries does not wait behind the sync of later ones;
// syncs are serialised among themselves (syncMu) so flushed positions only grow.
func (l *EntryLog) Sync() error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	_, err := l.cl.flush()
	return err
}

// Get returns entry index with its data and records copied out of the log.
func (l *EntryLog) Get(index uint64) (LogEntry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var e LogEntry
	err := l.walkEntry(index, func(h entryHeader, rec []byte) {
		e = LogEntry{Index: h.index, Term: h.term, Type: h.typ, StoreTimestamp: StoreTimestampOf(rec)}
		if len(h.data) > 0 {
			e.Data = append([]byte(nil), h.data...)
		}
		e.Records = make([][]byte, 0, h.records)
	}, func(_ PhysicalOffset, rec []byte) {
		e.Records = append(e.Records, append([]byte(nil), rec...))
	})
	if err != nil {
		return LogEntry{}, err
	}
	return e, nil
}

// Positions appends to dst where entry index's message records are, in order (no
// copy: Apply of the single write checks them against its own running offset and
// dispatches them, decision 0016 step 3).
func (l *EntryLog) Positions(index uint64, dst []PhysicalOffset) ([]PhysicalOffset, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.walkEntry(index, func(entryHeader, []byte) {}, func(off PhysicalOffset, _ []byte) {
		dst = append(dst, off)
	})
	return dst, err
}

// walkEntry finds entry index, calls head with its decoded header and entry record,
// then each with every one of its message records in order, blank padding skipped.
// The byte slices are the mapping's, valid only during the call. Caller holds l.mu.
func (l *EntryLog) walkEntry(index uint64, head func(h entryHeader, rec []byte), each func(off PhysicalOffset, rec []byte)) error {
	if len(l.pos) == 0 || index < l.first || index-l.first >= uint64(len(l.pos)) {
		return fmt.Errorf("%w: index %d", ErrEntryNotFound, index)
	}
	off := l.pos[index-l.first]
	rec, next, release, err := l.cl.recordAt(off)
	if err != nil {
		return fmt.Errorf("entry %d: %w", index, err)
	}
	h, isEntry, err := entryHeaderOf(rec)
	if err == nil && (!isEntry || h.index != index) {
		err = corruptf("record at %d is not entry %d's entry record", off, index)
	}
	if err != nil {
		release()
		return fmt.Errorf("entry %d: %w", index, err)
	}
	head(h, rec)
	release()
	for n := uint32(0); n < h.records; {
		rec, nxt, release, err := l.cl.recordAt(next)
		if err != nil {
			return fmt.Errorf("entry %d, record %d: %w", index, n, err)
		}
		if _, magic, _ := RecordSize(rec); magic != MagicBlank {
			each(next, rec)
			n++
		}
		release()
		next = nxt
	}
	return nil
}

// ForgetBelow forgets every entry whose entry record starts below off: what retention
// must do when it deletes the segments below off (decision 0016 step 3).
func (l *EntryLog) ForgetBelow(off PhysicalOffset) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.forgetBelowLocked(off)
}

func (l *EntryLog) forgetBelowLocked(off PhysicalOffset) error {
	n := 0
	for n < len(l.pos) && l.pos[n] < off {
		n++
	}
	return l.forgetBeforeLocked(l.first + uint64(n))
}

// TruncateFrom removes entry index and every entry after it (raft's suffix
// DeleteRange: a follower's conflicting, uncommitted tail). The cut is durable when it
// returns. An index past the end changes nothing.
func (l *EntryLog) TruncateFrom(index uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	// A sync running alongside could otherwise record the old, higher write
	// position as flushed after the cut lowered it, and the bytes appended there
	// next would never be synced.
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if len(l.pos) == 0 || (index >= l.first && index-l.first >= uint64(len(l.pos))) {
		return nil
	}
	keep := 0
	if index > l.first {
		keep = int(index - l.first)
	}
	if err := l.cl.cut(l.pos[keep]); err != nil {
		return fmt.Errorf("truncate entry log from %d: %w", index, err)
	}
	l.pos = l.pos[:keep]
	return nil
}

// ForgetBefore drops the entries below index from the log's index (raft's prefix
// DeleteRange after a snapshot). Their bytes stay until retention removes their
// segments, as messages do; Get no longer returns them, before or after a restart
// (the floor is durable).
func (l *EntryLog) ForgetBefore(index uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.forgetBeforeLocked(index)
}

func (l *EntryLog) forgetBeforeLocked(index uint64) error {
	if len(l.pos) == 0 || index <= l.first {
		return nil
	}
	drop := min(index-l.first, uint64(len(l.pos)))
	// The new first entry's record, or (everything forgotten) the last one's: both
	// start before any entry at or above the new floor.
	if err := l.raiseFloor(index, l.pos[min(drop, uint64(len(l.pos))-1)]); err != nil {
		return err
	}
	l.pos = append([]PhysicalOffset(nil), l.pos[drop:]...)
	l.first = index
	return nil
}

// Unsynced is how many appended bytes Sync has not made durable yet.
func (l *EntryLog) Unsynced() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(l.cl.maxOffset() - l.cl.flushedOffset())
}

// entryFloorFile holds the floor and floorAt: two big-endian uint64s. A file of 8
// bytes (written before decision 0019) holds the floor alone, and open then scans
// from the first segment until the floor next moves.
const entryFloorFile = "first-index"

func readEntryFloor(dir string) (floor uint64, at PhysicalOffset, err error) {
	b, err := os.ReadFile(filepath.Join(dir, entryFloorFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return 0, 0, nil
	case err != nil:
		return 0, 0, fmt.Errorf("read entry log floor: %w", err)
	case len(b) == 8:
		return binary.BigEndian.Uint64(b), 0, nil
	case len(b) != 16:
		return 0, 0, corruptf("entry log floor file %s has %d bytes, want 16 (or 8)", entryFloorFile, len(b))
	}
	return binary.BigEndian.Uint64(b), PhysicalOffset(binary.BigEndian.Uint64(b[8:])), nil
}

// writeFloor makes (index, at) the durable floor: written to a temporary file, synced,
// renamed over the old one, and the directory synced.
func (l *EntryLog) writeFloor(index uint64, at PhysicalOffset) error {
	b := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, index), uint64(at))
	if err := writeFileAtomic(l.cl.dir, entryFloorFile, b); err != nil {
		return fmt.Errorf("entry log floor %d at %d: %w", index, at, err)
	}
	l.floor, l.floorAt = index, at
	return nil
}

// raiseFloor makes index the durable floor when it is above the current one, with at
// (the entry record of entry index, or of the last entry below it) as floorAt. Of an
// equal floor it only records a floorAt not yet known (the first append after reset).
func (l *EntryLog) raiseFloor(index uint64, at PhysicalOffset) error {
	if index < l.floor || (index == l.floor && l.floorAt != 0) {
		return nil
	}
	return l.writeFloor(index, at)
}

// Close unmaps the segments (a Store's entry log: the Store does). The log must not
// be used after.
func (l *EntryLog) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.owned {
		l.cl.close()
	}
}

// tailLock orders a Store's reset of the CommitLog with this log's appends and
// syncs (Store.ResetFromEntries): it holds both locks.
type tailLock struct{ l *EntryLog }

func (t tailLock) Lock() {
	t.l.mu.Lock()
	t.l.syncMu.Lock()
}

func (t tailLock) Unlock() {
	t.l.syncMu.Unlock()
	t.l.mu.Unlock()
}

// reset empties the index after a snapshot replaced the CommitLog: the next entry
// raft appends is floor (the snapshot's index + 1), and the entries the image holds
// stay forgotten after a restart. The floor may go down here, unlike anywhere else:
// the log it described is gone. Caller holds l.mu.
func (l *EntryLog) reset(floor uint64) error {
	// No entry record is known yet: floorAt 0 until the first append records its own.
	if err := l.writeFloor(floor, 0); err != nil {
		return err
	}
	l.first, l.pos = 0, nil
	if l.onReset != nil {
		l.onReset(floor)
	}
	return nil
}

// OnReset installs fn, told the next index after a snapshot emptied the log
// (raftlog lowers what it counts as durable).
func (l *EntryLog) OnReset(fn func(next uint64)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onReset = fn
}
