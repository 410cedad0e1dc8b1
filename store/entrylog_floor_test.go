package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// Decision 0019: open scans the entry log from the floor's entry record, not from the
// first segment. These tests probe where a scan started with a flipped body bit: a
// record the scan reads fails its BODYCRC and open refuses (ErrCorrupt, as long as the
// record lies before the last two segments); a record it skips does not.

// floorLog appends entries 1..n over many small segments, syncs, forgets the entries
// below floor and closes; it returns the entries and where each entry record was.
func floorLog(t *testing.T, dir string, n, floor uint64) ([]LogEntry, []PhysicalOffset) {
	t.Helper()
	l := openTestEntryLog(t, dir)
	es := testEntries(t, 1, n, 1, 0)
	if err := l.Append(es); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	pos := append([]PhysicalOffset(nil), l.pos...)
	if floor > 1 {
		if err := l.ForgetBefore(floor); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	return es, pos
}

// flipRecordOf flips a body byte of entry e's first message record and returns a
// function that restores it.
func flipRecordOf(t *testing.T, dir string, e LogEntry, pos []PhysicalOffset) (restore func()) {
	t.Helper()
	if len(e.Records) == 0 {
		t.Fatalf("entry %d carries no records", e.Index)
	}
	// The first message record follows the entry record (blank padding aside, which
	// the test entries are small enough to avoid within a segment).
	l := openTestEntryLog(t, dir)
	defer l.Close()
	_, next, release, err := l.cl.recordAt(pos[e.Index-1])
	if err != nil {
		t.Fatal(err)
	}
	release()
	rec, _, release, err := l.cl.recordAt(next)
	if err != nil {
		t.Fatal(err)
	}
	orig := bytes.Clone(rec)
	release()
	if _, isEntry, _ := entryHeaderOf(orig); isEntry {
		t.Fatalf("record after entry %d's entry record is another entry record", e.Index)
	}
	flipped := bytes.Clone(orig)
	flipped[len(flipped)/2] ^= 0xff
	writeAt(t, dir, next, flipped)
	return func() { writeAt(t, dir, next, orig) }
}

// openLogged opens the entry log in dir with its warnings written to the returned buffer.
func openLogged(t *testing.T, dir string) (*EntryLog, *bytes.Buffer) {
	t.Helper()
	var logged bytes.Buffer
	l, err := OpenEntryLog(dir, testEntrySeg, hclog.New(&hclog.LoggerOptions{Output: &logged, Level: hclog.Warn}))
	if err != nil {
		t.Fatalf("open: %v (log: %s)", err, logged.String())
	}
	return l, &logged
}

func readFloorFile(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, entryFloorFile))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEntryLogOpenScansFromTheFloor(t *testing.T) {
	dir := t.TempDir()
	es, pos := floorLog(t, dir, 150, 60)
	if b := readFloorFile(t, dir); len(b) != 16 || binary.BigEndian.Uint64(b) != 60 || PhysicalOffset(binary.BigEndian.Uint64(b[8:])) != pos[59] {
		t.Fatalf("floor file %x, want floor 60 at entry 60's record %d", b, pos[59])
	}
	// Below the floor: not read, so open succeeds and serves the entries it keeps.
	restore := flipRecordOf(t, dir, es[1], pos)
	l := openTestEntryLog(t, dir)
	checkRange(t, l, 60, 150)
	checkEntry(t, l, es[59])
	checkEntry(t, l, es[149])
	l.Close()
	restore()

	// At or above the floor, well before the tail: read, and refused as before.
	e := es[64]
	if len(e.Records) == 0 {
		e = es[65]
	}
	if segs := (pos[149] - pos[e.Index-1]) / testEntrySeg; segs < 4 {
		t.Fatalf("entry %d is %d segments before the last entry, want at least 4", e.Index, segs)
	}
	restore = flipRecordOf(t, dir, e, pos)
	if l, err := OpenEntryLog(dir, testEntrySeg, nil); !errors.Is(err, ErrCorrupt) {
		if err == nil {
			l.Close()
		}
		t.Fatalf("open over a corrupt record of kept entry %d: %v, want ErrCorrupt", e.Index, err)
	}
	restore()
	l = openTestEntryLog(t, dir)
	defer l.Close()
	checkRange(t, l, 60, 150)
}

// A floor file of 8 bytes (written before decision 0019) scans every segment, and the
// next rise of the floor writes the position.
func TestEntryLogOldFloorFileScansEverySegment(t *testing.T) {
	dir := t.TempDir()
	es, pos := floorLog(t, dir, 150, 60)
	if err := os.WriteFile(filepath.Join(dir, entryFloorFile), binary.BigEndian.AppendUint64(nil, 60), 0o644); err != nil {
		t.Fatal(err)
	}
	restore := flipRecordOf(t, dir, es[1], pos)
	if l, err := OpenEntryLog(dir, testEntrySeg, nil); !errors.Is(err, ErrCorrupt) {
		if err == nil {
			l.Close()
		}
		t.Fatalf("open with an 8-byte floor file over a corrupt early record: %v, want ErrCorrupt (a whole scan)", err)
	}
	restore()
	l := openTestEntryLog(t, dir)
	checkRange(t, l, 60, 150)
	if err := l.ForgetBefore(70); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if b := readFloorFile(t, dir); len(b) != 16 || PhysicalOffset(binary.BigEndian.Uint64(b[8:])) != pos[69] {
		t.Fatalf("floor file after a rise = %x, want 16 bytes naming entry 70's record %d", b, pos[69])
	}
	if err := os.WriteFile(filepath.Join(dir, entryFloorFile), []byte{1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenEntryLog(dir, testEntrySeg, nil); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), entryFloorFile) {
		t.Fatalf("open with a 3-byte floor file: %v, want ErrCorrupt naming %s", err, entryFloorFile)
	}
}

// A position that does not hold an entry record at or below the floor is not trusted:
// open warns and scans every segment, and finds the same entries.
func TestEntryLogBadFloorPositionScansEverySegment(t *testing.T) {
	dir := t.TempDir()
	es, pos := floorLog(t, dir, 150, 60)
	end := pos[149] + 4096
	l := openTestEntryLog(t, dir)
	msg, err := l.Positions(61, nil) // entry 61 carries records (testEntries)
	l.Close()
	if err != nil || len(msg) == 0 {
		t.Fatalf("Positions(61) = %v, %v", msg, err)
	}
	for name, at := range map[string]PhysicalOffset{
		"inside a record":          pos[59] + 7,
		"a message record":         msg[0],
		"an entry above the floor": pos[99],
		"past the last segment":    end * 10,
	} {
		t.Run(name, func(t *testing.T) {
			b := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, 60), uint64(at))
			if err := os.WriteFile(filepath.Join(dir, entryFloorFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
			l, logged := openLogged(t, dir)
			defer l.Close()
			if !strings.Contains(logged.String(), "scanning every segment") {
				t.Fatalf("no warning of the whole scan; log: %s", logged.String())
			}
			checkRange(t, l, 60, 150)
			checkEntry(t, l, es[59])
			checkEntry(t, l, es[149])
		})
	}
}

// After reset (a snapshot replaced the log) no entry record is known: the floor file
// names position 0, and the first append records where it wrote.
func TestEntryLogResetThenAppendRecordsThePosition(t *testing.T) {
	dir := t.TempDir()
	_, _ = floorLog(t, dir, 40, 1)
	l := openTestEntryLog(t, dir)
	l.mu.Lock()
	err := l.reset(500)
	l.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if b := readFloorFile(t, dir); binary.BigEndian.Uint64(b) != 500 || binary.BigEndian.Uint64(b[8:]) != 0 {
		t.Fatalf("floor file after reset = %x, want floor 500 at 0", b)
	}
	next := testEntries(t, 500, 520, 2, 1)
	if err := l.Append(next); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	at := l.pos[0]
	l.Close()
	b := readFloorFile(t, dir)
	if got := PhysicalOffset(binary.BigEndian.Uint64(b[8:])); binary.BigEndian.Uint64(b) != 500 || got == 0 || got > at {
		t.Fatalf("floor file after the first append = %x, want floor 500 at %d (or the blank record before it)", b, at)
	}
	l, logged := openLogged(t, dir)
	defer l.Close()
	if logged.Len() > 0 {
		t.Fatalf("open warned: %s", logged.String())
	}
	checkRange(t, l, 500, 520)
	checkEntry(t, l, next[0])
	checkEntry(t, l, next[20])
}

// The first append after the log emptied may not fit in its segment: its entry record
// then follows blank padding, and the recorded position (where the append started)
// still counts as the floor's, so open does not fall back to a whole scan.
func TestEntryLogFloorPositionBeforeBlankPadding(t *testing.T) {
	dir := t.TempDir()
	es, pos := floorLog(t, dir, 150, 1)
	// A segment that ends in blank padding followed by a segment starting with an
	// entry record.
	l := openTestEntryLog(t, dir)
	var blank PhysicalOffset
	var index uint64
	for i := 1; i < len(pos) && blank == 0; i++ {
		if pos[i]%testEntrySeg != 0 {
			continue
		}
		// Walk the previous segment's records to its blank one.
		for off := PhysicalOffset(int64(pos[i]) - testEntrySeg); off < pos[i]; {
			rec, next, release, err := l.cl.recordAt(off)
			if err != nil {
				t.Fatal(err)
			}
			_, magic, _ := RecordSize(rec)
			release()
			if magic == MagicBlank {
				blank, index = off, uint64(i+1)
				break
			}
			off = next
		}
	}
	l.Close()
	if blank == 0 {
		t.Fatal("no segment of the test log ends in blank padding before an entry record")
	}
	b := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, index), uint64(blank))
	if err := os.WriteFile(filepath.Join(dir, entryFloorFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	restore := flipRecordOf(t, dir, es[1], pos) // below the blank: must not be read
	defer restore()
	l, logged := openLogged(t, dir)
	defer l.Close()
	if logged.Len() > 0 {
		t.Fatalf("open warned: %s", logged.String())
	}
	checkRange(t, l, index, 150)
	checkEntry(t, l, es[index-1])
}
