package testcluster

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/types"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/raftlog"
	"github.com/rocketraft/rocketraft/store"
)

// DiskFaults gives every node of a group a Disk: a fault layer under both of
// its write paths, the raft log's segment files (a raft-wal VFS) and the
// store's CommitLog (store.Config.IOHook). A Disk can make fsyncs slow, stall
// every write and fsync (or only the fsyncs) until resumed, or fill up (ENOSPC
// part way through a batch). Chaos scenarios D7–D9 use it. A node keeps its Disk across
// restarts, as a machine keeps its disk. Install it with
// Options{Configure: d.Configure}.
//
// Safe for concurrent use.
type DiskFaults struct {
	next func(*node.Config)

	mu    sync.Mutex
	disks map[raft.ServerID]*Disk
}

// NewDiskFaults returns healthy disks that also apply next (may be nil) to
// each node's config.
func NewDiskFaults(next func(*node.Config)) *DiskFaults {
	return &DiskFaults{next: next, disks: map[raft.ServerID]*Disk{}}
}

// Disk is id's disk, created on first use.
func (d *DiskFaults) Disk(id raft.ServerID) *Disk {
	d.mu.Lock()
	defer d.mu.Unlock()
	k, ok := d.disks[id]
	if !ok {
		k = &Disk{id: id, resumed: closedChan(), syncsResumed: closedChan()}
		d.disks[id] = k
	}
	return k
}

// Configure is the Options.Configure hook.
func (d *DiskFaults) Configure(cfg *node.Config) {
	if d.next != nil {
		d.next(cfg)
	}
	disk := d.Disk(cfg.ID)
	if cfg.LogStore != raftlog.LogStoreCommitLog {
		cfg.LogStore = raftlog.LogStoreWAL
		cfg.OpenRaftStores = func(dir string, _ raftlog.LogStoreKind, logger hclog.Logger) (*raftlog.Stores, error) {
			return raftlog.OpenStoresVFS(dir, &diskVFS{inner: fs.New(), disk: disk}, logger)
		}
	}
	// With the commitlog kind the raft log is the CommitLog: this hook is then its
	// disk too (its fdatasync is an IOSync).
	cfg.Store.IOHook = disk.storeIO
}

// stall replaces *resumed, if it is closed (not stalled), with an open
// channel that the calls waiting on it block on until Resume. Caller holds
// the Disk's mu.
func stall(resumed *chan struct{}) {
	select {
	case <-*resumed:
		*resumed = make(chan struct{})
	default: // already stalled
	}
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Disk is one node's disk. The zero state is healthy. Faults compose: a full
// disk can also be slow.
type Disk struct {
	id raft.ServerID

	mu sync.Mutex
	// syncMin and syncMax bound the delay added to every fsync (0: none).
	syncMin, syncMax time.Duration
	// resumed is open while the disk is stalled and closed otherwise; every
	// write and fsync waits on it.
	resumed chan struct{}
	// syncsResumed is the same for fsyncs alone (StallSyncs).
	syncsResumed chan struct{}
	// stallAtWrite starts a stall at the next CommitLog record write.
	stallAtWrite bool
	// raftRoom is 1 + how many more raft log bytes fit, 0 for unlimited (so
	// the zero value is healthy); the write that does not fit is cut short
	// with ENOSPC and the disk is full.
	raftRoom int64
	// storeFullAt is 1 + the record of the next CommitLog batch (with more
	// records than that) that fails with ENOSPC, 0 for disarmed.
	storeFullAt int
	// full: every write, fsync and create fails with ENOSPC until Free.
	full  bool
	stats DiskStats
}

// DiskStats counts what a Disk did.
type DiskStats struct {
	// SlowSyncs is the fsyncs delayed; Stalled the writes and fsyncs that
	// waited for Resume, StalledStore those of them on the CommitLog (the FSM
	// blocked inside an apply, or the store's flusher).
	SlowSyncs, Stalled, StalledStore int
	// RaftENOSPC and StoreENOSPC count refused raft log and CommitLog calls.
	RaftENOSPC, StoreENOSPC int
	// CutWrite describes the raft log write cut short ("" if none): bytes
	// written of the bytes asked.
	CutWrite string
	// CutBatch describes the CommitLog batch refused part way ("" if none):
	// the record refused of the batch's records.
	CutBatch string
}

// SlowSyncs adds a delay uniform in [lo, hi] to every fsync of the raft log
// and the CommitLog; lo = hi = 0 heals.
func (k *Disk) SlowSyncs(lo, hi time.Duration) {
	k.mu.Lock()
	k.syncMin, k.syncMax = lo, hi
	k.mu.Unlock()
}

// Stall makes every later write and fsync (raft log and CommitLog) block until
// Resume, as a disk that stops answering does. Calls already inside the disk
// finish.
func (k *Disk) Stall() {
	k.mu.Lock()
	stall(&k.resumed)
	k.mu.Unlock()
}

// StallSyncs makes every later fsync (raft log and CommitLog) block until
// Resume while writes go on: a disk whose cache flushes hang, or, for a test,
// the leader's raft log fsync held while its write has been sent on.
func (k *Disk) StallSyncs() {
	k.mu.Lock()
	stall(&k.syncsResumed)
	k.mu.Unlock()
}

// StallAtNextStoreWrite stalls the disk when the next CommitLog record is
// written, so the FSM is caught inside an apply (holding its lock) — the
// instant a stall is hardest on a node, as a power cut inside an fsync is for
// D2.
func (k *Disk) StallAtNextStoreWrite() {
	k.mu.Lock()
	k.stallAtWrite = true
	k.mu.Unlock()
}

// Resume ends a Stall or StallSyncs; every blocked call proceeds.
func (k *Disk) Resume() {
	k.mu.Lock()
	for _, ch := range []chan struct{}{k.resumed, k.syncsResumed} {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
	k.mu.Unlock()
}

// FillRaftLogAfter lets room more bytes into the raft log; the write that
// does not fit writes what fits and fails with ENOSPC (a batch of entries cut
// part way), and from then on the disk is full.
func (k *Disk) FillRaftLogAfter(room int64) {
	k.mu.Lock()
	k.raftRoom = room + 1
	k.mu.Unlock()
}

// FillStoreAt makes record i of the next CommitLog batch with more than i
// records fail with ENOSPC (the records before it were copied), and from then
// on the disk is full.
func (k *Disk) FillStoreAt(i int) {
	k.mu.Lock()
	k.storeFullAt = i + 1
	k.mu.Unlock()
}

// Free gives the disk its space back: no more ENOSPC, nothing armed.
func (k *Disk) Free() {
	k.mu.Lock()
	k.full, k.raftRoom, k.storeFullAt = false, 0, 0
	k.mu.Unlock()
}

// IsFull reports whether the disk answers ENOSPC.
func (k *Disk) IsFull() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.full
}

// Stats returns the counters so far.
func (k *Disk) Stats() DiskStats {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.stats
}

// wait blocks while the disk is stalled.
func (k *Disk) wait(commitLog bool) {
	k.mu.Lock()
	ch := k.resumed
	k.mu.Unlock()
	k.waitOn(ch, commitLog)
}

// waitSync is wait for an fsync, which StallSyncs holds too.
func (k *Disk) waitSync(commitLog bool) {
	k.wait(commitLog)
	k.mu.Lock()
	ch := k.syncsResumed
	k.mu.Unlock()
	k.waitOn(ch, commitLog)
}

// waitOn blocks until ch is closed, counting the call as stalled if it waits.
func (k *Disk) waitOn(ch chan struct{}, commitLog bool) {
	select {
	case <-ch:
	default:
		k.mu.Lock()
		k.stats.Stalled++
		if commitLog {
			k.stats.StalledStore++
		}
		k.mu.Unlock()
		<-ch
	}
}

// syncDelay sleeps the configured fsync delay.
func (k *Disk) syncDelay() {
	k.mu.Lock()
	lo, hi := k.syncMin, k.syncMax
	if hi > 0 {
		k.stats.SlowSyncs++
	}
	k.mu.Unlock()
	if hi <= 0 {
		return
	}
	d := lo
	if hi > lo {
		d += rand.N(hi - lo)
	}
	time.Sleep(d)
}

func enospc(what string) error {
	return fmt.Errorf("%s: %w", what, syscall.ENOSPC)
}

// storeIO is the store's IOHook.
func (k *Disk) storeIO(c store.IOCall) error {
	if c.Op == store.IOWrite {
		k.mu.Lock()
		if k.stallAtWrite {
			k.stallAtWrite = false
			stall(&k.resumed)
		}
		k.mu.Unlock()
	}
	if c.Op == store.IOSync {
		k.waitSync(true)
		k.syncDelay()
	} else {
		k.wait(true)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if c.Op == store.IOWrite && k.storeFullAt > 0 && c.Record == k.storeFullAt-1 && c.Records > c.Record {
		k.full, k.storeFullAt = true, 0
		k.stats.CutBatch = fmt.Sprintf("record %d of %d", c.Record, c.Records)
	}
	if k.full && c.Op != store.IOSync {
		k.stats.StoreENOSPC++
		return enospc(fmt.Sprintf("%s %s on %s", c.Op, filepath.Base(c.Path), k.id))
	}
	return nil
}

// beforeRaftWrite decides how many of n bytes a raft log write may write.
func (k *Disk) beforeRaftWrite(n int) (int, error) {
	k.wait(false)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.full {
		k.stats.RaftENOSPC++
		return 0, enospc(fmt.Sprintf("raft log write on %s", k.id))
	}
	if k.raftRoom == 0 {
		return n, nil
	}
	room := k.raftRoom - 1
	if int64(n) <= room {
		k.raftRoom -= int64(n)
		return n, nil
	}
	k.full, k.raftRoom = true, 0
	k.stats.RaftENOSPC++
	k.stats.CutWrite = fmt.Sprintf("%d of %d bytes", room, n)
	return int(room), enospc(fmt.Sprintf("raft log write on %s", k.id))
}

// diskVFS is raft-wal's file system on a Disk.
type diskVFS struct {
	inner types.VFS
	disk  *Disk
}

var _ types.VFS = (*diskVFS)(nil)

func (v *diskVFS) ListDir(dir string) ([]string, error) { return v.inner.ListDir(dir) }

func (v *diskVFS) OpenReader(dir, name string) (types.ReadableFile, error) {
	return v.inner.OpenReader(dir, name)
}

func (v *diskVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	v.disk.wait(false)
	if v.disk.IsFull() {
		v.disk.mu.Lock()
		v.disk.stats.RaftENOSPC++
		v.disk.mu.Unlock()
		return nil, enospc("create raft log segment " + name)
	}
	f, err := v.inner.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return &diskFile{WritableFile: f, disk: v.disk}, nil
}

func (v *diskVFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := v.inner.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return &diskFile{WritableFile: f, disk: v.disk}, nil
}

func (v *diskVFS) Delete(dir, name string) error { return v.inner.Delete(dir, name) }

// diskFile is one raft log segment file on a Disk.
type diskFile struct {
	types.WritableFile
	disk *Disk
}

func (f *diskFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.disk.beforeRaftWrite(len(p))
	if n > 0 {
		w, werr := f.WritableFile.WriteAt(p[:n], off)
		if werr != nil {
			return w, werr
		}
	}
	return n, err
}

func (f *diskFile) Sync() error {
	// A full disk still syncs what was written: ENOSPC comes from the write
	// that did not fit, which raft-wal sees before it syncs.
	f.disk.waitSync(false)
	f.disk.syncDelay()
	return f.WritableFile.Sync()
}
