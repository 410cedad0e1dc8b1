package store

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fileSlots reads the hash slot table an IndexFile holds on disk and the table its
// entries give (each slot names the newest entry with that hash).
func fileSlots(t *testing.T, path string, hashSlots int) (onDisk, fromEntries []int32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	onDisk = make([]int32, hashSlots)
	for i := range onDisk {
		onDisk[i] = int32(binary.BigEndian.Uint32(b[indexHeaderSize+i*indexSlotSize:]))
	}
	fromEntries = make([]int32, hashSlots)
	count := int(int32(binary.BigEndian.Uint32(b[hdrIndexCount:])))
	for i := 1; i < count; i++ {
		e := indexHeaderSize + hashSlots*indexSlotSize + i*indexEntrySize
		fromEntries[int(int32(binary.BigEndian.Uint32(b[e:])))%hashSlots] = int32(i)
	}
	return onDisk, fromEntries
}

func allZero(s []int32) bool { return !slices.ContainsFunc(s, func(v int32) bool { return v != 0 }) }

// TestWritableIndexSlotsLiveInMemory: the slot table of the IndexFile being written
// stays out of the file, even when the index is synced, so that random keys do not
// keep its pages dirty (decision 0018). A crash leaves the file with entries and no
// table: recovery rebuilds it from them. A clean close writes it, and the next
// start reads it back.
func TestWritableIndexSlotsLiveInMemory(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.IndexFlushInterval = -1 // every flush syncs the index: its checkpoint is the end
	s := openTest(t, cfg)
	end := appendAndFlush(t, s, keyedRecords(t, 10, 0), 1000)
	if idx, _ := s.index.checkpoint(); idx != end {
		t.Fatalf("index checkpoint %d, want %d", idx, end)
	}
	files := indexFiles(t, filepath.Join(dir, indexDir))
	if len(files) != 1 {
		t.Fatalf("index files %v", files)
	}
	onDisk, fromEntries := fileSlots(t, files[0], cfg.IndexHashSlots)
	if !allZero(onDisk) || allZero(fromEntries) {
		t.Fatalf("synced file: slots on disk zero %v, entries there %v; want the table in memory only", allZero(onDisk), !allZero(fromEntries))
	}
	check := func(s *Store) {
		t.Helper()
		if got := queryAll(t, s, "all"); len(got) != 10 {
			t.Fatalf("key all finds %d messages, want 10", len(got))
		}
		for i := range 10 {
			if got := queryAll(t, s, fmt.Sprintf("k%d", i)); len(got) != 1 {
				t.Fatalf("key k%d finds %v", i, got)
			}
		}
	}
	check(s)
	crash(s)

	s = openTest(t, cfg) // dirty: the table is rebuilt from the entries
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	onDisk, fromEntries = fileSlots(t, files[0], cfg.IndexHashSlots)
	if !slices.Equal(onDisk, fromEntries) {
		t.Fatal("after Close the file's slot table differs from the one its entries give")
	}

	s = openTest(t, cfg) // clean: the table is read from the file
	defer s.Close()
	if f := s.index.snapshot()[0]; f.staleSlots || f.mem.Load() == nil {
		t.Fatalf("clean start: stale %v, in memory %v; want the file's table loaded", f.staleSlots, f.mem.Load() != nil)
	}
	check(s)
	appendAndFlush(t, s, keyedRecords(t, 5, 10), 2000)
	if got := queryAll(t, s, "all"); len(got) != 15 {
		t.Fatalf("key all finds %d messages after more appends, want 15", len(got))
	}
}

// TestFullIndexFileSlotsWrittenOutPaced: once a file is full its table is copied
// into it slotsPerWriteOut slots per flusher round, not at once, and queries read
// it from memory until the copy is complete. While the copy is under way an index
// sync holds the checkpoint at the file's last entry, so a crash then makes
// recovery cut the file there and rebuild its table from the entries.
func TestFullIndexFileSlotsWrittenOutPaced(t *testing.T) {
	const hashSlots = 3*slotsPerWriteOut - 5 // three rounds
	for _, crashed := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crashed), func(t *testing.T) {
			dir := t.TempDir()
			src := newFakeLog(1 << 20)
			o := testOpts{entriesPerFile: 100, hashSlots: hashSlots, maxEntries: 11} // 10 entries per file
			s := openDQ(t, dir, src, o)
			var offs []PhysicalOffset
			for i := range 13 {
				off, _ := src.append(t, testMsg{topic: "T", queue: 0, keys: fmt.Sprintf("u%d", i), body: "x", ts: int64(1000 + i)})
				offs = append(offs, off)
			}
			syncDispatch(t, s, src)
			files := s.index.snapshot()
			if len(files) != 2 || !files[0].full() {
				t.Fatalf("%d index files, first full %v; want a full one and the next", len(files), files[0].full())
			}
			full := files[0]
			checkKeys := func(s *Store) {
				t.Helper()
				for i, off := range offs {
					if got := queryAll(t, s, fmt.Sprintf("u%d", i)); !slices.Equal(got, []PhysicalOffset{off}) {
						t.Fatalf("key u%d: %v, want [%d]", i, got, off)
					}
				}
			}
			if err := s.index.flush(false); err != nil {
				t.Fatal(err)
			}
			if idx, _ := s.index.checkpoint(); idx != offs[9] {
				t.Fatalf("index checkpoint %d with the full file's table in memory, want its last entry's message %d", idx, offs[9])
			}
			if crashed {
				if err := s.index.writeBack(); err != nil { // a third of the table made it
					t.Fatal(err)
				}
				closeDQ(s)
				s = openDQ(t, dir, src, o)
				checkKeys(s)
				return
			}
			for round := 1; round <= 3; round++ {
				if err := s.index.writeBack(); err != nil {
					t.Fatal(err)
				}
				checkKeys(s)
				if inMem := full.mem.Load() != nil; inMem != (round < 3) {
					t.Fatalf("after write-out round %d the table is in memory: %v", round, inMem)
				}
				full.slotsMu.Lock()
				copied := full.copied
				full.slotsMu.Unlock()
				if want := min(round*slotsPerWriteOut, hashSlots); round < 3 && copied != want {
					t.Fatalf("after write-out round %d: %d slots copied, want %d", round, copied, want)
				}
			}
			onDisk, fromEntries := fileSlots(t, full.path, hashSlots)
			if !slices.Equal(onDisk, fromEntries) {
				t.Fatal("the full file's slot table on disk differs from its entries'")
			}
			if files[1].mem.Load() == nil {
				t.Fatal("the file being written lost its table in memory")
			}
			if err := s.index.flush(false); err != nil {
				t.Fatal(err)
			}
			if idx, _ := s.index.checkpoint(); idx != src.maxOffset() {
				t.Fatalf("index checkpoint %d once the table is out, want %d", idx, src.maxOffset())
			}
		})
	}
}
