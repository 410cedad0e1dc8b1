package store

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// spareOf waits until q has a spare and returns it.
func spareOf(t *testing.T, q *consumeQueue) *mappedFile {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		q.createMu.Lock()
		s := q.spare
		q.createMu.Unlock()
		if s != nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue %s/%d: no spare made", q.topic, q.queueID)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// allocatedBytes is how much disk the file at path holds.
func allocatedBytes(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// TestSpareMadeAtThreeQuartersAndTakenAtRollOver: a queue's next file is made,
// sparse, once its last file is three quarters written, and the roll-over takes
// that very file, with its blocks reserved; entries on both sides read back.
func TestSpareMadeAtThreeQuartersAndTakenAtRollOver(t *testing.T) {
	q := openTestQueue(t, 8)
	put := func(qo int) {
		t.Helper()
		if err := q.put(QueueOffset(qo), cqEntry{phys: PhysicalOffset(1000 * (qo + 1)), size: 100, tagsCode: int64(qo)}); err != nil {
			t.Fatalf("put %d: %v", qo, err)
		}
	}
	for qo := range 5 {
		put(qo)
	}
	q.createMu.Lock()
	early := q.spare
	q.createMu.Unlock()
	if early != nil {
		t.Fatalf("spare made after 5 of 8 entries")
	}
	put(5) // the sixth entry reaches three quarters
	spare := spareOf(t, q)
	if spare.start != 8*cqEntrySize {
		t.Fatalf("spare starts at %d, want %d", spare.start, 8*cqEntrySize)
	}
	if n := len(q.files.snapshot()); n != 1 {
		t.Fatalf("the spare is one of the queue's files before it is taken (%d files)", n)
	}
	if got := allocatedBytes(t, spare.path); got != 0 {
		t.Fatalf("spare holds %d bytes of disk before it is taken, want none", got)
	}
	for qo := 6; qo < 12; qo++ {
		put(qo)
	}
	files := q.files.snapshot()
	if len(files) != 2 || files[1] != spare {
		t.Fatalf("roll-over did not take the spare: %d files, second %p, spare %p", len(files), files[len(files)-1], spare)
	}
	if got := allocatedBytes(t, spare.path); got < spare.size {
		t.Fatalf("taken spare holds %d bytes of disk, want its %d reserved", got, spare.size)
	}
	for qo := range 12 {
		e, ok := q.entry(QueueOffset(qo))
		if !ok || e.phys != PhysicalOffset(1000*(qo+1)) || e.tagsCode != int64(qo) {
			t.Fatalf("entry %d: %+v %v", qo, e, ok)
		}
	}
}

// TestSpareOfAnotherStartIsDropped: a spare that is not the file the queue
// needs (the queue was cut back after it was made) is removed, and the file is
// created where the queue needs it.
func TestSpareOfAnotherStartIsDropped(t *testing.T) {
	q := openTestQueue(t, 8)
	for qo := range 6 {
		if err := q.put(QueueOffset(qo), cqEntry{phys: PhysicalOffset(100 * (qo + 1)), size: 10}); err != nil {
			t.Fatal(err)
		}
	}
	spare := spareOf(t, q)
	// Cut everything: the queue's next file now starts at 0, not at the spare.
	if err := q.truncateQueueOffset(0); err != nil {
		t.Fatal(err)
	}
	if err := q.put(0, cqEntry{phys: 7, size: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(spare.path); !os.IsNotExist(err) {
		t.Fatalf("unused spare %s still on disk: %v", filepath.Base(spare.path), err)
	}
	files := q.files.snapshot()
	if len(files) != 1 || files[0].start != 0 {
		t.Fatalf("files after the cut: %d", len(files))
	}
	if e, ok := q.entry(0); !ok || e.phys != 7 {
		t.Fatalf("entry 0 after the cut: %+v %v", e, ok)
	}
}

// TestPrepareQueuesMakesFirstFiles: a created topic's queues get their first
// file ahead of the first message, the message lands in it, the prepared but
// unwritten queues are not listed, and Close leaves no spare on disk.
func TestPrepareQueuesMakesFirstFiles(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, testConfig(dir))
	s.PrepareQueues("T", 4)
	var spares []*mappedFile
	for id := range int32(4) {
		q := waitQueue(t, s, "T", id)
		spares = append(spares, spareOf(t, q))
	}
	if tq := s.Topics(); len(tq) != 0 {
		t.Fatalf("prepared queues listed before any message: %v", tq)
	}
	res := mustAppend(t, s, [][]byte{testRecord(t, "T", 2, 300, 1)}, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitDispatched(ctx, res[0].PhysicalOffset+PhysicalOffset(res[0].Size)); err != nil {
		t.Fatal(err)
	}
	if files := s.cq.get("T", 2).files.snapshot(); len(files) != 1 || files[0] != spares[2] {
		t.Fatalf("queue 2 did not take its prepared file")
	}
	if tq := s.Topics(); len(tq) != 1 || tq[0] != (TopicQueue{"T", 2}) {
		t.Fatalf("Topics = %v, want only T/2", tq)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{0, 1, 3} {
		if _, err := os.Stat(spares[id].path); !os.IsNotExist(err) {
			t.Fatalf("queue %d: spare left after Close: %v", id, err)
		}
	}
	if _, err := os.Stat(spares[2].path); err != nil {
		t.Fatalf("queue 2's file: %v", err)
	}
}

// TestSpareLeftByACrashIsRemovedByRecovery: a crash leaves spares on disk under
// real names (a prepared queue's first file, a queue's next file); a restart
// removes them, keeps every message, and the queue grows again past the spot.
func TestSpareLeftByACrashIsRemovedByRecovery(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.ConsumeQueueEntriesPerFile = 8
	s := openTest(t, cfg)
	var recs [][]byte
	for i := range 6 {
		recs = append(recs, testRecord(t, "T", 0, 300, i))
	}
	res := mustAppend(t, s, recs, 1)
	s.PrepareQueues("U", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	last := res[len(res)-1]
	if err := s.WaitDispatched(ctx, last.PhysicalOffset+PhysicalOffset(last.Size)); err != nil {
		t.Fatal(err)
	}
	next := spareOf(t, s.cq.get("T", 0))
	first := spareOf(t, waitQueue(t, s, "U", 0))
	if _, err := s.Flush(); err != nil {
		t.Fatal(err)
	}

	// What a kill -9 leaves: the directory as it is now, spares included.
	image := t.TempDir()
	copyTree(t, cfg.Dir, image)
	crash(s)
	for _, p := range []string{next.path, first.path} {
		rel, _ := filepath.Rel(cfg.Dir, p)
		if _, err := os.Stat(filepath.Join(image, rel)); err != nil {
			t.Fatalf("the crash image lacks the spare %s: %v", rel, err)
		}
	}

	cfg.Dir = image
	s2 := openTest(t, cfg)
	defer s2.Close()
	for _, p := range []string{next.path, first.path} {
		rel, _ := filepath.Rel(s.cfg.Dir, p)
		if _, err := os.Stat(filepath.Join(image, rel)); !os.IsNotExist(err) {
			t.Fatalf("recovery kept the spare %s: %v", rel, err)
		}
	}
	more := mustAppend(t, s2, [][]byte{testRecord(t, "T", 0, 300, 6), testRecord(t, "T", 0, 300, 7), testRecord(t, "T", 0, 300, 8)}, 2)
	end := more[len(more)-1]
	if err := s2.WaitDispatched(ctx, end.PhysicalOffset+PhysicalOffset(end.Size)); err != nil {
		t.Fatal(err)
	}
	r, err := s2.GetMessages("T", 0, 0, 32, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if len(r.Messages) != 8 { // the first file's 8 entries; the 9th is in the next file
		t.Fatalf("read %d messages from offset 0, want 8", len(r.Messages))
	}
	if maxQO := s2.MaxQueueOffset("T", 0); maxQO != 9 {
		t.Fatalf("max queue offset %d after the restart, want 9", maxQO)
	}
}

// waitQueue waits until the store has the queue (PrepareQueues makes it in the
// background).
func waitQueue(t *testing.T, s *Store, topic string, id int32) *consumeQueue {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if q := s.cq.get(topic, id); q != nil {
			return q
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue %s/%d never made", topic, id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// copyTree copies the regular files under src to dst, keeping sparse files'
// sizes (the copy of a spare is all zeros, as the original).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRecoveryReservesTheLastFile: a spare taken after the last sync may come
// back from a crash without its blocks; recovery reserves the blocks of each
// queue's last file again, so writing through the mapping cannot meet a full
// disk.
func TestRecoveryReservesTheLastFile(t *testing.T) {
	const perFile = 1024 // five pages: writing the first entries allocates only the first
	dir := t.TempDir()
	qdir := filepath.Join(dir, "T", "0")
	if err := os.MkdirAll(qdir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The file as a crash could leave it: sparse, two entries written.
	mf, err := createMappedFile(qdir, 0, perFile*cqEntrySize, fillSparse)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		var b [cqEntrySize]byte
		putCQEntry(b[:], cqEntry{phys: PhysicalOffset(100 * i), size: 50})
		mf.appendBytes(b[:])
	}
	if _, err := mf.flush(); err != nil {
		t.Fatal(err)
	}
	mf.close()
	if got := allocatedBytes(t, filepath.Join(qdir, fileName(0))); got >= perFile*cqEntrySize {
		t.Skipf("the filesystem allocated the sparse file's %d bytes on write; nothing to check", got)
	}

	c, err := newConsumeQueues(dir, perFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	q := c.get("T", 0)
	if err := q.recoverEnd(1 << 20); err != nil {
		t.Fatal(err)
	}
	if q.maxOffset() != 2 {
		t.Fatalf("recovered %d entries, want 2", q.maxOffset())
	}
	if got := allocatedBytes(t, filepath.Join(qdir, fileName(0))); got < perFile*cqEntrySize {
		t.Fatalf("last file holds %d bytes of disk after recovery, want its %d reserved", got, perFile*cqEntrySize)
	}
}
