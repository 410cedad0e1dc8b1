// Package integration holds black-box tests that run real rocketraft processes and
// drive them with the real rocketmq-client-go (the version pinned in go.mod). The
// package has no non-test code; it imports nameserver and transport only to ask the
// nameserver who leads and to send rocketraft admin requests, and internal/proctest
// to run the processes, never broker internals.
//
// Harness (harness_test.go, on internal/proctest, which the chaos suite shares):
// TestMain builds cmd/rocketraft once per `go test` run (or uses the binary named
// by ROCKETRAFT_BIN), then each cluster is a nameserver plus a three-node raft
// group "broker-a" on free loopback ports, every node its own process with its own
// data directory and log file. Nodes can be stopped with SIGTERM, killed with
// SIGKILL and restarted. The leader is whoever the nameserver lists as
// brokerAddrs[0]. When a test fails, the tail of every process log is printed.
//
// Two suites:
//   - the short suite runs in plain `go test ./...` (make test): one shared cluster
//     for send kinds and exactly-once delivery, tag filtering, two consumer groups,
//     consume-from-where and resume, admin topic lifecycle, ordered pull by offset;
//     and apache_test.go, its own group started from Apache's conf/dledger
//     sample configs (config/testdata/apache): a send through a follower relayed
//     without dLegerPeerClientAddrs, the warnings, the trace topic with the Go
//     client's WithTrace;
//   - the long suite runs only with ROCKETRAFT_INTEGRATION set (make integration):
//     kill -9 and SIGTERM of the leader under a producer loop, leadership transfer
//     with zero failed sends, SEARCH_OFFSET_BY_TIMESTAMP. Each of these starts its
//     own cluster.
//
// Concurrency: tests run sequentially (no t.Parallel); each process is owned by one
// proctest.Proc whose Wait runs in its own goroutine. Every topic, group and client
// instance name is unique, because the client library caches clients process-wide
// by instance name and tests share the short-suite cluster.
//
// Usage:
//
//	go test ./integration/                                 # short suite
//	ROCKETRAFT_INTEGRATION=1 go test -timeout 30m ./integration/  # everything
//	ROCKETRAFT_BIN=bin/rocketraft go test ./integration/   # test a prebuilt binary
package integration
