package console

import (
	"context"
	"strings"
	"sync"
	"time"
)

// sampler takes the periodic samples: a cluster snapshot every ClusterEvery
// (pushed to the streams, recorded as series, its new leadership
// observations pushed too) and topic and group offsets every TopicsEvery (for
// the rates and the consumer lag).
type sampler struct {
	s        *Server
	cfg      Config
	hub      hub
	timeline timeline
	series   *seriesStore

	mu sync.Mutex
	// nodeCounts are each node's put and get counters at the last sample,
	// logWrites its raft log's write count and total write time,
	// logFsyncs its deferred fsync rounds and their total time (a leader).
	nodeCounts map[string][2]counter
	logWrites  map[string][2]float64
	logFsyncs  map[string][2]float64
	// topicIn/topicOut: the sum of a topic's max offsets and of its consumers'
	// offsets at the last sample; groupOff the sum of a group's offsets.
	topicIn, topicOut, groupOff map[string]counter
	// rates computed at the last topic sample; absent = unknown yet.
	inRate, outRate, consumeRate map[string]float64
	lag                          map[string]int64
}

func newSampler(s *Server, cfg Config) *sampler {
	return &sampler{s: s, cfg: cfg, series: newSeriesStore(cfg.Window),
		nodeCounts: map[string][2]counter{}, logWrites: map[string][2]float64{}, logFsyncs: map[string][2]float64{}, topicIn: map[string]counter{}, topicOut: map[string]counter{},
		groupOff: map[string]counter{}, inRate: map[string]float64{}, outRate: map[string]float64{},
		consumeRate: map[string]float64{}, lag: map[string]int64{}}
}

// run samples until ctx ends; a slow cluster delays the next tick instead of
// piling requests up.
func (sp *sampler) run(ctx context.Context) {
	cl := time.NewTicker(sp.cfg.ClusterEvery)
	defer cl.Stop()
	tp := time.NewTicker(sp.cfg.TopicsEvery)
	defer tp.Stop()
	sp.sampleCluster(ctx)
	sp.sampleTopics(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-cl.C:
			sp.sampleCluster(ctx)
		case <-tp.C:
			sp.sampleTopics(ctx)
		}
	}
}

func (sp *sampler) sampleCluster(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	doc, err := sp.s.snapshot(ctx)
	if err != nil {
		ae := classify(err)
		sp.hub.publish(event{"clusterError", clusterErrorDoc{Time: sp.cfg.Now().UnixMilli(), Error: ae.msg, Code: ae.code}})
		return
	}
	sp.hub.publish(event{"cluster", doc})
	sp.recordCluster(doc)
	for _, e := range sp.timeline.add(sp.s.gatherTimeline(ctx, doc)) {
		sp.hub.publish(event{"leadership", e})
	}
}

// recordCluster turns one snapshot into points: per group the messages in
// and out per second (every node's counter deltas summed: a node counts what
// it served), per node the replication lag and the put latency.
func (sp *sampler) recordCluster(doc clusterDoc) {
	t := time.UnixMilli(doc.Time)
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for _, g := range doc.Groups {
		var in, out float64
		known := false
		for _, n := range g.Nodes {
			if !n.Up {
				continue
			}
			labels := map[string]string{"brokerName": g.BrokerName, "node": n.Node}
			sp.series.add("replicationLagEntries", labels, t, float64(n.LagEntries))
			sp.series.add("replicationLagBytes", labels, t, float64(n.LagBytes))
			if n.putLatencyP99 != nil {
				sp.series.add("putLatencyP99Ms", labels, t, *n.putLatencyP99)
			}
			if n.hasLogWrites {
				writes, fsyncs := [2]float64{n.logWrites, n.logWriteNanos}, [2]float64{n.logFsyncs, n.logFsyncNanos}
				if ms, ok := fsyncLatency(sp.logWrites[n.Addr], writes, sp.logFsyncs[n.Addr], fsyncs); ok {
					sp.series.add("fsyncLatencyMs", labels, t, ms)
				}
				sp.logWrites[n.Addr], sp.logFsyncs[n.Addr] = writes, fsyncs
			}
			cur := [2]counter{{t, float64(n.MsgPutTotal)}, {t, float64(n.MsgGetTotal)}}
			prev, ok := sp.nodeCounts[n.Addr]
			sp.nodeCounts[n.Addr] = cur
			if r := rate(prev[0], cur[0], ok); r != nil {
				in, known = in+*r, true
			}
			if r := rate(prev[1], cur[1], ok); r != nil {
				out += *r
			}
		}
		if known {
			labels := map[string]string{"brokerName": g.BrokerName}
			sp.series.add("messagesInPerSec", labels, t, in)
			sp.series.add("messagesOutPerSec", labels, t, out)
		}
	}
}

// fsyncLatency is the fsyncLatencyMs point between two samples: the mean of
// the deferred fsync rounds when the node ran any (a leader, whose StoreLogs
// only writes: decision 0015), else the mean of its log writes, each a write
// and an fsync on a follower.
func fsyncLatency(prevWrites, curWrites, prevFsyncs, curFsyncs [2]float64) (float64, bool) {
	if ms, ok := fsyncMean(prevFsyncs, curFsyncs); ok {
		return ms, true
	}
	return fsyncMean(prevWrites, curWrites)
}

// fsyncMean is the mean raft-log write (and fsync) time in ms between two
// samples of {writes, total ns}; false when nothing was written in between
// (or the node restarted and its counters began again).
func fsyncMean(prev, cur [2]float64) (float64, bool) {
	dw, dn := cur[0]-prev[0], cur[1]-prev[1]
	if prev[0] == 0 || dw <= 0 || dn < 0 {
		return 0, false
	}
	return dn / dw / 1e6, true
}

// sampleTopics reads every user topic's max offsets and every user group's
// offsets, for the topic and group rates and the consumer lag series.
func (sp *sampler) sampleTopics(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	adm := sp.s.adm
	now := sp.cfg.Now()
	topics, err := adm.TopicList(ctx)
	if err != nil {
		return
	}
	maxSum := map[string]float64{}
	for _, tp := range topics {
		if isSystemTopic(tp) {
			continue
		}
		qs, err := adm.TopicStatus(ctx, tp)
		if err != nil {
			continue
		}
		var sum float64
		for _, q := range qs {
			sum += float64(q.MaxOffset)
		}
		maxSum[tp] = sum
	}
	groups, _ := adm.GroupList(ctx, "", "")
	consumed := map[string]float64{} // topic → sum of every group's offsets
	groupSum := map[string]float64{}
	lag := map[string]int64{}
	seen := map[string]bool{}
	for _, g := range groups {
		if seen[g.Name] || isSystemGroup(g.Name) {
			continue
		}
		seen[g.Name] = true
		qs, err := adm.GroupProgress(ctx, g.Name, "", "")
		if err != nil {
			continue
		}
		var sum float64
		var l int64
		for _, q := range qs {
			if q.ConsumerOffset < 0 || isSystemTopic(q.Topic) {
				continue
			}
			sum += float64(q.ConsumerOffset)
			consumed[q.Topic] += float64(q.ConsumerOffset)
			l += q.Lag
		}
		groupSum[g.Name], lag[g.Name] = sum, l
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	step := func(prev map[string]counter, cur map[string]float64, rates map[string]float64) {
		for k, v := range cur {
			c := counter{now, v}
			p, ok := prev[k]
			prev[k] = c
			if r := rate(p, c, ok); r != nil {
				rates[k] = *r
			} else if ok {
				delete(rates, k)
			}
		}
		for k := range prev {
			if _, ok := cur[k]; !ok {
				delete(prev, k)
				delete(rates, k)
			}
		}
	}
	step(sp.topicIn, maxSum, sp.inRate)
	step(sp.topicOut, consumed, sp.outRate)
	step(sp.groupOff, groupSum, sp.consumeRate)
	sp.lag = lag
	for g, l := range lag {
		sp.series.add("consumerLag", map[string]string{"group": g}, now, float64(l))
	}
}

// topicRates returns the last computed rates of topic (nil = unknown).
func (sp *sampler) topicRates(topic string) (in, out *float64) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if v, ok := sp.inRate[topic]; ok {
		in = &v
	}
	if v, ok := sp.outRate[topic]; ok {
		out = &v
	} else if in != nil {
		z := 0.0 // sampled, and no group consumes it
		out = &z
	}
	return in, out
}

func (sp *sampler) groupRate(group string) *float64 {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if v, ok := sp.consumeRate[group]; ok {
		return &v
	}
	return nil
}

// isSystemTopic reports RocketMQ's and rocketraft's internal topics.
func isSystemTopic(t string) bool {
	switch t {
	case "TBW102", "SCHEDULE_TOPIC_XXXX", "BenchmarkTest", "OFFSET_MOVED_EVENT", "SELF_TEST_TOPIC", "DefaultCluster":
		return true
	}
	return strings.HasPrefix(t, "%RETRY%") || strings.HasPrefix(t, "%DLQ%") || strings.HasPrefix(t, "RMQ_SYS_") ||
		strings.HasPrefix(t, "rmq_sys_") || strings.HasPrefix(t, "rocketmq_sys_")
}

// isSystemGroup reports the groups RocketMQ's tools and brokers create.
func isSystemGroup(g string) bool {
	switch g {
	case "TOOLS_CONSUMER", "FILTERSRV_CONSUMER", "SELF_TEST_C_GROUP", "CID_ONS-HTTP-PROXY", "CID_ONSAPI_PERMISSION",
		"CID_ONSAPI_OWNER", "CID_ONSAPI_PULL", "CID_RMQ_SYS_TRANS", "rocketraft_console_peek":
		return true
	}
	return strings.HasPrefix(g, "CID_RMQ_SYS_")
}
