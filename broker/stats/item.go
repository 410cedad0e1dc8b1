package stats

import "time"

// Names of the items VIEW_BROKER_STATS_DATA serves (Apache's
// BrokerStatsManager), with the key each is kept under.
const (
	TopicPutNums  = "TOPIC_PUT_NUMS"  // key topic: messages stored
	TopicPutSize  = "TOPIC_PUT_SIZE"  // key topic: bytes stored
	GroupGetNums  = "GROUP_GET_NUMS"  // key topic@group: messages pulled
	GroupGetSize  = "GROUP_GET_SIZE"  // key topic@group: bytes pulled
	BrokerPutNums = "BROKER_PUT_NUMS" // key the cluster name: messages stored
	BrokerGetNums = "BROKER_GET_NUMS" // key the cluster name: messages pulled
)

// Sampling of an item, as Apache's StatsItem: every 10 s for the minute view
// (7 snapshots), every 10 min for the hour view (7), every hour for the day
// view (25).
var views = [3]struct {
	every time.Duration
	keep  int
}{{10 * time.Second, 7}, {10 * time.Minute, 7}, {time.Hour, 25}}

// snap is an item's totals at one time.
type snap struct {
	at           time.Time
	times, value int64
}

// item is one (statsName, statsKey): a running sum, the calls that added to
// it, and the snapshots of each view.
//
// Invariant: every view holds at least one snapshot, oldest first.
type item struct {
	value, times int64
	views        [3][]snap
}

// newItem starts an item at now the way Apache's does: each view begins with
// a zero snapshot one interval back, so the first minute's rate is over at
// least 10 s, not over the instant since creation.
func newItem(now time.Time) *item {
	it := &item{}
	for i, v := range views {
		it.views[i] = []snap{{at: now.Add(-v.every)}}
	}
	return it
}

func (it *item) add(value int64) {
	it.value += value
	it.times++
}

// sampleView records the totals at now in view v.
func (it *item) sampleView(v int, now time.Time) {
	s := append(it.views[v], snap{now, it.times, it.value})
	if len(s) > views[v].keep {
		s = s[len(s)-views[v].keep:]
	}
	it.views[v] = s
}

// Snapshot is one view of an item (BrokerStatsItem): the sum over the view,
// its rate per second and the average added per call.
type Snapshot struct {
	Sum   int64   `json:"sum"`
	TPS   float64 `json:"tps"`
	Avgpt float64 `json:"avgpt"`
}

// ItemData is VIEW_BROKER_STATS_DATA's answer (BrokerStatsData).
type ItemData struct {
	Minute Snapshot `json:"statsMinute"`
	Hour   Snapshot `json:"statsHour"`
	Day    Snapshot `json:"statsDay"`
}

// view is the snapshot of view v from its oldest snapshot to the totals now.
func (it *item) view(v int, now time.Time) Snapshot {
	first := it.views[v][0]
	sum := it.value - first.value
	var s Snapshot
	s.Sum = sum
	if d := now.Sub(first.at); d > 0 {
		s.TPS = float64(sum) / d.Seconds()
	}
	if calls := it.times - first.times; calls > 0 {
		s.Avgpt = float64(sum) / float64(calls)
	}
	return s
}
