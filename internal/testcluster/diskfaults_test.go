package testcluster

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// TestDiskStallAndENOSPCOnAFollower drives a Disk's faults under a real group:
// a stalled follower applies nothing until resumed while the group commits;
// a follower whose raft log fills mid-write (a short write, then ENOSPC) and
// whose CommitLog fills at record 1 of a batch stays up, and after Free every
// replica ends identical.
func TestDiskStallAndENOSPCOnAFollower(t *testing.T) {
	disks := NewDiskFaults(nil)
	c := New(t, 3, Options{FastTimings: true, TCP: true, Configure: disks.Configure})
	c.CreateTopic("T", 4)
	l := c.WaitLeader(5 * time.Second)
	var f *Member
	for _, m := range c.Members() {
		if m.ID != l.ID {
			f = m
			break
		}
	}
	propose := func(n int, tag string) {
		t.Helper()
		for i := range n {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			msgs := [][]byte{Message("T", int32(i%4), fmt.Appendf(nil, "%s-%d-a", tag, i)), Message("T", int32(i%4), fmt.Appendf(nil, "%s-%d-b", tag, i))}
			_, err := c.Propose(ctx, msgs)
			cancel()
			if err != nil {
				t.Fatalf("%s: propose %d: %v", tag, i, err)
			}
		}
	}
	propose(20, "warm")
	c.WaitConverged(5 * time.Second)

	disk := disks.Disk(f.ID)
	disk.Stall()
	before := f.Node().State().AppliedIndex
	propose(50, "stalled")
	if got := f.Node().State().AppliedIndex; got != before {
		t.Fatalf("stalled follower %s applied %d → %d", f.ID, before, got)
	}
	if disk.Stats().Stalled == 0 {
		t.Fatal("no write waited on the stalled disk")
	}
	disk.Resume()
	c.WaitConverged(10 * time.Second)

	disk.FillRaftLogAfter(100)
	propose(30, "raftfull")
	st := disk.Stats()
	if !disk.IsFull() || st.CutWrite == "" || st.RaftENOSPC == 0 {
		t.Fatalf("raft log never filled: %+v", st)
	}
	disk.Free()
	c.WaitConverged(10 * time.Second)

	disk.FillStoreAt(1)
	propose(30, "storefull")
	deadline := time.Now().Add(5 * time.Second)
	for disk.Stats().CutBatch == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := disk.Stats(); st.CutBatch != "record 1 of 2" || st.StoreENOSPC == 0 {
		t.Fatalf("CommitLog never refused record 1 of a batch: %+v", st)
	}
	if f.Node() == nil {
		t.Fatal("the full follower's node is gone")
	}
	disk.Free()
	c.AssertReplicasIdentical()
}

// TestDiskENOSPCIsRecognisable: the errors a full Disk returns wrap
// syscall.ENOSPC, which the FSM's wait for space keys on.
func TestDiskENOSPCIsRecognisable(t *testing.T) {
	k := &Disk{id: "x", resumed: closedChan()}
	k.FillRaftLogAfter(10)
	if n, err := k.beforeRaftWrite(8); n != 8 || err != nil {
		t.Fatalf("first write: %d, %v; want 8, nil", n, err)
	}
	n, err := k.beforeRaftWrite(8)
	if n != 2 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write past the room: %d, %v; want 2 bytes and ENOSPC", n, err)
	}
	if _, err := k.beforeRaftWrite(1); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v, want ENOSPC", err)
	}
	k.Free()
	if n, err := k.beforeRaftWrite(1 << 20); n != 1<<20 || err != nil {
		t.Fatalf("after Free: %d, %v", n, err)
	}
}
