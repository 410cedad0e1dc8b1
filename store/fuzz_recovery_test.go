package store

import (
	"testing"
)

// FuzzRecoveryScan drives the recovery scan over arbitrary segment bytes: it must
// never panic, and the valid end it returns must be a record boundary at or below the
// end of the input (walking TOTALSIZE from the start lands on it exactly).
func FuzzRecoveryScan(f *testing.F) {
	seg := make([]byte, 2048)
	off := 0
	for i := range 3 {
		r := testRecord(f, "FuzzTopic", int32(i), 300+50*i, i)
		PatchOffsets(r, QueueOffset(i), PhysicalOffset(off))
		copy(seg[off:], r)
		off += len(r)
	}
	f.Add(seg, int64(0))
	f.Add(seg[:off-100], int64(0)) // torn tail
	blank := append([]byte(nil), seg...)
	putBlank(blank[off:], int64(len(blank)-off))
	f.Add(blank, int64(0))
	f.Fuzz(func(t *testing.T, b []byte, base int64) {
		base &= 1<<40 - 1 // offsets are non-negative and far from overflowing
		end, err := scanRecords(b, PhysicalOffset(base))
		if end < PhysicalOffset(base) || end > PhysicalOffset(base)+PhysicalOffset(len(b)) {
			t.Fatalf("end %d outside [%d, %d] (err %v)", end, base, base+int64(len(b)), err)
		}
		pos := 0
		for PhysicalOffset(base)+PhysicalOffset(pos) < end {
			size, _, rerr := RecordSize(b[pos:])
			if rerr != nil || size < MinBlankRecord {
				t.Fatalf("walk stuck at %d before end %d", pos, end)
			}
			pos += int(size)
		}
		if PhysicalOffset(base)+PhysicalOffset(pos) != end {
			t.Fatalf("records walk to %d, scan says %d", int64(pos)+base, end)
		}
		// Scanning the valid prefix again ends at the same place without error,
		// unless it ended with a blank (which must run to the end of its input).
		if again, err2 := scanRecords(b[:end-PhysicalOffset(base)], PhysicalOffset(base)); again != end || err2 != nil {
			t.Fatalf("rescan of valid prefix: end %d err %v, want %d", again, err2, end)
		}
	})
}
