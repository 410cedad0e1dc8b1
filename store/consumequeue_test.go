package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestConsumeQueuePutRejectsGapAndOverwrite(t *testing.T) {
	c, err := newConsumeQueues(t.TempDir(), 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	q, _ := c.getOrCreate("T", 0)
	for i := range 6 {
		if err := q.put(QueueOffset(i), cqEntry{phys: PhysicalOffset(100 * i), size: 10, tagsCode: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.put(3, cqEntry{phys: 1000, size: 1}); !errors.Is(err, ErrQueueInvariant) {
		t.Fatalf("overwrite: %v", err)
	}
	if err := q.put(7, cqEntry{phys: 1000, size: 1}); !errors.Is(err, ErrQueueInvariant) {
		t.Fatalf("gap: %v", err)
	}
	// Files are named by the start byte offset within the queue: entry index × 20.
	names, _ := os.ReadDir(filepath.Join(c.dir, "T", "0"))
	if len(names) != 2 || names[1].Name() != fmt.Sprintf("%020d", 4*cqEntrySize) {
		t.Fatalf("files %v", names)
	}
	if e, ok := q.entry(5); !ok || e != (cqEntry{phys: 500, size: 10, tagsCode: 5}) {
		t.Fatalf("entry 5: %+v %v", e, ok)
	}
}

// TestConsumeQueueRecovery: entries pointing beyond the CommitLog end and a torn last
// entry are cut on recover, and what is missing is re-dispatched.
func TestConsumeQueueRecovery(t *testing.T) {
	for _, tc := range []string{"beyond log end", "torn last entry"} {
		t.Run(tc, func(t *testing.T) {
			dir := t.TempDir()
			src := newFakeLog(1 << 20)
			s := openDQ(t, dir, src, defaultOpts())
			offs := fillQueue(t, src, "T", 0, 10, constTag("A"), tsStep)
			syncDispatch(t, s, src)
			closeDQ(s)
			qfile := filepath.Join(dir, "consumequeue", "T", "0", fmt.Sprintf("%020d", 8*cqEntrySize))
			switch tc {
			case "beyond log end":
				src.truncate(t, offs[7]) // entries 7..9 now point past the log
			case "torn last entry":
				b, err := os.ReadFile(qfile)
				if err != nil {
					t.Fatal(err)
				}
				clear(b[cqEntrySize+8 : 2*cqEntrySize]) // entry 9 half written
				if err := os.WriteFile(qfile, b, 0o644); err != nil {
					t.Fatal(err)
				}
				// Garbage after the end must not survive either.
				b[3*cqEntrySize] = 0x7f
				if err := os.WriteFile(qfile, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// No checkpoint was flushed: recovery re-verifies from the log start.
			s2 := openDQ(t, dir, src, defaultOpts())
			want := QueueOffset(10)
			if tc == "beyond log end" {
				want = 7
			}
			if got := s2.MaxQueueOffset("T", 0); got != want {
				t.Fatalf("max %d, want %d", got, want)
			}
			for qo := QueueOffset(0); qo < want; qo++ {
				e, ok := s2.cq.get("T", 0).entry(qo)
				if !ok || e.phys != offs[qo] {
					t.Fatalf("entry %d: %+v %v, want phys %d", qo, e, ok, offs[qo])
				}
			}
			if e, ok := s2.cq.get("T", 0).entry(want); ok {
				t.Fatalf("entry beyond max readable: %+v", e)
			}
		})
	}
}

// TestConsumeQueueRebuildAfterRetention: a queue rebuilt from a CommitLog whose head
// was deleted starts at its first surviving offset, pre-blank filled before it.
func TestConsumeQueueRebuildAfterRetention(t *testing.T) {
	dir := t.TempDir()
	src := newFakeLog(1 << 20)
	s := openDQ(t, dir, src, defaultOpts())
	offs := fillQueue(t, src, "T", 0, 12, constTag("A"), tsStep)
	syncDispatch(t, s, src)
	closeDQ(s)
	src.min = offs[5]
	if err := os.RemoveAll(filepath.Join(dir, "consumequeue")); err != nil {
		t.Fatal(err)
	}
	s2 := openDQ(t, dir, src, defaultOpts())
	if s2.MinQueueOffset("T", 0) != 5 || s2.MaxQueueOffset("T", 0) != 12 {
		t.Fatalf("min %d max %d, want 5 12", s2.MinQueueOffset("T", 0), s2.MaxQueueOffset("T", 0))
	}
	r, _ := s2.GetMessages("T", 0, 0, 32, 1<<20, nil)
	if r.Status != OffsetTooSmall || r.NextBeginOffset != 5 {
		t.Fatalf("read at 0: %v next %d", r.Status, r.NextBeginOffset)
	}
	// Reopen once more: the pre-blank entries keep the queue contiguous.
	closeDQ(s2)
	s3 := openDQ(t, dir, src, defaultOpts())
	if s3.MinQueueOffset("T", 0) != 5 || s3.MaxQueueOffset("T", 0) != 12 {
		t.Fatalf("after reopen min %d max %d", s3.MinQueueOffset("T", 0), s3.MaxQueueOffset("T", 0))
	}
	r2, _ := s3.GetMessages("T", 0, 5, 32, 1<<20, nil)
	defer r2.Release()
	if r2.Status != Found || r2.QueueOffsets[0] != 5 {
		t.Fatalf("read at 5: %v %v", r2.Status, r2.QueueOffsets)
	}
}

// TestRecoverFromCheckpointAfterTruncate: a checkpoint written before a truncate must
// not make recovery resume inside the records appended after it.
func TestRecoverFromCheckpointAfterTruncate(t *testing.T) {
	dir := t.TempDir()
	src := newFakeLog(1 << 20)
	s := openDQ(t, dir, src, defaultOpts())
	offs := fillQueue(t, src, "T", 0, 10, constTag("A"), tsStep)
	syncDispatch(t, s, src)
	if err := s.cq.flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.index.flush(false); err != nil {
		t.Fatal(err)
	}
	src.truncate(t, offs[4])
	if err := s.dispatcher.truncate(offs[4]); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		src.append(t, testMsg{topic: "U", queue: 1, body: fmt.Sprintf("a-much-longer-body-than-before-%d", i), ts: 5})
	}
	syncDispatch(t, s, src)
	closeDQ(s)
	s2 := openDQ(t, dir, src, defaultOpts())
	if s2.MaxQueueOffset("T", 0) != 4 || s2.MaxQueueOffset("U", 1) != 6 {
		t.Fatalf("T max %d U max %d, want 4 6", s2.MaxQueueOffset("T", 0), s2.MaxQueueOffset("U", 1))
	}
}
