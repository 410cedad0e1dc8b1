package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/internal/testcluster"
)

// TestNothingAppliedBeforeTheLeaderFsynced: the leader's raft log fsync runs
// alongside replication, so raft commits an entry as soon as one follower
// has fsynced it. With the leader's fsync held, the entry reaches the
// followers' logs, but no node applies it and the send is not answered; once
// the fsync passes, every node applies it and the send succeeds.
func TestNothingAppliedBeforeTheLeaderFsynced(t *testing.T) {
	disks := testcluster.NewDiskFaults(func(cfg *node.Config) {
		// The hold below is shorter than this: the stall guard stays quiet.
		cfg.DiskStallTimeout = 10 * time.Second
	})
	c := testcluster.New(t, 3, testcluster.Options{FastTimings: true, Configure: disks.Configure})
	defer c.Close()
	leader := c.WaitLeader(10 * time.Second)
	c.CreateTopic("HeldTopic", 1)
	c.WaitConverged(10 * time.Second)
	before := leader.Node().FSM().AppliedIndex()
	lastBefore := leader.Node().Raft().LastIndex()

	disk := disks.Disk(leader.ID)
	disk.StallSyncs()
	defer disk.Resume()
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

	disk.Resume()
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
	disks := testcluster.NewDiskFaults(func(cfg *node.Config) {
		cfg.DiskStallTimeout = 10 * time.Second
		cfg.SerialLeaderFsync = true
	})
	c := testcluster.New(t, 3, testcluster.Options{FastTimings: true, Configure: disks.Configure})
	defer c.Close()
	leader := c.WaitLeader(10 * time.Second)
	c.CreateTopic("SerialTopic", 1)
	c.WaitConverged(10 * time.Second)
	lastBefore := leader.Node().Raft().LastIndex()

	disk := disks.Disk(leader.ID)
	disk.StallSyncs()
	defer disk.Resume()
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
			t.Fatalf("follower %s got the entry while the leader's fsync was held", m.ID)
		}
	}
	disk.Resume()
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
