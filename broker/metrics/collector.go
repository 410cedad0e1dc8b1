package metrics

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketraft/rocketraft/broker/replica"
)

// stateCollector reads raft status and store offsets once per scrape.
type stateCollector struct {
	// src is the Source given to Watch; nil until then.
	src *atomic.Pointer[Source]
}

var (
	descTerm = prometheus.NewDesc("rocketraft_raft_term", "Current raft term.", nil, nil)
	descRole = prometheus.NewDesc("rocketraft_raft_role",
		"1 for this node's current role (LEADER only after the barrier).", []string{"role"}, nil)
	descApplied     = prometheus.NewDesc("rocketraft_raft_applied_index", "Last raft index applied to the FSM.", nil, nil)
	descCommit      = prometheus.NewDesc("rocketraft_raft_commit_index", "Last raft index known committed.", nil, nil)
	descLast        = prometheus.NewDesc("rocketraft_raft_last_index", "Last index in the raft log.", nil, nil)
	descLastContact = prometheus.NewDesc("rocketraft_raft_last_contact_seconds",
		"Time since this follower last heard from the leader (0 on the leader).", nil, nil)
	descCLMax       = prometheus.NewDesc("rocketraft_store_commitlog_max_offset_bytes", "CommitLog max physical offset.", nil, nil)
	descCLMin       = prometheus.NewDesc("rocketraft_store_commitlog_min_offset_bytes", "CommitLog min physical offset.", nil, nil)
	descDisk        = prometheus.NewDesc("rocketraft_store_disk_used_ratio", "Used fraction of the store's file system (sends are refused at 0.90).", nil, nil)
	descDiskFree    = prometheus.NewDesc("rocketraft_store_disk_free_bytes", "Bytes available to the broker on the store's file system.", nil, nil)
	descDispatchLag = prometheus.NewDesc("rocketraft_store_dispatch_lag_bytes",
		"CommitLog bytes applied but not yet dispatched to ConsumeQueues (not yet pullable).", nil, nil)
	descScrubLeft = prometheus.NewDesc("rocketraft_store_scrub_remaining_bytes",
		"CommitLog bytes the scrub after this start has still to check (0: finished or off; decision 0019).", nil, nil)
	descUnflushed = prometheus.NewDesc("rocketraft_store_unflushed_bytes",
		"CommitLog bytes not yet flushed by the store (the raft log already holds them durably).", nil, nil)
	descPolls     = prometheus.NewDesc("rocketraft_broker_long_poll_waiters", "Pull requests held by long polling.", nil, nil)
	descGCEntries = prometheus.NewDesc("rocketraft_group_commit_entries_total",
		"Raft entries this node proposed as leader for sends (group commit).", nil, nil)
	descGCMessages = prometheus.NewDesc("rocketraft_group_commit_messages_total",
		"Messages in the entries of rocketraft_group_commit_entries_total.", nil, nil)
	descFsyncs = prometheus.NewDesc("rocketraft_raft_log_deferred_fsyncs_total",
		"Raft log fsync rounds this node ran as leader alongside replication (each covers every batch written before it began).", nil, nil)
	descFsyncSeconds = prometheus.NewDesc("rocketraft_raft_log_deferred_fsync_seconds_total",
		"Time spent in the rounds of rocketraft_raft_log_deferred_fsyncs_total.", nil, nil)
)

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTerm, descRole, descApplied, descCommit, descLast, descLastContact, descCLMax, descCLMin, descDisk, descDiskFree, descDispatchLag, descUnflushed, descScrubLeft, descPolls, descGCEntries, descGCMessages, descFsyncs, descFsyncSeconds} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.src.Load()
	if src == nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if src.Status != nil {
		st := src.Status()
		gauge(descTerm, float64(st.Term))
		for _, r := range []replica.Role{replica.RoleFollower, replica.RoleCandidate, replica.RoleLeader, replica.RoleShutdown} {
			v := 0.0
			if r == st.Role {
				v = 1
			}
			gauge(descRole, v, r.String())
		}
		gauge(descApplied, float64(st.AppliedIndex))
		gauge(descCommit, float64(st.CommitIndex))
		gauge(descLast, float64(st.LastIndex))
	}
	if src.RaftStats != nil {
		rs := src.RaftStats()
		if d, ok := parseLastContact(rs["last_contact"]); ok {
			gauge(descLastContact, d.Seconds())
		}
		counter := func(d *prometheus.Desc, key string) {
			if v, err := strconv.ParseUint(rs[key], 10, 64); err == nil {
				ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
			}
		}
		counter(descGCEntries, "group_commit_entries")
		counter(descGCMessages, "group_commit_messages")
		counter(descFsyncs, "log_deferred_fsyncs")
		if ns, err := strconv.ParseUint(rs["log_deferred_fsync_ns"], 10, 64); err == nil {
			ch <- prometheus.MustNewConstMetric(descFsyncSeconds, prometheus.CounterValue, float64(ns)/1e9)
		}
	}
	if s := src.Store; s != nil {
		maxOff := s.MaxPhysicalOffset()
		gauge(descCLMax, float64(maxOff))
		gauge(descCLMin, float64(s.MinPhysicalOffset()))
		gauge(descDispatchLag, float64(max(0, maxOff-s.DispatchedPhysicalOffset())))
		gauge(descUnflushed, float64(max(0, maxOff-s.FlushedPhysicalOffset())))
		gauge(descScrubLeft, float64(s.ScrubRemaining()))
		if ratio, err := s.DiskUsedRatio(); err == nil {
			gauge(descDisk, ratio)
		}
		if free, err := s.DiskFreeBytes(); err == nil {
			gauge(descDiskFree, float64(free))
		}
	}
	if src.LongPollWaiters != nil {
		gauge(descPolls, float64(src.LongPollWaiters()))
	}
}
