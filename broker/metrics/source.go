package metrics

import (
	"strconv"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

// Source is what a scrape reads: the broker's live raft status and counters,
// its store, its long-poll table, and the replicated tables and client state
// the consumer gauges are computed from. A nil field leaves its gauges out of
// the scrape. The functions run on the scraping goroutine and must not block.
type Source struct {
	// Status is the live raft status (term, role, indexes).
	Status func() replica.Status
	// RaftStats is hashicorp/raft's Stats() map; its last_contact is exported.
	RaftStats func() map[string]string
	// Store is the node's store (CommitLog offsets, dispatch and flush lag, disk,
	// queue offsets and store timestamps for consumer lag).
	Store *store.Store
	// LongPollWaiters is the number of pulls held by long polling.
	LongPollWaiters func() int

	// Topics and SubscriptionGroups are the replicated tables
	// (rocketmq_topic_number, rocketmq_consumer_group_number).
	Topics             func() []fsm.TopicConfig
	SubscriptionGroups func() []fsm.SubscriptionGroupConfig
	// Subscriptions is consumer group → subscribed topics of the consumers
	// connected now (heartbeats); with the groups this node served pulls for,
	// they are the (group, topic) pairs whose lag is exported.
	Subscriptions func() map[string][]string
	// CommittedOffset is a group's committed offset of a queue, including the
	// offsets the leader holds before replicating them (offsets.Buffer).
	CommittedOffset func(group, topic string, queueID int32) (store.QueueOffset, bool)
	// Now is the clock that stamps stored messages (the leader's), for
	// rocketmq_consumer_lag_latency.
	Now func() time.Time
}

// parseLastContact reads raft's Stats()["last_contact"]: "never", "0" (a leader)
// or a time.Duration string.
func parseLastContact(s string) (time.Duration, bool) {
	switch s {
	case "", "never":
		return 0, false
	case "0":
		return 0, true
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Duration(n), true
		}
		return 0, false
	}
	return d, true
}
