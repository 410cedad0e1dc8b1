// Package testcluster is an in-process N-node broker-group harness for tests
// (raft's in-memory transport for fast tests, loopback TCP for realistic ones)
// with partition and heal. Only tests import it (the import-rule test enforces
// it).
//
// Each node has its own t.TempDir data directory and a real store and raft log
// (fsync on). The harness can stop a node cleanly, "crash" it (no final apply
// checkpoint, then a torn record written after the CommitLog's last one), wipe
// its data, restart it, add new nodes, and cut the in-memory links between two
// sides of a partition. AssertReplicasIdentical waits until every running node
// has applied the leader's last index and checks design.md §4's invariant:
// CommitLog bytes identical from the highest minimum offset to the common
// applied offset, and identical ConsumeQueues.
//
// Concurrency: Leader, Member, Running and Propose are safe from any
// goroutine (producers); the lifecycle methods (StopNode, CrashNode,
// RestartNode, WipeNode, AddNode, Partition, Heal) belong to the test
// goroutine.
//
// Usage:
//
//	c := testcluster.New(t, 3, testcluster.Options{FastTimings: true})
//	c.CreateTopic("T", 8)
//	res, err := c.Propose(ctx, [][]byte{testcluster.Message("T", 0, body)})
//	c.Partition(c.Leader().ID) // isolate the leader
//	c.Heal()
//	c.AssertReplicasIdentical()
//
// Faults (faults.go) plugs fault injection into Options.Configure: a
// raftlog.FaultyLogStore per node (fail raft log writes, chaos D1) and a
// raftlog.PowerLossVFS per node, used by PowerLoss to drop everything not fsynced
// on every node at once (chaos D2). Clocks (clock.go) gives every node its own
// wall clock (node.Config.Now) that a test steps forward or back (chaos C1–C5).
// DiskFaults (diskfaults.go) gives each node
// a Disk under both its raft log segments (a raft-wal VFS) and its CommitLog
// (store.Config.IOHook): slow fsyncs, a stall of every write and fsync, ENOSPC
// part way through a batch (chaos D7–D9).
package testcluster
