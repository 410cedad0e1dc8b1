package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Values of runtime keys that describe Apache machinery rocketraft does not
// have. Requests do not queue: each runs on its own goroutine as it arrives,
// so every thread-pool queue is empty with nothing waiting at its head and no
// capacity to report; there is no transient store pool (Apache reports
// Integer.MAX_VALUE then), no page-cache lock held across requests and no
// timer wheel (delayed and timed messages wait in SCHEDULE_TOPIC_XXXX).
var apacheOnlyRuntime = map[string]string{
	"sendThreadPoolQueueSize": "0", "sendThreadPoolQueueCapacity": "0", "sendThreadPoolQueueHeadWaitTimeMills": "0",
	"pullThreadPoolQueueSize": "0", "pullThreadPoolQueueCapacity": "0", "pullThreadPoolQueueHeadWaitTimeMills": "0",
	"queryThreadPoolQueueSize": "0", "queryThreadPoolQueueCapacity": "0", "queryThreadPoolQueueHeadWaitTimeMills": "0",
	"litePullThreadPoolQueueSize": "0", "litePullThreadPoolQueueCapacity": "0", "litePullThreadPoolQueueHeadWaitTimeMills": "0",
	"ackThreadPoolQueueSize": "0", "ackThreadPoolQueueCapacity": "0", "ackThreadPoolQueueHeadWaitTimeMills": "0",
	"EndTransactionQueueSize": "0", "EndTransactionThreadPoolQueueCapacity": "0",
	"remainTransientStoreBufferNumbs": strconv.Itoa(math.MaxInt32),
	"pageCacheLockTimeMills":          "0",
	"dispatchMaxBuffer":               "0",
	// Pull handling is not timed apart from its long-poll hold.
	"getMessageEntireTimeMax": "0",
	// Apache's BrokerConfig default: sends are accepted from the start.
	"startAcceptSendRequestTimeStamp": "0",
	"timerReadBehind":                 "0", "timerOffsetBehind": "0", "timerCongestNum": "0",
	"timerEnqueueTps": "0.0", "timerDequeueTps": "0.0",
}

// runtimeInfo is GET_BROKER_RUNTIME_INFO's table: every key Apache's
// prepareRuntimeInfo and getRuntimeInfo fill (which mqadmin clusterList and
// brokerStatus, the dashboard and the exporter read, the exporter strictly),
// in Apache's formats, with this node's values; then raft's state under plain
// names.
func (a *API) runtimeInfo() map[string]string {
	st := a.d.Replica.Status()
	s := a.d.Store
	now := a.d.Replica.Now()
	t := a.d.Stats.Runtime(now)
	for k, v := range apacheOnlyRuntime {
		t[k] = v
	}
	maxOff, flushed, dispatched := s.MaxPhysicalOffset(), s.FlushedPhysicalOffset(), s.DispatchedPhysicalOffset()
	for k, v := range map[string]string{
		"brokerVersionDesc":        "V4_9_4",
		"brokerVersion":            strconv.Itoa(int(transport.ProtocolVersion)),
		"rocketraftVersion":        a.d.Version,
		"brokerActive":             strconv.FormatBool(st.Role == replica.RoleLeader),
		"brokerClusterName":        a.d.ClusterName,
		"brokerName":               a.d.BrokerName,
		"brokerAddr":               a.d.ClientAddr,
		"selfId":                   st.SelfID,
		"role":                     st.Role.String(),
		"term":                     strconv.FormatUint(st.Term, 10),
		"leaderId":                 st.LeaderID,
		"appliedIndex":             strconv.FormatUint(st.AppliedIndex, 10),
		"commitIndex":              strconv.FormatUint(st.CommitIndex, 10),
		"lastIndex":                strconv.FormatUint(st.LastIndex, 10),
		"commitLogMaxOffset":       strconv.FormatInt(int64(maxOff), 10),
		"commitLogMinOffset":       strconv.FormatInt(int64(s.MinPhysicalOffset()), 10),
		"remainHowManyDataToFlush": humanBytes(int64(maxOff - min(flushed, maxOff))),
		"dispatchBehindBytes":      strconv.FormatInt(int64(maxOff-min(dispatched, maxOff)), 10),
		"earliestMessageTimeStamp": strconv.FormatInt(earliestMessageTime(s), 10),
		"longPollWaiters":          strconv.Itoa(a.d.Pulls.Count()),
	} {
		t[k] = v
	}
	if ratio, err := s.DiskUsedRatio(); err == nil {
		// One directory holds the CommitLog and the ConsumeQueues.
		t["commitLogDiskRatio"] = strconv.FormatFloat(ratio, 'f', 4, 64)
		t["consumeQueueDiskRatio"] = t["commitLogDiskRatio"]
	}
	total, terr := s.DiskTotalBytes()
	free, ferr := s.DiskFreeBytes()
	if terr == nil && ferr == nil {
		t["commitLogDirCapacity"] = fmt.Sprintf("Total : %s, Free : %s.", humanBytes(int64(total)), humanBytes(int64(free)))
		// Apache's text above is for people; the console reads the numbers.
		t["commitLogDirTotalBytes"] = strconv.FormatUint(total, 10)
		t["commitLogDirFreeBytes"] = strconv.FormatUint(free, 10)
	}
	for level, off := range a.d.Replica.ScheduleProgress() {
		// Apache's "delivered,max" of each delay level's queue (level = queue id + 1).
		t["scheduleMessageOffset_"+strconv.Itoa(int(level))] = fmt.Sprintf("%d,%d", off,
			s.MaxQueueOffset(scheduleTopic, level-1))
	}
	rs := a.d.Replica.RaftStats()
	t["lastContact"] = rs["last_contact"]
	t["numPeers"] = rs["num_peers"]
	t["lastSnapshotIndex"] = rs["last_snapshot_index"]
	// Counters, not a mean: a reader takes two samples and divides.
	t["raftLogWrites"] = rs["log_store_writes"]
	t["raftLogWriteNanos"] = rs["log_store_write_ns"]
	t["raftLogDeferredFsyncs"] = rs["log_deferred_fsyncs"]
	t["raftLogDeferredFsyncNanos"] = rs["log_deferred_fsync_ns"]
	t["groupCommitEntries"] = rs["group_commit_entries"]
	t["groupCommitMessages"] = rs["group_commit_messages"]
	// raft's applied index counts no-op and configuration entries, which never
	// reach the FSM; lag is measured with it so an idle group shows none.
	t["raftAppliedIndex"] = rs["applied_index"]
	return t
}

// scheduleTopic holds delayed messages, one queue per delay level.
const scheduleTopic = "SCHEDULE_TOPIC_XXXX"

// earliestMessageTime is the store time of the oldest message kept, -1 when
// there is none (Apache's getEarliestMessageTime).
func earliestMessageTime(s *store.Store) int64 {
	ts, ok := s.EarliestMessageTime()
	if !ok {
		return -1
	}
	return ts
}

// humanBytes is Apache's MixAll.humanReadableByteCount(n, false): "512 B",
// "1.5 KiB", "20.0 GiB".
func humanBytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	exp := int(math.Log(float64(n)) / math.Log(1024))
	return fmt.Sprintf("%.1f %ciB", float64(n)/math.Pow(1024, float64(exp)), "KMGTPE"[exp-1])
}

// runtimeInfoHandler serves GET_BROKER_RUNTIME_INFO (28) on the node addressed.
func (a *API) runtimeInfoHandler(context.Context, *route.Request) (*transport.Command, error) {
	body, err := json.Marshal(map[string]any{"table": a.runtimeInfo()})
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}

// viewBrokerStats serves VIEW_BROKER_STATS_DATA (315, mqadmin statsAll, the
// dashboard and the exporter) on the node addressed: one item's minute, hour
// and day views. An item nothing was counted under is SYSTEM_ERROR naming
// it, as Apache answers.
func (a *API) viewBrokerStats(_ context.Context, req *route.Request) (*transport.Command, error) {
	f := route.FieldsOf(req.Command)
	name, key := f.Str("statsName", true), f.Str("statsKey", true)
	if f.Err != nil {
		return nil, f.Err
	}
	d, ok := a.d.Stats.Item(name, key, a.d.Replica.Now())
	if !ok {
		return nil, fmt.Errorf("the stats <%s> <%s> do not exist on %s", name, key, a.d.SelfID)
	}
	body, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}

// topicConsumers serves QUERY_TOPIC_CONSUME_BY_WHO (300, mqadmin statsAll and
// topicList -c) on the node addressed: the consumer groups that subscribe to
// the topic (heartbeats, which every client sends to every node) or hold a
// committed offset in one of its queues, sorted; Apache asks its consumer
// manager and its offset table the same two questions.
func (a *API) topicConsumers(_ context.Context, req *route.Request) (*transport.Command, error) {
	f := route.FieldsOf(req.Command)
	topic := f.Str("topic", true)
	if f.Err != nil {
		return nil, f.Err
	}
	groups := map[string]bool{}
	for g, topics := range a.d.Clients.Subscriptions() {
		if slices.Contains(topics, topic) {
			groups[g] = true
		}
	}
	if tc, ok := a.d.Replica.Topic(topic); ok {
		for _, g := range a.d.Replica.SubscriptionGroups() {
			for q := range max(tc.ReadQueueNums, tc.WriteQueueNums) {
				if _, ok := a.consumerOffset(g.GroupName, topic, q); ok {
					groups[g.GroupName] = true
					break
				}
			}
		}
	}
	list := append([]string{}, slices.Sorted(maps.Keys(groups))...) // [] not null: mqadmin topicList -c calls isEmpty on it
	body, err := json.Marshal(map[string][]string{"groupList": list})
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}
