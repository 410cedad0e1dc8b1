package raftlog

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestFaultyLogStore(t *testing.T) {
	for _, kind := range []LogStoreKind{LogStoreWAL, LogStoreBoltDB} {
		t.Run(string(kind), func(t *testing.T) {
			s := openStores(t, t.TempDir(), kind)
			defer s.Close()
			f := NewFaultyLogStore(s.Log)
			if f.IsMonotonic() != (kind == LogStoreWAL) {
				t.Fatalf("IsMonotonic = %v, want the backend's", f.IsMonotonic())
			}

			storeLogs(t, f, makeLogs(1, 3, 1, 16))
			f.FailStores(nil)
			err := f.StoreLogs(makeLogs(4, 5, 1, 16))
			if !errors.Is(err, ErrInjectedFault) {
				t.Fatalf("StoreLogs while failing err = %v, want ErrInjectedFault", err)
			}
			diskFull := errors.New("no space left on device")
			f.FailStores(diskFull)
			if err := f.StoreLog(makeLog(4, 1, 16)); !errors.Is(err, diskFull) {
				t.Fatalf("StoreLog while failing err = %v, want the injected error", err)
			}
			if got := f.InjectedFailures(); got != 2 {
				t.Fatalf("InjectedFailures = %d, want 2", got)
			}
			// Nothing reached the store; reads and deletes still work.
			requireBounds(t, f, 1, 3)
			requireNotFound(t, f, 4)
			requireLog(t, f, makeLog(2, 1, 16))

			f.Heal()
			storeLogs(t, f, makeLogs(4, 5, 1, 16))
			requireBounds(t, s.Log, 1, 5)
			if err := f.DeleteRange(1, 2); err != nil {
				t.Fatal(err)
			}
			requireBounds(t, s.Log, 3, 5)
			if got := f.InjectedFailures(); got != 2 {
				t.Fatalf("InjectedFailures after heal = %d, want 2", got)
			}
		})
	}
}

// A leader whose log store fails must not acknowledge the entry, must step down,
// and the entry must exist nowhere: the property chaos scenario D1 checks on
// real processes.
func TestClusterLeaderStoreFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("3-node raft cluster with fsync; skipped in -short")
	}
	root := t.TempDir()
	var nodes []*testNode
	for _, id := range []raft.ServerID{"n0", "n1", "n2"} {
		nodes = append(nodes, startNode(t, id, filepath.Join(root, string(id)), LogStoreWAL))
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.stop(t)
		}
	})
	connectAll(nodes)
	var servers []raft.Server
	for _, n := range nodes {
		servers = append(servers, raft.Server{ID: n.id, Address: n.addr, Suffrage: raft.Voter})
	}
	if err := nodes[0].raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		t.Fatal(err)
	}
	applyRange(t, nodes, 1, 10)

	old := waitLeader(t, nodes)
	old.faulty.FailStores(nil)
	err := old.raft.Apply([]byte("never-acked"), 5*time.Second).Error()
	if err == nil {
		t.Fatal("Apply on a leader whose log store fails returned no error")
	}
	if old.faulty.InjectedFailures() == 0 {
		t.Fatal("the fault was never exercised")
	}
	waitFor(t, 10*time.Second, "the failing leader to step down", func() bool {
		return old.raft.State() != raft.Leader
	})
	old.faulty.Heal()

	applyRange(t, nodes, 11, 20)
	want := make([]string, 20)
	for i := range want {
		want[i] = fmt.Sprintf("entry-%04d", i+1)
	}
	for _, n := range nodes {
		waitFor(t, 10*time.Second, fmt.Sprintf("%s to apply 20 entries", n.id), func() bool {
			return len(n.fsm.snapshot()) >= 20
		})
		if got := n.fsm.snapshot(); !slices.Equal(got, want) {
			t.Fatalf("node %s applied %q, want %q (the failed entry must appear nowhere)", n.id, got, want)
		}
	}
}
