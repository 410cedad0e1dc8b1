package metrics

import (
	"fmt"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
	gmprom "github.com/hashicorp/go-metrics/compat/prometheus"
)

// raftSeriesExpiry is how long a per-peer raft series lives without updates: a
// removed peer's series disappear after it, a live peer's heartbeat timings
// refresh it many times a second.
const raftSeriesExpiry = 10 * time.Minute

// ExportRaftInternals forwards hashicorp/raft's own instrumentation (per-peer
// replication and heartbeat timings, snapshot create/persist, FSM apply, commit
// time, leader last contact) into m's registry, under the prefix rocketraft_.
//
// raft reports only to go-metrics' process-wide sink, so this sets that global;
// call it once per process (cmd does, for its one broker node).
func (m *Metrics) ExportRaftInternals() error {
	sink, err := gmprom.NewPrometheusSinkFrom(gmprom.PrometheusOpts{
		Registerer: m.reg,
		Expiration: raftSeriesExpiry,
	})
	if err != nil {
		return fmt.Errorf("raft metrics sink: %w", err)
	}
	conf := gometrics.DefaultConfig("rocketraft")
	conf.EnableHostname = false
	conf.EnableRuntimeMetrics = false // the Go collector already exports them
	if _, err := gometrics.NewGlobal(conf, sink); err != nil {
		return fmt.Errorf("raft metrics: %w", err)
	}
	return nil
}
