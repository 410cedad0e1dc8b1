package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/raftlog"
)

// heldFsyncGroup starts a three-node group on testcluster's fault disks (the
// leader's raft log fsync can be held) with a one-queue topic, and returns it,
// its leader and the leader's disk. serial turns the overlap off.
func heldFsyncGroup(t *testing.T, topic string, serial bool, kind raftlog.LogStoreKind) (*testcluster.Cluster, *testcluster.Member, *testcluster.Disk) {
	t.Helper()
	disks := testcluster.NewDiskFaults(func(cfg *node.Config) {
		// The holds below are shorter than this: the stall guard stays quiet.
		cfg.DiskStallTimeout = 10 * time.Second
		cfg.SerialLeaderFsync = serial
		cfg.LogStore = kind
	})
	c := testcluster.New(t, 3, testcluster.Options{FastTimings: true, Configure: disks.Configure})
	t.Cleanup(c.Close)
	leader := c.WaitLeader(10 * time.Second)
	c.CreateTopic(topic, 1)
	c.WaitConverged(10 * time.Second)
	return c, leader, disks.Disk(leader.ID)
}

// sendAsync proposes one message to topic's queue 0 on the leader; the
// send's error arrives on the channel.
func sendAsync(leader *testcluster.Member, topic string) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := leader.Node().Propose(ctx, [][]byte{testcluster.Message(topic, 0, []byte("held"))})
		done <- err
	}()
	return done
}

// resumeAndAwait resumes disk and fails unless the send is then answered
// without an error within 10 s.
func resumeAndAwait(t *testing.T, disk *testcluster.Disk, done <-chan error) {
	t.Helper()
	disk.Resume()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("send after the fsync: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the send was not answered after the leader's fsync passed")
	}
}

// TestNothingAppliedBeforeTheLeaderFsynced: the leader's raft log fsync runs
// alongside replication, so raft commits an entry as soon as one follower
// has fsynced it. With the leader's fsync held, the entry reaches the
// followers' logs, but no node applies it and the send is not answered; once
// the fsync passes, every node applies it and the send succeeds.
func TestNothingAppliedBeforeTheLeaderFsynced(t *testing.T) {
	for _, kind := range raftLogKinds {
		t.Run(string(kind), func(t *testing.T) { runNothingAppliedBeforeTheLeaderFsynced(t, kind) })
	}
}

func runNothingAppliedBeforeTheLeaderFsynced(t *testing.T, kind raftlog.LogStoreKind) {
	c, leader, disk := heldFsyncGroup(t, "HeldTopic", false, kind)
	requireRaftLogKind(t, c, kind)
	before := leader.Node().FSM().AppliedIndex()
	lastBefore := leader.Node().Raft().LastIndex()

	disk.StallSyncs()
	defer disk.Resume()
	done := sendAsync(leader, "HeldTopic")

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
	case err := <-done:
		t.Fatalf("the send was answered (%v) before the leader's fsync", err)
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

	resumeAndAwait(t, disk, done)
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
	for _, kind := range raftLogKinds {
		t.Run(string(kind), func(t *testing.T) { runSerialLeaderFsyncSendsAfterTheFsync(t, kind) })
	}
}

func runSerialLeaderFsyncSendsAfterTheFsync(t *testing.T, kind raftlog.LogStoreKind) {
	c, leader, disk := heldFsyncGroup(t, "SerialTopic", true, kind)
	requireRaftLogKind(t, c, kind)
	lastBefore := leader.Node().Raft().LastIndex()

	disk.StallSyncs()
	defer disk.Resume()
	done := sendAsync(leader, "SerialTopic")
	time.Sleep(300 * time.Millisecond)
	for _, m := range c.Running() {
		if m.ID != leader.ID && m.Node().Raft().LastIndex() > lastBefore {
			t.Fatalf("follower %s got the entry while the leader's fsync was held", m.ID)
		}
	}
	resumeAndAwait(t, disk, done)
	c.WaitConverged(10 * time.Second)
	c.AssertReplicasIdentical()
}
