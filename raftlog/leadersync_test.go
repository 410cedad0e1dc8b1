package raftlog

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// gateVFS holds every fsync of its files while closed and fails them while
// failing is set; it counts the fsyncs that reached the disk below.
type gateVFS struct {
	types.VFS
	mu      sync.Mutex
	open    chan struct{} // closed: fsyncs pass
	failing atomic.Bool
	syncs   atomic.Int64
}

func newGateVFS(inner types.VFS) *gateVFS {
	g := &gateVFS{VFS: inner, open: make(chan struct{})}
	close(g.open)
	return g
}

func (g *gateVFS) hold() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
}

// release lets held and later fsyncs pass; releasing an open gate does
// nothing.
func (g *gateVFS) release() {
	g.mu.Lock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
	g.mu.Unlock()
}

// openGated opens stores in dir with their raft-wal segments on a gateVFS over
// inner. Cleanup releases the gate before closing the stores, whose Close
// fsyncs deferred writes, so a test that fails while holding the gate ends
// instead of hanging.
func openGated(t *testing.T, dir string, inner types.VFS) (*Stores, *gateVFS) {
	t.Helper()
	g := newGateVFS(inner)
	s, err := OpenStoresVFS(dir, g, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	t.Cleanup(g.release)
	return s, g
}

func (g *gateVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := g.VFS.Create(dir, name, size)
	return &gateFile{WritableFile: f, g: g}, err
}

func (g *gateVFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := g.VFS.OpenWriter(dir, name)
	return &gateFile{WritableFile: f, g: g}, err
}

type gateFile struct {
	types.WritableFile
	g *gateVFS
}

func (f *gateFile) Sync() error {
	f.g.mu.Lock()
	ch := f.g.open
	f.g.mu.Unlock()
	<-ch
	if f.g.failing.Load() {
		return syscall.EIO
	}
	f.g.syncs.Add(1)
	return f.WritableFile.Sync()
}

// storeAsync runs StoreLogs in a goroutine; its error arrives on the channel.
func storeAsync(s *Stores, logs []*raft.Log) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.Log.StoreLogs(logs) }()
	return done
}

// TestLeaderStoreLogsDefersFsync: while the leader check says leader,
// StoreLogs returns with its fsync still held, Durable stays behind and
// WaitDurable waits; once the fsync passes, both catch up. As a follower
// StoreLogs does not return before its fsync.
func TestLeaderStoreLogsDefersFsync(t *testing.T) {
	s, g := openGated(t, t.TempDir(), NewPowerLossVFS(nil))
	storeLogs(t, s.Log, makeLogs(1, 10, 1, 512))
	if d := s.DurableIndex(); d != 10 {
		t.Fatalf("DurableIndex after a follower's StoreLogs = %d, want 10", d)
	}

	var leader atomic.Bool
	leader.Store(true)
	s.DeferLeaderFsync(leader.Load)
	g.hold()
	select {
	case err := <-storeAsync(s, makeLogs(11, 20, 1, 512)):
		if err != nil {
			t.Fatalf("the leader's StoreLogs: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the leader's StoreLogs waited for its fsync")
	}
	if d := s.DurableIndex(); d != 10 {
		t.Fatalf("DurableIndex with the fsync held = %d, want 10", d)
	}
	var l raft.Log
	if err := s.Log.GetLog(20, &l); err != nil || l.Index != 20 {
		t.Fatalf("GetLog(20) before its fsync = %d, %v: replication reads it from there", l.Index, err)
	}
	stop := make(chan struct{})
	waited := make(chan error, 1)
	go func() { waited <- s.WaitDurable(20, stop) }()
	select {
	case err := <-waited:
		t.Fatalf("WaitDurable(20) returned %v with the fsync held", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := s.WaitDurable(10, stop); err != nil {
		t.Fatalf("WaitDurable of a durable index: %v", err)
	}
	g.release()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("WaitDurable(20): %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitDurable(20) still waiting after the fsync passed")
	}
	if d := s.DurableIndex(); d != 20 {
		t.Fatalf("DurableIndex after the fsync = %d, want 20", d)
	}

	leader.Store(false)
	g.hold()
	stored := storeAsync(s, makeLogs(21, 25, 1, 512))
	select {
	case err := <-stored:
		t.Fatalf("a follower's StoreLogs returned (%v) before its fsync", err)
	case <-time.After(200 * time.Millisecond):
	}
	g.release()
	if err := <-stored; err != nil {
		t.Fatalf("the follower's StoreLogs: %v", err)
	}
	if err := s.WaitDurable(25, stop); err != nil {
		t.Fatal(err)
	}
	if r := s.DeferredFsyncStats(); r.Writes == 0 {
		t.Fatal("no deferred fsync round counted")
	}

	// WaitDurable gives up when told to stop.
	leader.Store(true)
	g.hold()
	storeLogs(t, s.Log, makeLogs(26, 26, 1, 512))
	close(stop)
	if err := s.WaitDurable(26, stop); !errors.Is(err, ErrStoresClosed) {
		t.Fatalf("WaitDurable after stop = %v, want ErrStoresClosed", err)
	}
}

// TestLeaderPowerLossLosesOnlyWhatWasNotDurable: a power cut while the
// leader's fsync is deferred loses the entries after DurableIndex and none
// before it; the index never claimed what the disk did not have.
func TestLeaderPowerLossLosesOnlyWhatWasNotDurable(t *testing.T) {
	dir := t.TempDir()
	pl := NewPowerLossVFS(nil)
	s, g := openGated(t, dir, pl)
	s.DeferLeaderFsync(func() bool { return true })
	storeLogs(t, s.Log, makeLogs(1, 10, 1, 512))
	if err := s.WaitDurable(10, nil); err != nil {
		t.Fatal(err)
	}
	g.hold()
	storeLogs(t, s.Log, makeLogs(11, 20, 1, 512))
	durable := s.DurableIndex()
	if durable != 10 {
		t.Fatalf("DurableIndex = %d, want 10", durable)
	}
	pl.Cut()
	g.release()
	if err := s.WaitDurable(20, nil); err == nil {
		t.Fatal("WaitDurable(20) succeeded although the power was cut before its fsync")
	}
	if err := s.Log.StoreLogs(makeLogs(21, 21, 1, 512)); err == nil {
		t.Fatal("StoreLogs succeeded after the deferred fsync failed")
	}
	_ = s.Close()
	if _, err := pl.DropUnsynced(); err != nil {
		t.Fatal(err)
	}
	if _, last := reopenWAL(t, dir); last != durable {
		t.Fatalf("last index after the cut = %d, want the durable index %d", last, durable)
	}
}

// TestDeferredFsyncFailureIsSticky: an fsync error in the syncer fails
// WaitDurable and every later StoreLogs, leader or not, and Durable stops.
func TestDeferredFsyncFailureIsSticky(t *testing.T) {
	s, g := openGated(t, t.TempDir(), NewPowerLossVFS(nil))
	var leader atomic.Bool
	leader.Store(true)
	s.DeferLeaderFsync(leader.Load)
	storeLogs(t, s.Log, makeLogs(1, 5, 1, 256))
	if err := s.WaitDurable(5, nil); err != nil {
		t.Fatal(err)
	}
	g.failing.Store(true)
	storeLogs(t, s.Log, makeLogs(6, 8, 1, 256))
	if err := s.WaitDurable(8, nil); !errors.Is(err, syscall.EIO) {
		t.Fatalf("WaitDurable after a failed fsync = %v, want EIO", err)
	}
	g.failing.Store(false)
	leader.Store(false)
	if err := s.Log.StoreLogs(makeLogs(9, 9, 1, 256)); !errors.Is(err, syscall.EIO) {
		t.Fatalf("StoreLogs after a failed fsync = %v, want the sticky EIO", err)
	}
	if d := s.DurableIndex(); d != 5 {
		t.Fatalf("DurableIndex = %d, want 5", d)
	}
}

// TestSuffixTruncationLowersDurable: entries a new leader overwrote are not
// durable any more; a deferred round that began before the truncation must
// not raise the index over their replacements.
func TestSuffixTruncationLowersDurable(t *testing.T) {
	s, g := openGated(t, t.TempDir(), NewPowerLossVFS(nil))
	storeLogs(t, s.Log, makeLogs(1, 20, 1, 256))
	if err := s.Log.DeleteRange(15, 20); err != nil {
		t.Fatal(err)
	}
	if d := s.DurableIndex(); d != 14 {
		t.Fatalf("DurableIndex after deleting [15,20] = %d, want 14", d)
	}
	// Compaction from the front leaves it alone.
	if err := s.Log.DeleteRange(1, 5); err != nil {
		t.Fatal(err)
	}
	if d := s.DurableIndex(); d != 14 {
		t.Fatalf("DurableIndex after compacting [1,5] = %d, want 14", d)
	}
	var leader atomic.Bool
	leader.Store(true)
	s.DeferLeaderFsync(leader.Load)
	g.hold()
	storeLogs(t, s.Log, makeLogs(15, 18, 2, 256))
	if d := s.DurableIndex(); d != 14 {
		t.Fatalf("DurableIndex with the new entries' fsync held = %d, want 14", d)
	}
	g.release()
	if err := s.WaitDurable(18, nil); err != nil {
		t.Fatal(err)
	}
}

// TestMetadataCommitSyncsDeferredSegments: raft-wal commits "segment sealed"
// to its metadata after the append that sealed it. With the leader's fsyncs
// deferred and no syncer running, every sealed segment must still be synced
// before that commit, so recovery never finds a sealed segment without its
// index frame.
func TestMetadataCommitSyncsDeferredSegments(t *testing.T) {
	dir := t.TempDir()
	track := &syncTrackingVFS{VFS: NewPowerLossVFS(nil), unsynced: map[string]bool{}}
	ls := &leaderSync{dirty: map[syncer]struct{}{}, changed: make(chan struct{}), wake: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	close(ls.done) // no syncer goroutine: only the metadata hook syncs
	leader := func() bool { return true }
	ls.shouldDefer.Store(&leader)
	s, err := newWALStore(openSmallWAL(dir, deferVFS{VFS: track, ls: ls}), ls, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := uint64(1); i <= 60; i++ {
		storeLogs(t, s, makeLogs(i, i, 1, 4096))
	}
	// Wait for the background rotations to finish.
	time.Sleep(200 * time.Millisecond)
	segs, err := s.meta.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	dirty, _ := track.state()
	sealed := 0
	for _, seg := range segs.Segments {
		if seg.SealTime.IsZero() {
			continue
		}
		sealed++
		if name := segment.FileName(seg); slices.Contains(dirty, name) {
			t.Errorf("segment %s is sealed in the metadata but has unsynced bytes", name)
		}
	}
	if sealed < 2 {
		t.Fatalf("%d sealed segments: the test needs rotations", sealed)
	}
	if d := ls.Durable(); d == 0 || d >= 60 {
		t.Fatalf("Durable = %d: rotations should have made some, not all, entries durable", d)
	}
}
