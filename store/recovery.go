package store

import (
	"fmt"
)

// recoveryTailSegments is how many trailing segments are scanned when there is no
// checkpoint to start from (RocketMQ scans the last three files the same way).
const recoveryTailSegments = 3

// scanRecords walks the records of b, which starts at a record boundary at CommitLog
// offset base and runs to the end of its segment, and returns where the valid records
// end. It is a pure function of its input (FuzzRecoveryScan drives it).
//
// A record is valid when its TOTALSIZE fits in b, it is a message whose structure adds
// up (ViewRecord), whose BODYCRC matches, whose PHYSICALOFFSET is its own offset
// (stale bytes of an earlier, cut record fail this) and which leaves either nothing or
// room for a blank record after it; or it is a blank record that runs exactly to the
// end of b, which ends the segment (validEnd = base+len(b)).
//
// err is nil when the scan stopped at a clean end: the end of b, a blank record, or a
// zero TOTALSIZE (never-written space). Otherwise it wraps ErrCorrupt or ErrShortBuffer,
// names the offset and says why; validEnd is then the start of the bad record.
// Invariant: base <= validEnd <= base+len(b), and validEnd is a record boundary.
func scanRecords(b []byte, base PhysicalOffset) (validEnd PhysicalOffset, err error) {
	pos := 0
	for pos < len(b) {
		off := base + PhysicalOffset(pos)
		size, kind, err := checkRecord(b[pos:], off)
		switch {
		case err != nil, kind == recordEnd:
			return off, err
		case kind == recordBlank:
			return base + PhysicalOffset(len(b)), nil
		}
		pos += size
	}
	return base + PhysicalOffset(len(b)), nil
}

// recordKind is what checkRecord found.
type recordKind int

const (
	recordEnd   recordKind = iota // never-written space (or nothing left): the records stop here
	recordBlank                   // the blank padding record that ends the segment
	recordData                    // a message record that passed every check
)

// checkRecord checks the record at the start of rest, which runs to the end of its
// segment, at CommitLog offset off, by scanRecords' rules, and returns the record's
// size when it is a message. A nil error with recordEnd is a clean end; an error
// (ErrCorrupt or ErrShortBuffer, naming off) means the bytes at off are not a record.
func checkRecord(rest []byte, off PhysicalOffset) (int, recordKind, error) {
	if len(rest) < MinBlankRecord {
		if lastNonZero(rest) == 0 {
			return 0, recordEnd, nil
		}
		return 0, recordEnd, fmt.Errorf("%w: %d trailing bytes at %d", ErrShortBuffer, len(rest), off)
	}
	size, magic, _ := RecordSize(rest)
	switch {
	case size == 0 && magic == 0:
		return 0, recordEnd, nil
	case magic == MagicBlank:
		if err := checkBlank(rest); err != nil {
			return 0, recordEnd, fmt.Errorf("blank record at %d: %w", off, err)
		}
		return len(rest), recordBlank, nil
	case magic != MagicV1 && magic != MagicV2:
		return 0, recordEnd, corruptf("record at %d: total size %d, magic %#x", off, size, uint32(magic))
	case size < fixedV1Size:
		return 0, recordEnd, corruptf("record at %d: total size %d below minimum %d", off, size, fixedV1Size)
	case int64(size) > int64(len(rest)):
		return 0, recordEnd, fmt.Errorf("%w: record at %d of %d bytes, %d left in segment", ErrShortBuffer, off, size, len(rest))
	}
	v, err := ViewRecord(rest[:size])
	if err != nil {
		return 0, recordEnd, fmt.Errorf("record at %d: %w", off, err)
	}
	if crc := BodyCRC(v.bodyBytes()); crc != v.bodyCRC() {
		return 0, recordEnd, corruptf("record at %d: body CRC %d, stored %d", off, crc, v.bodyCRC())
	}
	if p := v.physicalOffset(); p != off {
		return 0, recordEnd, corruptf("record at %d: PHYSICALOFFSET says %d", off, p)
	}
	if left := len(rest) - int(size); left > 0 && left < MinBlankRecord {
		return 0, recordEnd, corruptf("record at %d leaves %d bytes, too few for a blank record", off, left)
	}
	return int(size), recordData, nil
}

// recoverCommitLog finds the valid end of a freshly loaded CommitLog, cuts everything
// after it and sets every segment's write and flush positions. The argument is in
// doc.go ("Recovery"). clean says the previous run closed cleanly (no abort marker).
// checkedFrom is where its scan started: the records below it were not checked (the
// scrub does that, scrub.go).
func recoverCommitLog(c *commitLog, ck checkpoint, haveCk, clean bool) (end, checkedFrom PhysicalOffset, err error) {
	files := c.mfq.snapshot()
	if len(files) == 0 {
		if haveCk && ck.commitLogFlushed > ck.commitLogMin {
			return 0, 0, corruptf("checkpoint says CommitLog flushed to %d but no segment exists", ck.commitLogFlushed)
		}
		c.emptyStart.Store(c.segmentStart(ck.commitLogFlushed))
		return ck.commitLogFlushed, ck.commitLogFlushed, nil
	}
	first, last := files[0], files[len(files)-1]
	var scanFrom, committed PhysicalOffset
	if haveCk {
		committed = max(ck.commitLogFlushed, PhysicalOffset(first.start))
		if committed > PhysicalOffset(last.end()) {
			return 0, 0, corruptf("checkpoint says CommitLog flushed to %d, segments end at %d (segment files missing)", committed, last.end())
		}
		// Re-check the whole segment holding the flushed offset and the last
		// recoveryTailSegments segments, after a clean shutdown too (as RocketMQ's
		// checkCRCOnRecover): a bad record below the checkpoint is corruption of
		// acknowledged data (bit rot, a stray write) and must stop the node rather
		// than be served and replicated (chaos scenario D4).
		scanFrom = min(PhysicalOffset(c.segmentStart(committed)),
			PhysicalOffset(files[max(0, len(files)-recoveryTailSegments)].start))
		scanFrom = max(scanFrom, PhysicalOffset(first.start))
	} else {
		scanFrom = PhysicalOffset(files[max(0, len(files)-recoveryTailSegments)].start)
		committed = scanFrom
	}

	off := scanFrom
	var stopErr error
	for {
		f := c.mfq.find(int64(off))
		if f == nil {
			break // off is the end of the last segment
		}
		end, err := scanRecords(f.data[int64(off)-f.start:], off)
		if err == nil && int64(end) == f.end() {
			off = end
			continue
		}
		off, stopErr = end, err
		break
	}
	validEnd := off
	if validEnd < committed {
		seg := fileName(c.segmentStart(validEnd))
		if stopErr == nil {
			stopErr = fmt.Errorf("records end at %d", validEnd)
		}
		return 0, 0, fmt.Errorf("%w: committed region of segment %s broken at offset %d below checkpointed flush offset %d: %w",
			ErrCorrupt, seg, validEnd, committed, stopErr)
	}
	if stopErr != nil {
		c.log.Warn("cutting CommitLog tail", "offset", validEnd, "segment", fileName(c.segmentStart(validEnd)), "reason", stopErr, "clean", clean)
	}
	if err := c.cut(validEnd); err != nil {
		return 0, 0, fmt.Errorf("cut CommitLog at %d: %w", validEnd, err)
	}
	// After a crash the bytes above the checkpoint may sit only in the page cache:
	// mark them unflushed so that the next flush msyncs them before a checkpoint can
	// name them.
	for _, f := range c.mfq.snapshot() {
		if f.end() > int64(committed) {
			f.flushedPosition.Store(min(f.wrotePosition.Load(), max(0, int64(committed)-f.start)))
		}
	}
	return validEnd, scanFrom, nil
}
