package testcluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/raftlog"
	"github.com/rocketraft/rocketraft/store"
)

// Faults puts fault layers under every node of a group: its raft LogStore is
// wrapped in a raftlog.FaultyLogStore (write errors, scenario D1) and its
// raft-wal segments live on a raftlog.PowerLossVFS (lost unsynced writes,
// scenario D2). Both do nothing until asked. Install it with
// Options{Configure: faults.Configure}; every (re)start of a node gets fresh
// layers, which LogStore and VFS return.
//
// Safe for concurrent use.
type Faults struct {
	next func(*node.Config)

	mu   sync.Mutex
	logs map[raft.ServerID]*raftlog.FaultyLogStore
	vfs  map[raft.ServerID]*raftlog.PowerLossVFS
}

// NewFaults returns fault layers that also apply next (may be nil) to each
// node's config.
func NewFaults(next func(*node.Config)) *Faults {
	return &Faults{next: next, logs: map[raft.ServerID]*raftlog.FaultyLogStore{}, vfs: map[raft.ServerID]*raftlog.PowerLossVFS{}}
}

// Configure is the Options.Configure hook.
func (f *Faults) Configure(cfg *node.Config) {
	if f.next != nil {
		f.next(cfg)
	}
	id := cfg.ID
	cfg.LogStore = raftlog.LogStoreWAL
	cfg.OpenRaftStores = func(dir string, _ raftlog.LogStoreKind, logger hclog.Logger) (*raftlog.Stores, error) {
		v := raftlog.NewPowerLossVFS(nil)
		f.mu.Lock()
		f.vfs[id] = v
		f.mu.Unlock()
		return raftlog.OpenStoresVFS(dir, v, logger)
	}
	cfg.WrapLogStore = func(inner raft.LogStore) raft.LogStore {
		fl := raftlog.NewFaultyLogStore(inner)
		f.mu.Lock()
		f.logs[id] = fl
		f.mu.Unlock()
		return fl
	}
}

// LogStore is the FaultyLogStore of id's latest start.
func (f *Faults) LogStore(id raft.ServerID) *raftlog.FaultyLogStore {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.logs[id]
}

// VFS is the PowerLossVFS of id's latest start.
func (f *Faults) VFS(id raft.ServerID) *raftlog.PowerLossVFS {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.vfs[id]
}

// cutAll cuts the power of every node's raft log under one lock: the same
// instant as far as any writer can tell.
func (f *Faults) cutAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, v := range f.vfs {
		v.Cut()
	}
}

// PowerLossResult is what one node lost in PowerLoss.
type PowerLossResult struct {
	ID raft.ServerID
	// Flushed and Appended are the CommitLog's durable and appended ends at the
	// cut; everything from Flushed on was zeroed.
	Flushed, Appended store.PhysicalOffset
	// RaftLog is what the raft log's file layer put back (unsynced writes).
	RaftLog raftlog.PowerLossStats
}

// nodeImage is what survives a power cut of one node besides the raft log:
// the two checkpoint files as they were at the cut (both are written by
// rename, so a copy is one whole version) and the CommitLog's durable end.
type nodeImage struct {
	m                 *Member
	fsmCk, storeCk    []byte // nil: file absent
	flushed, appended store.PhysicalOffset
}

// Store file names this harness rewrites (store/checkpoint.go, fsm/checkpoint.go).
const (
	storeCheckpointFile = "checkpoint"
	storeAbortFile      = "abort"
)

// PowerLoss cuts the power of every running node at once and leaves each
// node's disk as a machine losing its page cache would: raft-wal writes not
// yet fsynced are undone, every CommitLog byte at or past the store's flushed
// offset at the cut is zeroed, the store and FSM checkpoints are the versions
// that existed at the cut and the store's abort marker is present (no clean
// shutdown). ConsumeQueues and IndexFiles keep whatever the nodes wrote, a
// legal outcome too (the kernel may have written those pages back), which
// the store's recovery must cut to the CommitLog. Then the nodes are stopped;
// RestartNode each to bring them back. f must be the group's Faults.
//
// Between the cut and the stop, raft logs fail every write (ErrPowerCut), so
// nothing that becomes durable after the cut can be acknowledged, and
// entries the FSM still applies were fsynced in the raft log before it.
func (c *Cluster) PowerLoss(f *Faults) []PowerLossResult {
	c.t.Helper()
	f.cutAll()
	var imgs []nodeImage
	for _, m := range c.Running() {
		img, err := captureImage(m)
		if err != nil {
			c.t.Fatalf("power loss: %v", err)
		}
		imgs = append(imgs, img)
	}
	for _, img := range imgs {
		c.pullPlug(img.m)
	}
	var out []PowerLossResult
	for _, img := range imgs {
		r := PowerLossResult{ID: img.m.ID, Flushed: img.flushed, Appended: img.appended}
		if err := img.restore(); err != nil {
			c.t.Fatalf("power loss of %s: %v", img.m.ID, err)
		}
		st, err := f.VFS(img.m.ID).DropUnsynced()
		if err != nil {
			c.t.Fatalf("power loss of %s: raft log: %v", img.m.ID, err)
		}
		r.RaftLog = st
		out = append(out, r)
	}
	return out
}

func captureImage(m *Member) (nodeImage, error) {
	img := nodeImage{m: m}
	storeDir := filepath.Join(m.Dir, node.StoreDirName)
	var err error
	// Checkpoints first, offsets after: each checkpoint names at most what was
	// flushed when it was written, so at most img.flushed.
	if img.fsmCk, err = readIfExists(filepath.Join(storeDir, fsm.CheckpointFile)); err != nil {
		return img, err
	}
	if img.storeCk, err = readIfExists(filepath.Join(storeDir, storeCheckpointFile)); err != nil {
		return img, err
	}
	st := m.Node().Store()
	img.flushed, img.appended = st.FlushedPhysicalOffset(), st.MaxPhysicalOffset()
	return img, nil
}

func readIfExists(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// pullPlug stops m's node without a final checkpoint. Its raft log refuses
// writes by now, so shutdown errors that say so are expected.
func (c *Cluster) pullPlug(m *Member) {
	c.t.Helper()
	m.mu.Lock()
	n := m.node
	m.node, m.inmem = nil, nil
	m.mu.Unlock()
	if n == nil {
		return
	}
	if err := n.Kill(); err != nil && !errors.Is(err, raftlog.ErrPowerCut) {
		c.t.Fatalf("pull the plug of %s: %v", m.ID, err)
	}
	if !c.opts.TCP {
		c.rewire()
	}
}

// restore rewrites the store directory of a stopped node to its image.
func (img nodeImage) restore() error {
	storeDir := filepath.Join(img.m.Dir, node.StoreDirName)
	if err := zeroCommitLogFrom(filepath.Join(storeDir, "commitlog"), int64(img.flushed)); err != nil {
		return err
	}
	for name, content := range map[string][]byte{fsm.CheckpointFile: img.fsmCk, storeCheckpointFile: img.storeCk} {
		path := filepath.Join(storeDir, name)
		if content == nil {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove %s: %w", path, err)
			}
			continue
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return fmt.Errorf("restore %s: %w", path, err)
		}
	}
	if err := os.WriteFile(filepath.Join(storeDir, storeAbortFile), nil, 0o644); err != nil {
		return fmt.Errorf("abort marker: %w", err)
	}
	return nil
}

// zeroCommitLogFrom zeroes every CommitLog byte at global offset from or later
// (segment files are named by their 20-digit start offset).
func zeroCommitLogFrom(dir string, from int64) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	var names []string
	for _, e := range ents {
		if len(e.Name()) == 20 && !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	zeros := make([]byte, 1<<20)
	for _, name := range names {
		var start int64
		if _, err := fmt.Sscanf(name, "%d", &start); err != nil {
			continue
		}
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		lo := max(from-start, 0)
		if lo >= fi.Size() {
			continue
		}
		if err := zeroRange(path, lo, fi.Size(), zeros); err != nil {
			return err
		}
	}
	return nil
}

func zeroRange(path string, lo, hi int64, zeros []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	for off := lo; off < hi; {
		n := min(int64(len(zeros)), hi-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			_ = f.Close()
			return fmt.Errorf("zero %s at %d: %w", path, off, err)
		}
		off += n
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return f.Close()
}
