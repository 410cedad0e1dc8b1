package metrics

import (
	"strconv"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/store"
)

// Source is what a scrape reads: the broker's live raft status and counters,
// its store, and its long-poll table. A nil field leaves its gauges out of the
// scrape. The functions run on the scraping goroutine and must not block.
type Source struct {
	// Status is the live raft status (term, role, indexes).
	Status func() replica.Status
	// RaftStats is hashicorp/raft's Stats() map; its last_contact is exported.
	RaftStats func() map[string]string
	// Store is the node's store (CommitLog offsets, dispatch and flush lag, disk).
	Store *store.Store
	// LongPollWaiters is the number of pulls held by long polling.
	LongPollWaiters func() int
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
