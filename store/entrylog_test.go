package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

const testEntrySeg = 8192

// testEntries makes entries from..to: every third one carries only data (a raft
// configuration or a metadata command), the others 1-4 message records of 300-700
// bytes, so that a test log rolls over several small segments, some inside an entry.
func testEntries(t testing.TB, from, to, term uint64, seed int) []LogEntry {
	t.Helper()
	var es []LogEntry
	for i := from; i <= to; i++ {
		e := LogEntry{Index: i, Term: term, StoreTimestamp: 1700000000000 + int64(i)}
		if i%3 == 0 {
			e.Type = 2
			e.Data = []byte(fmt.Sprintf("config %d term %d seed %d", i, term, seed))
		} else {
			for k := range int(i%4) + 1 {
				e.Records = append(e.Records, testRecord(t, "T", int32(k), 300+int(i*37+uint64(k)*91)%400, seed+int(i)*10+k))
			}
		}
		es = append(es, e)
	}
	return es
}

func openTestEntryLog(t *testing.T, dir string) *EntryLog {
	t.Helper()
	l, err := OpenEntryLog(dir, testEntrySeg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// checkEntry compares what Get returns for want.Index with want: the same header and
// data, and the same records except for the fields the log fills in, which must be
// PHYSICALOFFSET = where the record is, QUEUEOFFSET = 0, STORETIMESTAMP = the entry's.
func checkEntry(t *testing.T, l *EntryLog, want LogEntry) {
	t.Helper()
	got, err := l.Get(want.Index)
	if err != nil {
		t.Fatalf("Get(%d): %v", want.Index, err)
	}
	if got.Index != want.Index || got.Term != want.Term || got.Type != want.Type || !bytes.Equal(got.Data, want.Data) ||
		got.StoreTimestamp != want.StoreTimestamp || len(got.Records) != len(want.Records) {
		t.Fatalf("Get(%d) = index %d term %d type %d data %q ts %d, %d records; want %d %d %d %q %d, %d records",
			want.Index, got.Index, got.Term, got.Type, got.Data, got.StoreTimestamp, len(got.Records),
			want.Index, want.Term, want.Type, want.Data, want.StoreTimestamp, len(want.Records))
	}
	for k, rec := range got.Records {
		phys := PhysicalOffsetOf(rec)
		at, _, release, err := l.cl.recordAt(phys)
		if err != nil {
			t.Fatalf("entry %d record %d: PHYSICALOFFSET %d: %v", want.Index, k, phys, err)
		}
		if !bytes.Equal(at, rec) {
			t.Fatalf("entry %d record %d: not the bytes at its PHYSICALOFFSET %d", want.Index, k, phys)
		}
		release()
		if q := QueueOffsetOf(rec); q != 0 {
			t.Fatalf("entry %d record %d: QUEUEOFFSET %d, want 0 (Apply assigns queue offsets)", want.Index, k, q)
		}
		if ts := StoreTimestampOf(rec); ts != want.StoreTimestamp {
			t.Fatalf("entry %d record %d: STORETIMESTAMP %d, want %d", want.Index, k, ts, want.StoreTimestamp)
		}
		exp := bytes.Clone(want.Records[k])
		PatchOffsets(exp, 0, phys)
		PatchStoreTimestamp(exp, want.StoreTimestamp)
		if !bytes.Equal(rec, exp) {
			t.Fatalf("entry %d record %d differs from the appended record beyond the patched fields", want.Index, k)
		}
	}
}

func checkRange(t *testing.T, l *EntryLog, first, last uint64) {
	t.Helper()
	if f, la := l.FirstIndex(), l.LastIndex(); f != first || la != last {
		t.Fatalf("FirstIndex, LastIndex = %d, %d; want %d, %d", f, la, first, last)
	}
}

func TestEntryLogRoundTripAndReopen(t *testing.T) {
	dir := t.TempDir()
	l := openTestEntryLog(t, dir)
	checkRange(t, l, 0, 0)
	es := testEntries(t, 1, 40, 3, 0)
	for i := 0; i < len(es); i += 7 { // appends of several sizes
		if err := l.Append(es[i:min(i+7, len(es))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	checkRange(t, l, 1, 40)
	for _, e := range es {
		checkEntry(t, l, e)
	}
	if n := len(l.cl.mfq.snapshot()); n < 3 {
		t.Fatalf("the test log spans %d segments; want several, with entries split across them", n)
	}
	if _, err := l.Get(41); !errors.Is(err, ErrEntryNotFound) {
		t.Fatalf("Get past the end: %v, want ErrEntryNotFound", err)
	}
	l.Close()

	l = openTestEntryLog(t, dir)
	defer l.Close()
	checkRange(t, l, 1, 40)
	for _, e := range es {
		checkEntry(t, l, e)
	}
	next := testEntries(t, 41, 45, 4, 0)
	if err := l.Append(next); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, l, next[4])
}

func TestEntryLogRefusesGapsAndKeepsNothingOfAFailedAppend(t *testing.T) {
	l := openTestEntryLog(t, t.TempDir())
	defer l.Close()
	if err := l.Append(testEntries(t, 5, 8, 1, 0)); err != nil {
		t.Fatal(err) // an empty log starts at any index (raft after a snapshot)
	}
	end := l.cl.maxOffset()
	if err := l.Append(testEntries(t, 10, 11, 1, 0)); !errors.Is(err, ErrEntryGap) {
		t.Fatalf("append after a gap: %v, want ErrEntryGap", err)
	}
	bad := testEntries(t, 9, 12, 1, 0)
	bad[2].Index = 13 // 9, 10, then a gap
	if err := l.Append(bad); !errors.Is(err, ErrEntryGap) {
		t.Fatalf("append with a gap inside: %v, want ErrEntryGap", err)
	}
	checkRange(t, l, 5, 8)
	if got := l.cl.maxOffset(); got != end {
		t.Fatalf("the failed append left bytes: log ends at %d, was %d", got, end)
	}
	huge := testEntries(t, 9, 9, 1, 0)
	huge[0].Records = [][]byte{testRecord(t, "T", 0, testEntrySeg, 1)}
	if err := l.Append(huge); !errors.Is(err, ErrMessageIllegal) {
		t.Fatalf("append of a record larger than a segment: %v, want ErrMessageIllegal", err)
	}
	checkRange(t, l, 5, 8)
	ok := testEntries(t, 9, 10, 1, 0)
	if err := l.Append(ok); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, l, ok[1])
}

// A follower's conflicting tail is cut and rewritten with another term's entries;
// the cut is durable, so a reopen finds the new entries, not the old ones.
func TestEntryLogTruncateFromAndRewrite(t *testing.T) {
	dir := t.TempDir()
	l := openTestEntryLog(t, dir)
	old := testEntries(t, 1, 20, 1, 0)
	if err := l.Append(old); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateFrom(25); err != nil { // past the end: nothing
		t.Fatal(err)
	}
	checkRange(t, l, 1, 20)
	if err := l.TruncateFrom(12); err != nil {
		t.Fatal(err)
	}
	checkRange(t, l, 1, 11)
	if _, err := l.Get(12); !errors.Is(err, ErrEntryNotFound) {
		t.Fatalf("Get of a truncated entry: %v", err)
	}
	repl := testEntries(t, 12, 16, 2, 7)
	if err := l.Append(repl); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = openTestEntryLog(t, dir)
	defer l.Close()
	checkRange(t, l, 1, 16)
	for _, e := range append(old[:11:11], repl...) {
		checkEntry(t, l, e)
	}
	if err := l.TruncateFrom(1); err != nil {
		t.Fatal(err)
	}
	checkRange(t, l, 0, 0)
}

// Three replicas fed the same entries, in different append sizes, hold the same bytes.
func TestEntryLogReplicasHoldIdenticalBytes(t *testing.T) {
	es := testEntries(t, 1, 30, 2, 3)
	var dirs []string
	for r, step := range []int{1, 4, 30} {
		dir := filepath.Join(t.TempDir(), fmt.Sprint(r))
		l := openTestEntryLog(t, dir)
		for i := 0; i < len(es); i += step {
			if err := l.Append(es[i:min(i+step, len(es))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		l.Close()
		dirs = append(dirs, dir)
	}
	names, err := filepath.Glob(filepath.Join(dirs[0], "0*"))
	if err != nil || len(names) < 2 {
		t.Fatalf("segments of replica 0: %v, %v", names, err)
	}
	for _, name := range names {
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs[1:] {
			got, err := os.ReadFile(filepath.Join(d, filepath.Base(name)))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("segment %s differs between %s and %s", filepath.Base(name), dirs[0], d)
			}
		}
	}
}

// tornCase damages the log's last entry the way a crash between its write and its
// sync can: some of its bytes never reach the disk (they read back as zeros).
func TestEntryLogOpenCutsATornLastEntry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(rec []byte) []byte // what the crash leaves of the last record's bytes
	}{
		{"record missing", func(rec []byte) []byte { return make([]byte, len(rec)) }},
		{"body half written", func(rec []byte) []byte {
			out := bytes.Clone(rec)
			clear(out[len(out)/2:])
			return out
		}},
		{"header only", func(rec []byte) []byte {
			out := make([]byte, len(rec))
			copy(out, rec[:40])
			return out
		}},
		// What chaos D3 does: random bytes over the second half, which here is the
		// topic and properties, outside RocketMQ's BODYCRC; the lengths still add
		// up, so only the entry's own CRC of its records finds it.
		{"topic garbled", func(rec []byte) []byte {
			out := bytes.Clone(rec)
			v, err := ViewRecord(out)
			if err != nil {
				panic(err)
			}
			topic := v.Topic() // aliases out; "T" becomes "U", still a legal topic
			topic[len(topic)-1]++
			return out
		}},
		{"a fixed field garbled", func(rec []byte) []byte {
			out := bytes.Clone(rec)
			out[posBornHost] ^= 0xff // not covered by any other check
			return out
		}},
		{"QUEUEOFFSET garbled", func(rec []byte) []byte {
			out := bytes.Clone(rec)
			out[posQueueOffset+7] = 1
			return out
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := openTestEntryLog(t, dir)
			es := testEntries(t, 1, 14, 1, 0) // entry 14 has three records
			if err := l.Append(es); err != nil {
				t.Fatal(err)
			}
			last, err := l.Get(14)
			if err != nil {
				t.Fatal(err)
			}
			rec := last.Records[len(last.Records)-1]
			phys := PhysicalOffsetOf(rec)
			l.Close()
			writeAt(t, dir, phys, tc.damage(rec))

			l = openTestEntryLog(t, dir)
			checkRange(t, l, 1, 13)
			for _, e := range es[:13] {
				checkEntry(t, l, e)
			}
			again := testEntries(t, 14, 15, 2, 5)
			if err := l.Append(again); err != nil {
				t.Fatal(err)
			}
			l.Close()
			l = openTestEntryLog(t, dir)
			defer l.Close()
			checkRange(t, l, 1, 15)
			checkEntry(t, l, again[0])
			checkEntry(t, l, again[1])
		})
	}
}

// Bad bytes well before the end are not a torn tail: open refuses, and cuts nothing.
func TestEntryLogOpenRefusesCorruptionBeforeTheTail(t *testing.T) {
	dir := t.TempDir()
	l := openTestEntryLog(t, dir)
	es := testEntries(t, 1, 60, 1, 0)
	if err := l.Append(es); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	e2, err := l.Get(2)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.cl.mfq.snapshot()); n < 4 {
		t.Fatalf("log spans %d segments, want at least 4", n)
	}
	l.Close()
	rec := e2.Records[0]
	flipped := bytes.Clone(rec)
	flipped[len(flipped)/2] ^= 0xff // a body byte: BODYCRC no longer matches
	writeAt(t, dir, PhysicalOffsetOf(rec), flipped)
	if l, err := OpenEntryLog(dir, testEntrySeg, nil); !errors.Is(err, ErrCorrupt) {
		if err == nil {
			l.Close()
		}
		t.Fatalf("open over a corrupt early record: %v, want ErrCorrupt", err)
	}
	writeAt(t, dir, PhysicalOffsetOf(rec), rec)
	l = openTestEntryLog(t, dir)
	defer l.Close()
	checkRange(t, l, 1, 60)
}

// Retention removes whole segments, so the first segment left can start inside an
// entry: open skips those records and starts at the first whole entry.
func TestEntryLogOpenSkipsAnEntryCutByRetention(t *testing.T) {
	dir := t.TempDir()
	l := openTestEntryLog(t, dir)
	es := testEntries(t, 1, 40, 1, 0)
	if err := l.Append(es); err != nil {
		t.Fatal(err)
	}
	// Find a segment that starts with message records of an entry begun before it.
	segs := l.cl.mfq.snapshot()
	cutAt := -1
	for i := 1; i < len(segs)-1 && cutAt < 0; i++ {
		rec, _, release, err := l.cl.recordAt(PhysicalOffset(segs[i].start))
		if err != nil {
			t.Fatal(err)
		}
		if _, isEntry, _ := entryHeaderOf(rec); !isEntry {
			cutAt = i
		}
		release()
	}
	if cutAt < 0 {
		t.Fatal("no segment of the test log starts inside an entry")
	}
	firstWhole := uint64(0) // the first entry whose entry record is in segment cutAt
	for _, e := range es {
		if l.pos[e.Index-l.first] >= PhysicalOffset(segs[cutAt].start) {
			firstWhole = e.Index
			break
		}
	}
	l.Close()
	for _, f := range segs[:cutAt] {
		if err := os.Remove(filepath.Join(dir, fileName(f.start))); err != nil {
			t.Fatal(err)
		}
	}
	l = openTestEntryLog(t, dir)
	defer l.Close()
	checkRange(t, l, firstWhole, 40)
	checkEntry(t, l, es[firstWhole-1])
}

// Forgotten entries stay forgotten across a reopen, also when raft empties the log
// and continues past a gap (after installing a snapshot).
func TestEntryLogForgetBefore(t *testing.T) {
	dir := t.TempDir()
	l := openTestEntryLog(t, dir)
	es := testEntries(t, 1, 12, 1, 0)
	if err := l.Append(es); err != nil {
		t.Fatal(err)
	}
	forget := func(index uint64) {
		t.Helper()
		if err := l.ForgetBefore(index); err != nil {
			t.Fatal(err)
		}
	}
	reopen := func() {
		t.Helper()
		l.Close()
		l = openTestEntryLog(t, dir)
	}
	forget(5)
	checkRange(t, l, 5, 12)
	if _, err := l.Get(4); !errors.Is(err, ErrEntryNotFound) {
		t.Fatalf("Get of a forgotten entry: %v", err)
	}
	checkEntry(t, l, es[4])
	forget(3) // behind the first: nothing
	checkRange(t, l, 5, 12)
	reopen()
	checkRange(t, l, 5, 12)
	checkEntry(t, l, es[4])

	forget(13) // everything: the next append may start anywhere after
	checkRange(t, l, 0, 0)
	reopen()
	checkRange(t, l, 0, 0)
	next := testEntries(t, 20, 21, 2, 0)
	if err := l.Append(next); err != nil {
		t.Fatal(err)
	}
	checkRange(t, l, 20, 21)
	checkEntry(t, l, next[1])
	if n := l.Unsynced(); n <= 0 {
		t.Fatalf("Unsynced after an append = %d, want > 0", n)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if n := l.Unsynced(); n != 0 {
		t.Fatalf("Unsynced after Sync = %d, want 0", n)
	}
	reopen()
	defer l.Close()
	checkRange(t, l, 20, 21)
	checkEntry(t, l, next[0])
}

// writeAt overwrites the entry log's bytes at CommitLog offset off.
func writeAt(t *testing.T, dir string, off PhysicalOffset, b []byte) {
	t.Helper()
	start := int64(off) / testEntrySeg * testEntrySeg
	f, err := os.OpenFile(filepath.Join(dir, fileName(start)), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, int64(off)-start); err != nil {
		t.Fatal(err)
	}
}

// A write that fails part way through an append (here: the third entry's first
// record) leaves nothing of the append: not the entries before it, not bytes gathered
// for the pwrite. The next append and a reopen see the log as it was.
func TestEntryLogFailedAppendLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	l := openTestEntryLog(t, dir)
	base := testEntries(t, 1, 10, 1, 0)
	if err := l.Append(base); err != nil {
		t.Fatal(err)
	}
	end := l.cl.maxOffset()
	boom := errors.New("injected write error")
	calls := 0
	l.cl.setHook(func(c IOCall) error {
		if c.Op == IOWrite {
			calls++
			// Entry 11: entry record + 4 records; entry 12: data only; entry 13: its
			// entry record, then its first record fails.
			if calls == 5+1+2 {
				return boom
			}
		}
		return nil
	})
	more := testEntries(t, 11, 13, 1, 9)
	if err := l.Append(more); !errors.Is(err, boom) {
		t.Fatalf("append with a failing write: %v, want the injected error", err)
	}
	l.cl.setHook(nil)
	checkRange(t, l, 1, 10)
	if got := l.cl.maxOffset(); got != end {
		t.Fatalf("log ends at %d after the failed append, was %d", got, end)
	}
	if err := l.Append(more); err != nil {
		t.Fatal(err)
	}
	for _, e := range more {
		checkEntry(t, l, e)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = openTestEntryLog(t, dir)
	defer l.Close()
	checkRange(t, l, 1, 13)
	for _, e := range append(base, more...) {
		checkEntry(t, l, e)
	}
}

// Positions names the records Get returns, without copying them; ForgetBelow forgets
// the entries a retention cut below an offset would remove.
func TestEntryLogPositionsAndForgetBelow(t *testing.T) {
	l := openTestEntryLog(t, t.TempDir())
	defer l.Close()
	es := testEntries(t, 1, 30, 1, 0)
	if err := l.Append(es); err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		got, err := l.Get(e.Index)
		if err != nil {
			t.Fatal(err)
		}
		pos, err := l.Positions(e.Index, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(pos) != len(got.Records) {
			t.Fatalf("entry %d: %d positions for %d records", e.Index, len(pos), len(got.Records))
		}
		for k, p := range pos {
			if p != PhysicalOffsetOf(got.Records[k]) {
				t.Fatalf("entry %d record %d: position %d, the record says %d", e.Index, k, p, PhysicalOffsetOf(got.Records[k]))
			}
		}
	}
	if _, err := l.Positions(31, nil); !errors.Is(err, ErrEntryNotFound) {
		t.Fatalf("Positions past the end: %v", err)
	}
	if err := l.ForgetBelow(l.pos[9] + 1); err != nil { // inside entry 10's entry record
		t.Fatal(err)
	}
	checkRange(t, l, 11, 30)
	if err := l.ForgetBelow(0); err != nil {
		t.Fatal(err)
	}
	checkRange(t, l, 11, 30)
	checkEntry(t, l, es[10])
}
