package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/broker/stats"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/transport"
)

// runtimeKeys are the keys Apache's tools read from GET_BROKER_RUNTIME_INFO,
// with the shape each parses: mqadmin 4.9.8 and 5.x clusterList (and -m),
// brokerStatus, and rocketmq-exporter's BrokerRuntimeStats, which drops a
// broker's metrics when one is missing or does not parse.
var runtimeKeys = map[string]*regexp.Regexp{}

func init() {
	long := regexp.MustCompile(`^-?\d+$`)
	double := regexp.MustCompile(`^-?\d+(\.\d+)?$`)
	tps := regexp.MustCompile(`^\d+\.\d+ \d+\.\d+ \d+\.\d+$`)
	for _, k := range []string{"msgPutTotalTodayNow", "msgGetTotalTodayNow", "msgPutTotalYesterdayMorning", "msgPutTotalTodayMorning",
		"msgGetTotalYesterdayMorning", "msgGetTotalTodayMorning", "putMessageTimesTotal", "putMessageSizeTotal",
		"putMessageEntireTimeMax", "getMessageEntireTimeMax", "commitLogMinOffset", "commitLogMaxOffset", "dispatchBehindBytes",
		"dispatchMaxBuffer", "pageCacheLockTimeMills", "remainTransientStoreBufferNumbs", "earliestMessageTimeStamp",
		"startAcceptSendRequestTimeStamp", "bootTimestamp", "brokerVersion", "putMessageFailedTimes",
		"sendThreadPoolQueueSize", "sendThreadPoolQueueCapacity", "sendThreadPoolQueueHeadWaitTimeMills",
		"pullThreadPoolQueueSize", "pullThreadPoolQueueCapacity", "pullThreadPoolQueueHeadWaitTimeMills",
		"queryThreadPoolQueueSize", "queryThreadPoolQueueCapacity", "queryThreadPoolQueueHeadWaitTimeMills",
		"ackThreadPoolQueueSize", "ackThreadPoolQueueHeadWaitTimeMills", "timerReadBehind", "timerOffsetBehind", "timerCongestNum"} {
		runtimeKeys[k] = long
	}
	for _, k := range []string{"putMessageAverageSize", "commitLogDiskRatio", "consumeQueueDiskRatio", "putLatency99", "putLatency999",
		"timerEnqueueTps", "timerDequeueTps"} {
		runtimeKeys[k] = double
	}
	for _, k := range []string{"putTps", "getMissTps", "getTransferedTps", "getTransferredTps", "getTotalTps", "getFoundTps"} {
		runtimeKeys[k] = tps
	}
	runtimeKeys["putMessageDistributeTime"] = regexp.MustCompile(`^\[<=0ms\]:\d+ \[0~10ms\]:\d+ .*\[10s~\]:\d+ $`)
	runtimeKeys["commitLogDirCapacity"] = regexp.MustCompile(`^Total : \d+\.\d [KMGTPE]iB, Free : \d+\.\d [KMGTPE]iB\.$`)
	runtimeKeys["remainHowManyDataToFlush"] = regexp.MustCompile(`^\d+(\.\d)? (B|[KMGTPE]iB)$`)
	runtimeKeys["runtime"] = regexp.MustCompile(`^\[ \d+ days, \d+ hours, \d+ minutes, \d+ seconds \]$`)
	runtimeKeys["brokerVersionDesc"] = regexp.MustCompile(`^V\d+_\d+_\d+$`)
	runtimeKeys["brokerActive"] = regexp.MustCompile(`^(true|false)$`)
}

func runtimeTable(t *testing.T, fx *fixture) map[string]string {
	t.Helper()
	resp, err := fx.api.runtimeInfoHandler(context.Background(), request(transport.GetBrokerRuntimeInfo, nil))
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Table map[string]string }
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		t.Fatalf("%s: %v", resp.Body, err)
	}
	return body.Table
}

// TestRuntimeInfoHasEveryKeyToolsRead: every key, in the format its reader
// parses, on a node that stored one message and was sent some.
func TestRuntimeInfoHasEveryKeyToolsRead(t *testing.T) {
	fx := newFixture(t)
	now := fx.rep.Now()
	fx.api.d.Stats.ObservePut(now, "T", 1, 200)
	fx.api.d.Stats.ObserveSendResult(3*time.Millisecond, true)
	table := runtimeTable(t, fx)
	for k, re := range runtimeKeys {
		v, ok := table[k]
		switch {
		case !ok:
			t.Errorf("runtime info lacks %s", k)
		case !re.MatchString(v):
			t.Errorf("%s = %q, want %s", k, v, re)
		}
	}
	if table["brokerActive"] != "true" || table["role"] != "LEADER" || table["brokerName"] != "broker-a" {
		t.Errorf("identity: active %s role %s name %s", table["brokerActive"], table["role"], table["brokerName"])
	}
	if table["putMessageTimesTotal"] != "1" || table["msgPutTotalTodayNow"] != "1" || table["earliestMessageTimeStamp"] != "-1" {
		t.Errorf("counts: %s %s earliest %s", table["putMessageTimesTotal"], table["msgPutTotalTodayNow"], table["earliestMessageTimeStamp"])
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 20 << 30: "20.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestViewBrokerStatsData: the item a put counted, in BrokerStatsData's
// shape; an item nothing counted is refused naming it; the header is checked.
func TestViewBrokerStatsData(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	fx.api.d.Stats.ObservePut(fx.rep.Now(), "T", 1, 200)
	fx.api.d.Stats.ObservePut(fx.rep.Now(), "T", 1, 200)
	resp, err := fx.api.viewBrokerStats(ctx, request(transport.ViewBrokerStatsData, map[string]string{"statsName": stats.TopicPutNums, "statsKey": "T"}))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		StatsMinute, StatsHour, StatsDay struct {
			Sum   int64
			TPS   float64
			Avgpt float64
		}
	}
	if err := json.Unmarshal(resp.Body, &d); err != nil {
		t.Fatalf("%s: %v", resp.Body, err)
	}
	if d.StatsMinute.Sum != 2 || d.StatsHour.Sum != 2 || d.StatsDay.Sum != 2 || d.StatsMinute.Avgpt != 1 || d.StatsMinute.TPS <= 0 {
		t.Errorf("views %+v (%s)", d, resp.Body)
	}
	for _, k := range []string{`"statsMinute"`, `"sum"`, `"tps"`, `"avgpt"`} {
		if !strings.Contains(string(resp.Body), k) {
			t.Errorf("body lacks %s: %s", k, resp.Body)
		}
	}
	_, err = fx.api.viewBrokerStats(ctx, request(transport.ViewBrokerStatsData, map[string]string{"statsName": stats.GroupGetNums, "statsKey": "T@nobody"}))
	if err == nil || route.ResponseCode(err) != transport.SystemError || !strings.Contains(err.Error(), "T@nobody") {
		t.Errorf("unknown item: %v", err)
	}
	_, err = fx.api.viewBrokerStats(ctx, request(transport.ViewBrokerStatsData, map[string]string{"statsKey": "T"}))
	if !errors.Is(err, route.ErrBadHeader) || !strings.Contains(err.Error(), "statsName") {
		t.Errorf("missing statsName: %v", err)
	}
}

// TestTopicConsumers: QUERY_TOPIC_CONSUME_BY_WHO lists the groups with a
// committed (or pending) offset in the topic, not a group without one, and
// refuses a request without a topic. (Groups known from heartbeats are
// checked over real connections in internal/admin's process test.)
func TestTopicConsumers(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	if err := fx.rep.UpsertTopic(ctx, fsm.NewTopic("T", 2, fsm.PermRead|fsm.PermWrite)); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"reader", "pending", "idle"} {
		if err := fx.rep.UpsertSubscriptionGroup(ctx, fsm.DefaultSubscriptionGroup(g)); err != nil {
			t.Fatal(err)
		}
	}
	if err := fx.rep.CommitOffsets(ctx, []fsm.OffsetEntry{{Group: "reader", Topic: "T", QueueID: 1, Offset: 3}}); err != nil {
		t.Fatal(err)
	}
	fx.api.d.Offsets.Put("pending", "T", 0, 1)
	resp, err := fx.api.topicConsumers(ctx, request(transport.QueryTopicConsumeByWho, map[string]string{"topic": "T"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"groupList":["pending","reader"]}`; string(resp.Body) != want {
		t.Errorf("body %s, want %s", resp.Body, want)
	}
	resp, err = fx.api.topicConsumers(ctx, request(transport.QueryTopicConsumeByWho, map[string]string{"topic": "Unread"}))
	if err != nil || string(resp.Body) != `{"groupList":[]}` {
		t.Errorf("a topic nobody reads: %s %v, want an empty list (Java NPEs on null)", resp.Body, err)
	}
	if _, err := fx.api.topicConsumers(ctx, request(transport.QueryTopicConsumeByWho, nil)); !errors.Is(err, route.ErrBadHeader) {
		t.Errorf("no topic: %v", err)
	}
}
