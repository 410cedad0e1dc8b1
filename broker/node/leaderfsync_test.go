package node_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/types"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/raftlog"
)

// heldFsyncs puts every node's raft-wal segments on a VFS whose fsyncs can be
// held, one switch per node.
type heldFsyncs struct {
	mu    sync.Mutex
	gates map[raft.ServerID]chan struct{} // non-nil: fsyncs wait for it to close
}

func (h *heldFsyncs) configure(cfg *node.Config) {
	id := cfg.ID
	cfg.LogStore = raftlog.LogStoreWAL
	cfg.OpenRaftStores = func(dir string, _ raftlog.LogStoreKind, logger hclog.Logger) (*raftlog.Stores, error) {
		return raftlog.OpenStoresVFS(dir, heldVFS{VFS: fs.New(), h: h, id: id}, logger)
	}
}

func (h *heldFsyncs) hold(id raft.ServerID) {
	h.mu.Lock()
	h.gates[id] = make(chan struct{})
	h.mu.Unlock()
}

func (h *heldFsyncs) release(id raft.ServerID) {
	h.mu.Lock()
	if g := h.gates[id]; g != nil {
		close(g)
		delete(h.gates, id)
	}
	h.mu.Unlock()
}

func (h *heldFsyncs) wait(id raft.ServerID) {
	h.mu.Lock()
	g := h.gates[id]
	h.mu.Unlock()
	if g != nil {
		<-g
	}
}

type heldVFS struct {
	types.VFS
	h  *heldFsyncs
	id raft.ServerID
}

func (v heldVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := v.VFS.Create(dir, name, size)
	return heldFile{WritableFile: f, v: v}, err
}

func (v heldVFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := v.VFS.OpenWriter(dir, name)
	return heldFile{WritableFile: f, v: v}, err
}

type heldFile struct {
	types.WritableFile
	v heldVFS
}

func (f heldFile) Sync() error {
	f.v.h.wait(f.v.id)
	return f.WritableFile.Sync()
}

// TestNothingAppliedBeforeTheLeaderFsynced: the leader's raft log fsync runs
// alongside replication, so raft commits an entry as soon as one follower
// has fsynced it. With the leader's fsync held, the entry reaches the
// followers' logs, but no node applies it and the send is not answered; once
// the fsync passes, every node applies it and the send succeeds.
func TestNothingAppliedBeforeTheLeaderFsynced(t *testing.T) {
	h := &heldFsyncs{gates: map[raft.ServerID]chan struct{}{}}
	c := testcluster.New(t, 3, testcluster.Options{FastTimings: true, Configure: func(cfg *node.Config) {
		h.configure(cfg)
		// The hold below is shorter than this: the stall guard stays quiet.
		cfg.DiskStallTimeout = 10 * time.Second
	}})
	defer c.Close()
	leader := c.WaitLeader(10 * time.Second)
	c.CreateTopic("HeldTopic", 1)
	c.WaitConverged(10 * time.Second)
	before := leader.Node().FSM().AppliedIndex()
	lastBefore := leader.Node().Raft().LastIndex()

	h.hold(leader.ID)
	defer h.release(leader.ID)
	type sent struct {
		err error
	}
	done := make(chan sent, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := leader.Node().Propose(ctx, [][]byte{testcluster.Message("HeldTopic", 0, []byte("held"))})
		done <- sent{err}
	}()

	// Both followers get the entry into their own (fsynced) logs.
	deadline := time.Now().Add(10 * time.Second)
	for _, m := range c.Running() {
		if m.ID == leader.ID {
			continue
		}
		for m.Node().Raft().LastIndex() <= lastBefore {
			if time.Now().After(deadline) {
				t.Fatalf("follower %s never stored the entry", m.ID)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// Give commit and apply time to happen if they were going to.
	time.Sleep(300 * time.Millisecond)
	select {
	case s := <-done:
		t.Fatalf("the send was answered (%v) before the leader's fsync", s.err)
	default:
	}
	for _, m := range c.Running() {
		if got := m.Node().FSM().AppliedIndex(); got > before {
			t.Fatalf("%s applied index %d, past %d, before the leader fsynced the entry", m.ID, got, before)
		}
	}
	if leader.Node().Raft().CommitIndex() <= before {
		t.Fatalf("raft did not commit the entry (commit index %d): the test holds nothing back", leader.Node().Raft().CommitIndex())
	}

	h.release(leader.ID)
	select {
	case s := <-done:
		if s.err != nil {
			t.Fatalf("send after the fsync: %v", s.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the send was not answered after the leader's fsync passed")
	}
	want := leader.Node().FSM().AppliedIndex()
	if want <= before {
		t.Fatalf("leader applied index %d, want past %d", want, before)
	}
	c.WaitApplied(want, 10*time.Second)
	c.AssertReplicasIdentical()
}

// TestSerialLeaderFsyncSendsAfterTheFsync: with the overlap turned off
// (raftLeaderFsyncOverlap=false) the leader fsyncs each batch before raft
// sends it, as hashicorp/raft does by itself: while the leader's fsync is
// held, no follower gets the entry.
func TestSerialLeaderFsyncSendsAfterTheFsync(t *testing.T) {
	h := &heldFsyncs{gates: map[raft.ServerID]chan struct{}{}}
	c := testcluster.New(t, 3, testcluster.Options{FastTimings: true, Configure: func(cfg *node.Config) {
		h.configure(cfg)
		cfg.DiskStallTimeout = 10 * time.Second
		cfg.SerialLeaderFsync = true
	}})
	defer c.Close()
	leader := c.WaitLeader(10 * time.Second)
	c.CreateTopic("SerialTopic", 1)
	c.WaitConverged(10 * time.Second)
	lastBefore := leader.Node().Raft().LastIndex()

	h.hold(leader.ID)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := leader.Node().Propose(ctx, [][]byte{testcluster.Message("SerialTopic", 0, []byte("serial"))})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	for _, m := range c.Running() {
		if m.ID != leader.ID && m.Node().Raft().LastIndex() > lastBefore {
			h.release(leader.ID)
			t.Fatalf("follower %s got the entry while the leader's fsync was held", m.ID)
		}
	}
	h.release(leader.ID)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("send after the fsync: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the send was not answered after the leader's fsync passed")
	}
	c.WaitConverged(10 * time.Second)
	c.AssertReplicasIdentical()
}
