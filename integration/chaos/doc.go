// Package chaos is rocketraft's chaos and durability suite: real rocketraft
// processes (a nameserver and a three-node raft group, each node with its own data
// directory) behind per-link TCP proxies, a recording workload, a nemesis that kills,
// pauses, partitions and corrupts, and a checker that judges the recorded history
// against every replica's final log (docs/reliability.md, reliability-plan.md).
//
// # What it owns and must not import
//
// It owns the harness (cluster.go, proxy.go, and proc.go, which adds pausing to
// the processes of internal/proctest; free ports, starting, stopping and killing
// processes and writing their config files come from proctest, shared with the
// integration tests), the workload (workload.go, sender.go, reader.go), the
// background load every scenario runs beside it (load.go: Go, raw and Java
// producers measured flat out, then paced to 45 % of that; java.go runs
// integration/java/chaosload's JVM as a child process and turns its lines
// into the History), the offline replica reader (replica.go) and
// the checker (history.go, checker.go, report.go). It talks to the code under test only over the wire (transport,
// nameserver client, rocketmq-client-go) and reads stopped replicas' stores
// offline with the store package; it must not import broker, broker/node or fsm,
// so it tests what a deployment runs, not internals.
//
// # Consumer groups
//
// Every scenario with a workload also runs, per topic it acknowledges sends
// to, a concurrent and an orderly group of two rocketmq-client-go push
// consumers (consumers.go), records every delivery and polls every group's
// committed offsets from brokerId 0 (consumer_history.go); the checker's
// consumer-side checks are in checker_consumers.go.
//
// Scenario O1 (full matrix) resets the concurrent groups' offsets back in time
// during failovers, as an operator does with mqadmin resetOffsetByTime
// (reset.go sends INVOKE_BROKER_TO_RESET_OFFSET and reads the answer's
// queue → offset table), and records each reset point with
// History.AddOffsetReset while no offset poll is in flight
// (Consumers.Quiet); checker_resets.go holds the group to getting every
// message from the reset point up to the offset committed before it again.
//
// # On a real network
//
// With Options.Net (netns.go, netns_faults.go) every process runs in its own
// Linux network namespace with its own 10.x address, joined by veth pairs to a
// bridge in a namespace of its own, and the test process reaches them through
// a veth of its own; raft links are direct, and faults are the kernel's: a
// link taken down (blackhole: no RST, peers only time out), nftables drop
// rules in one direction, random loss (nft numgen), isolation from the peers
// only or from the nameserver only, a link flapping. It needs root, ip and nft
// (tests skip without them); every namespace and link is removed at Cleanup,
// and what a crashed run left is swept by name at the next start.
//
// # Concurrency
//
// Every Proxy runs one accept goroutine and two copy goroutines per connection; its
// per-direction mode is an atomic read by the copiers on every chunk. A Cluster is
// driven by one test goroutine (the nemesis); the workload runs its own goroutines
// and appends to a History under a mutex. The checker is pure: it takes a History
// and the replicas' logs and returns a Report.
//
// # Usage
//
//	c, err := chaos.StartCluster(chaos.Options{Bin: bin, Dir: dir, Logger: log})
//	w := chaos.StartWorkload(ctx, c, chaos.WorkloadOptions{Producers: 3, Rate: 200})
//	leader, _ := c.Leader(ctx)
//	c.Kill(leader); c.Start(leader)          // the nemesis
//	w.Stop()
//	c.HealAll(); c.WaitConverged(ctx)
//	logs, _ := c.StopAndReadReplicas()
//	rep := chaos.Check(w.History(), logs)
//
// The in-process scenarios (D1, D2, the disk scenarios D7–D9 and the clock
// scenarios C1–C5) inject their faults through internal/testcluster's seams
// (raft log store, power-loss VFS, disk layer, a steppable wall clock per
// node), so they run the group in the test process: a real broker on every
// node and a nameserver, over loopback TCP, which the same Load reaches
// through AttachCluster (a Cluster over addresses it did not start). They
// import the node, broker and nameserver packages from their _test.go files
// only.
//
// Scenarios live in the _test.go files and run only when ROCKETRAFT_CHAOS is set
// ("short" for the CI subset, "full" for the whole matrix).
package chaos
