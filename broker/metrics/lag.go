package metrics

import (
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/store"
)

var (
	lagLabels     = []string{labelConsumerGroup, labelTopic, labelIsRetry, labelIsSystem}
	descLag       = prometheus.NewDesc("rocketmq_consumer_lag_messages", "Messages of the topic the group has not committed: max offset minus committed offset, summed over the topic's queues (leader only).", lagLabels, nil)
	descReady     = prometheus.NewDesc("rocketmq_consumer_ready_messages", "Messages of the topic the group has not pulled yet: max offset minus pull offset, summed over the queues (leader only).", lagLabels, nil)
	descInflight  = prometheus.NewDesc("rocketmq_consumer_inflight_messages", "Messages pulled by the group but not committed: pull offset minus committed offset, summed over the queues (leader only).", lagLabels, nil)
	descLatency   = prometheus.NewDesc("rocketmq_consumer_lag_latency", "Seconds since the oldest message the group has not committed was stored; 0 when it is caught up (leader only).", lagLabels, nil)
	descTopics    = prometheus.NewDesc("rocketmq_topic_number", "Topics in the group's replicated topic table, system topics included (leader only).", nil, nil)
	descSubGroups = prometheus.NewDesc("rocketmq_consumer_group_number", "Subscription groups in the group's replicated table (leader only).", nil, nil)
)

// queueProgress is one queue as a consumer group sees it.
type queueProgress struct {
	// Max is the queue's max offset (the next one written).
	Max store.QueueOffset
	// Committed is the group's committed offset, if it has one.
	Committed    store.QueueOffset
	HasCommitted bool
	// Pulled is the offset this node last told the group to pull next, if it
	// served the group a pull of this queue.
	Pulled    store.QueueOffset
	HasPulled bool
}

// queueCounts applies RocketMQ's ConsumerLagCalculator to one queue (without
// its tag-filter estimate): a group with no committed offset starts at the max
// offset, so it lags by nothing; the pull offset is at least the committed one
// (a follower may have served pulls this node never saw) and defaults to it.
// commit is the offset the oldest unconsumed message has, when lag > 0.
func queueCounts(q queueProgress) (lag, ready, inflight int64, commit store.QueueOffset) {
	commit = q.Max
	if q.HasCommitted {
		commit = q.Committed
	}
	pull := commit
	if q.HasPulled && q.Pulled > commit {
		pull = q.Pulled
	}
	return max(0, int64(q.Max-commit)), max(0, int64(q.Max-pull)), max(0, int64(pull-commit)), commit
}

// lagRow is the consumer gauges of one (group, topic), before the cap.
type lagRow struct {
	group, topic         string
	lag, ready, inflight int64
	// oldest is the store time (ms) of the oldest uncommitted message; 0 if none.
	oldest int64
}

// storeTimestampAt is the store time (ms) of the message at or after off in the
// queue (off below the queue's min reads the min: those messages are gone).
func storeTimestampAt(st *store.Store, topic string, queueID int32, off store.QueueOffset) (int64, bool) {
	off = max(off, st.MinQueueOffset(topic, queueID))
	res, err := st.GetMessages(topic, queueID, off, 1, 1, nil)
	if err != nil {
		return 0, false
	}
	defer res.Release()
	if res.Status != store.Found || len(res.Messages) == 0 {
		return 0, false
	}
	return store.StoreTimestampOf(res.Messages[0]), true
}

// lagCollector computes the consumer gauges at scrape time on the leader.
type lagCollector struct {
	src            *atomic.Pointer[Source]
	pulls          *pullOffsets
	topics, groups *labelCap
}

func (c lagCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLag, descReady, descInflight, descLatency, descTopics, descSubGroups} {
		ch <- d
	}
}

// Collect exports nothing on a follower: only the leader holds the offsets not
// yet replicated and the pull offsets of the pulls it served (consumers pull
// from brokerId 0), so a sum over a group's nodes counts each group once.
func (c lagCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.src.Load()
	if src == nil || src.Status == nil || src.Status().Role != replica.RoleLeader {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if src.Topics != nil {
		gauge(descTopics, float64(len(src.Topics())))
	}
	if src.SubscriptionGroups != nil {
		gauge(descSubGroups, float64(len(src.SubscriptionGroups())))
	}
	if src.Topics == nil || src.Store == nil || src.CommittedOffset == nil {
		return
	}
	now := time.Now
	if src.Now != nil {
		now = src.Now
	}
	nowMs := now().UnixMilli()
	for _, r := range c.fold(c.rows(src)) {
		labels := []string{r.group, r.topic, "false", boolLabel(isSystemTopic(r.topic) || isSystemGroup(r.group))}
		gauge(descLag, float64(r.lag), labels...)
		gauge(descReady, float64(r.ready), labels...)
		gauge(descInflight, float64(r.inflight), labels...)
		latency := 0.0
		if r.oldest > 0 && nowMs > r.oldest {
			latency = float64(nowMs-r.oldest) / 1000
		}
		gauge(descLatency, latency, labels...)
	}
}

// rows computes every (group, topic) pair: the subscriptions of connected
// consumers and the pairs this node served pulls for, on topics that exist
// (RocketMQ's processAllGroup; the consumers' own %RETRY% topics are skipped).
func (c lagCollector) rows(src *Source) []lagRow {
	pairs := c.pulls.pairs()
	if src.Subscriptions != nil {
		for g, topics := range src.Subscriptions() {
			for _, t := range topics {
				if pairs[g] == nil {
					pairs[g] = make(map[string]bool)
				}
				pairs[g][t] = true
			}
		}
	}
	queues := make(map[string]int32)
	for _, t := range src.Topics() {
		queues[t.Name] = max(t.ReadQueueNums, t.WriteQueueNums)
	}
	var rows []lagRow
	for g, topics := range pairs {
		for t := range topics {
			n, ok := queues[t]
			if !ok || strings.HasPrefix(t, "%RETRY%") {
				continue
			}
			r := lagRow{group: g, topic: t}
			for q := range n {
				p := queueProgress{Max: src.Store.MaxQueueOffset(t, q)}
				p.Committed, p.HasCommitted = src.CommittedOffset(g, t, q)
				p.Pulled, p.HasPulled = c.pulls.get(queueKey{g, t, q})
				lag, ready, inflight, commit := queueCounts(p)
				r.lag, r.ready, r.inflight = r.lag+lag, r.ready+ready, r.inflight+inflight
				if lag == 0 {
					continue
				}
				if ts, ok := storeTimestampAt(src.Store, t, q, commit); ok && (r.oldest == 0 || ts < r.oldest) {
					r.oldest = ts
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// fold applies the label caps: rows whose group or topic is beyond its cap are
// summed into the OtherLabel row (the oldest message is the oldest of them).
// Rows are admitted in name order, so the same pairs keep their series across
// scrapes whatever order the maps gave.
func (c lagCollector) fold(rows []lagRow) []lagRow {
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].group != rows[j].group {
			return rows[i].group < rows[j].group
		}
		return rows[i].topic < rows[j].topic
	})
	type key struct{ group, topic string }
	index := make(map[key]int)
	var out []lagRow
	for _, r := range rows {
		k := key{c.groups.admit(r.group), c.topics.admit(r.topic)}
		i, ok := index[k]
		if !ok {
			index[k] = len(out)
			out = append(out, lagRow{group: k.group, topic: k.topic, lag: r.lag, ready: r.ready, inflight: r.inflight, oldest: r.oldest})
			continue
		}
		o := &out[i]
		o.lag, o.ready, o.inflight = o.lag+r.lag, o.ready+r.ready, o.inflight+r.inflight
		if r.oldest > 0 && (o.oldest == 0 || r.oldest < o.oldest) {
			o.oldest = r.oldest
		}
	}
	return out
}
