package metrics

import (
	"fmt"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
)

// ExportRaftInternals forwards the useful part of hashicorp/raft's own
// instrumentation into m's registry, renamed to Prometheus conventions
// (raftsink.go lists every mapping): commit time, the leader's and followers'
// raft log writes, FSM apply, per-peer replication and heartbeat round trips,
// the leader's last contact, snapshots, state transitions and timeouts. Timings
// become histograms in seconds.
//
// raft reports only to go-metrics' process-wide sink, so this sets that global;
// call it once per process (cmd does, for its one broker node). A later call
// moves raft's reports to the later registry.
func (m *Metrics) ExportRaftInternals() error {
	sink := newRaftSink(time.Now)
	if err := m.wrapped.Register(sink); err != nil {
		return fmt.Errorf("raft metrics: %w", err)
	}
	conf := gometrics.DefaultConfig("") // no service prefix: keys start with "raft"
	conf.EnableHostname = false
	conf.EnableRuntimeMetrics = false // the Go collector already exports them
	if _, err := gometrics.NewGlobal(conf, sink); err != nil {
		return fmt.Errorf("raft metrics: %w", err)
	}
	return nil
}
