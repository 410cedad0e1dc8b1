package store

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestIndexKeyHashIsJavaHashCode(t *testing.T) {
	// Values of Java's "...".hashCode(), made non-negative as indexKeyHashMethod does.
	cases := []struct {
		topic, key string
		want       int32
	}{
		{"T", "k", 84*31*31 + 35*31 + 107},
		{"TopicTest", "ORDER-1", abs32(int32(TagsCode("TopicTest#ORDER-1")))},
		{"主题", "键🔑", abs32(int32(TagsCode("主题#键🔑")))},
	}
	for _, c := range cases {
		if got := indexKeyHash(c.topic, c.key); got != c.want || got < 0 {
			t.Fatalf("hash(%s#%s) = %d, want %d", c.topic, c.key, got, c.want)
		}
	}
	// "polygenelubricants".hashCode() is Integer.MIN_VALUE; Math.abs keeps it negative
	// and Java then uses 0.
	if h := int32(TagsCode("polygenelubricants")); h != -1<<31 || nonNegativeHash(h) != 0 {
		t.Fatalf("MIN_VALUE case: hash %d -> %d", h, nonNegativeHash(h))
	}
}

func abs32(h int32) int32 {
	if h < 0 {
		return -h
	}
	return h
}

func TestIndexFileName(t *testing.T) {
	if got := indexFileName(1700000000123); got != "20231114221320123" {
		t.Fatalf("name %s", got)
	}
	if got := nextIndexName("20231114221320999"); got != "20231114221321000" {
		t.Fatalf("next name %s", got)
	}
}

// TestQueryByKeyAcrossFilesAndCollisions indexes with 2 hash slots (every key collides)
// and 6 entries per file (5 usable), so keys spread over several files.
func TestQueryByKeyAcrossFilesAndCollisions(t *testing.T) {
	dir := t.TempDir()
	src := newFakeLog(1 << 20)
	o := testOpts{entriesPerFile: 100, hashSlots: 2, maxEntries: 6}
	s := openDQ(t, dir, src, o)
	want := map[string][]PhysicalOffset{}
	for i := range 12 {
		key := fmt.Sprintf("key%d", i%4)
		off, _ := src.append(t, testMsg{topic: "T", queue: 0, keys: key + " shared", uniq: fmt.Sprintf("U%02d", i), body: "x", ts: 10_000 + int64(i)*1000})
		want[key] = append([]PhysicalOffset{off}, want[key]...) // newest first
		want["shared"] = append([]PhysicalOffset{off}, want["shared"]...)
		want[fmt.Sprintf("U%02d", i)] = []PhysicalOffset{off}
	}
	src.append(t, testMsg{topic: "Other", queue: 0, keys: "key1", body: "x", ts: 30_000})
	syncDispatch(t, s, src)
	names, _ := os.ReadDir(filepath.Join(dir, "index"))
	files := s.index.snapshot()
	if len(files) < 2 {
		t.Fatalf("%d index files, want several (names %v)", len(files), names)
	}
	if files[0].name != indexFileName(10_000) {
		t.Fatalf("first index file %s, want named by the first store time %s", files[0].name, indexFileName(10_000))
	}
	for key, offs := range want {
		got, err := s.QueryByKey("T", key, 100, 0, 1<<40)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, offs) {
			t.Fatalf("key %s: %v, want %v", key, got, offs)
		}
	}
	// maxNum bounds the answer; the newest come first.
	if got, _ := s.QueryByKey("T", "shared", 3, 0, 1<<40); !slices.Equal(got, want["shared"][:3]) {
		t.Fatalf("shared max 3: %v", got)
	}
	// Time range [13s, 17s] selects messages 3..7 (second precision within a file).
	got, _ := s.QueryByKey("T", "shared", 100, 13_000, 17_000)
	if !slices.Equal(got, want["shared"][4:9]) {
		t.Fatalf("time range: %v, want %v", got, want["shared"][4:9])
	}
	if got, _ := s.QueryByKey("T", "absent", 10, 0, 1<<40); len(got) != 0 {
		t.Fatalf("absent key: %v", got)
	}
	if got, _ := s.QueryByKey("Other", "key1", 10, 0, 1<<40); len(got) != 1 {
		t.Fatalf("topic is part of the key: %v", got)
	}

	// Reopen: the files load and answer the same.
	closeDQ(s)
	s2 := openDQ(t, dir, src, o)
	if got, _ := s2.QueryByKey("T", "key2", 100, 0, 1<<40); !slices.Equal(got, want["key2"]) {
		t.Fatalf("after reopen key2: %v, want %v", got, want["key2"])
	}

	// Truncate into the middle of the second file.
	cut := want["U07"][0]
	src.truncate(t, cut)
	if err := s2.dispatcher.truncate(cut); err != nil {
		t.Fatal(err)
	}
	for key, offs := range want {
		var below []PhysicalOffset
		for _, o := range offs {
			if o < cut {
				below = append(below, o)
			}
		}
		if got, _ := s2.QueryByKey("T", key, 100, 0, 1<<40); !slices.Equal(got, below) {
			t.Fatalf("after truncate key %s: %v, want %v", key, got, below)
		}
	}
	// Re-append different messages: the index follows the new log.
	off, _ := src.append(t, testMsg{topic: "T", queue: 0, keys: "fresh", body: "y", ts: 50_000})
	syncDispatch(t, s2, src)
	if got, _ := s2.QueryByKey("T", "fresh", 10, 0, 1<<40); !slices.Equal(got, []PhysicalOffset{off}) {
		t.Fatalf("fresh key: %v", got)
	}
}

func TestIndexRecoveryCutsEntriesBeyondLog(t *testing.T) {
	dir := t.TempDir()
	src := newFakeLog(1 << 20)
	o := testOpts{entriesPerFile: 100, hashSlots: 4, maxEntries: 100}
	s := openDQ(t, dir, src, o)
	var offs []PhysicalOffset
	for i := range 10 {
		off, _ := src.append(t, testMsg{topic: "T", queue: 0, keys: "k", body: "x", ts: int64(1000 + i)})
		offs = append(offs, off)
	}
	syncDispatch(t, s, src)
	closeDQ(s)
	// The CommitLog lost its tail (torn write cut at open).
	src.truncate(t, offs[6])
	s2 := openDQ(t, dir, src, o)
	got, _ := s2.QueryByKey("T", "k", 100, 0, 1<<40)
	want := slices.Clone(offs[:6])
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Fatalf("after recovery: %v, want %v", got, want)
	}
	if s2.MaxQueueOffset("T", 0) != 6 {
		t.Fatalf("queue max %d, want 6", s2.MaxQueueOffset("T", 0))
	}
}
