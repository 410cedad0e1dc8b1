// Package proctest runs rocketraft as real operating-system processes for the
// black-box suites: the integration tests and the chaos suite under
// integration/chaos. It is to processes what internal/testcluster is to an
// in-process group.
//
// # What it owns
//
//   - the binary: Binary returns $ROCKETRAFT_BIN (EnvBinary) or builds
//     cmd/rocketraft once into a directory of the caller's;
//   - ports: FreePorts reserves loopback ports, WaitListening waits until a
//     process accepts TCP connections on one;
//   - processes: a Proc is one nameserver or broker node whose output goes to
//     its own log file. Start, Stop (SIGTERM, SIGKILL after a grace period),
//     Kill (SIGKILL) and Start again: every incarnation runs the same command
//     line, so a restart comes back on the same config, ports and data
//     directory. Tail and LogContains read the log for failure reports;
//   - config files: NamesrvConfig and BrokerConfig write namesrv.conf and
//     broker.conf with the keys the suites share (design.md §8).
//
// Cluster shapes (how many nodes, which ports go where, leader discovery through
// the nameserver) stay with each suite, and so does everything chaos-specific:
// TCP proxies, pausing and other faults, the checker.
//
// # Who may import it
//
// Only tests: the integration package's _test.go files and the chaos suite,
// whose harness lives in non-test files of integration/chaos so that its
// checker can have tests of its own (design.md §1 lists integration as tests
// only). No production package may import it. It imports nothing of the
// project, so it can never pull broker internals into a black-box test.
//
// # Concurrency
//
// A Proc's methods are safe from any goroutine: the nemesis may Kill a node
// while a cleanup Stops it. One goroutine per incarnation waits for the process
// and closes the channel Exited returns. Proc's exported fields are set before
// the first Start and not changed afterwards. The other functions keep no state.
//
// # Usage
//
//	bin, err := proctest.Binary("..", tmp) // in TestMain; ".." is the module root
//	ports, _ := proctest.FreePorts(3)
//	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
//	_ = proctest.NamesrvConfig{Addr: addr}.Write(nsConf)
//	ns := &proctest.Proc{Name: "namesrv", Bin: bin, Args: []string{"namesrv", "-c", nsConf}, LogPath: nsLog}
//	_ = ns.Start()
//	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
//	defer cancel()
//	if err := proctest.WaitListening(ctx, addr); err != nil {
//		t.Fatalf("nameserver: %v\n%s", err, ns.Tail(20))
//	}
//	ns.Kill()                  // kill -9
//	_ = ns.Start()             // same config, same port
//	clean := ns.Stop(5 * time.Second)
package proctest
