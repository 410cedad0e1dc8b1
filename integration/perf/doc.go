// Package perf is `make bench-compare`: rocketraft measured side by side with
// its peers on the same machine in the same run — a three-process JetStream R3
// cluster (durable: sync_interval always; and its default lazy fsync) and a
// three-node Apache RocketMQ DLedger group (its defaults, and SYNC_FLUSH).
//
// The peers live in their own build trees so the broker's go.mod carries
// neither: jetstream/ is a Go module (nats-server and nats.go, the driver
// jsdrive), rocketmq/ a Maven project that copies Apache's broker and
// nameserver jars from Maven Central. rocketraft and Apache RocketMQ are
// driven by the same client (`rocketraft bench produce`, native remoting
// client and the official Go client), JetStream by nats.go in jsdrive.
//
// Each round starts every system fresh, in a rotated order (A/B/A/B), and runs
// every workload on it; with PERF_ORDER=workload every group is up for the
// whole round and each workload runs on every system in turn, so a pair's
// runs are seconds apart instead of minutes. The report gives the median and
// range over rounds of msgs/s, p50/p99 and CPU seconds per 100k messages, the
// servers and the client apart (from /proc, during the measured part only),
// and the ratios against rocketraft, of the medians and round by round.
//
// The suite is a Go test behind the build tag perf, so it can use
// internal/proctest's process harness; it never runs in `make test`.
package perf
