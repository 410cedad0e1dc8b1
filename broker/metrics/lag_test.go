package metrics

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

func TestQueueCounts(t *testing.T) {
	cases := []struct {
		name                 string
		q                    queueProgress
		lag, ready, inflight int64
	}{
		{"no offset: starts at the max, lags nothing", queueProgress{Max: 10}, 0, 0, 0},
		{"committed, never pulled here", queueProgress{Max: 10, Committed: 4, HasCommitted: true}, 6, 6, 0},
		{"pulled ahead of the commit", queueProgress{Max: 10, Committed: 4, HasCommitted: true, Pulled: 8, HasPulled: true}, 6, 2, 4},
		{"pull offset behind the commit (another node served pulls)", queueProgress{Max: 10, Committed: 4, HasCommitted: true, Pulled: 2, HasPulled: true}, 6, 6, 0},
		{"commit past the max (offset reset)", queueProgress{Max: 10, Committed: 12, HasCommitted: true}, 0, 0, 0},
		{"caught up", queueProgress{Max: 10, Committed: 10, HasCommitted: true, Pulled: 10, HasPulled: true}, 0, 0, 0},
	}
	for _, c := range cases {
		lag, ready, inflight, _ := queueCounts(c.q)
		if lag != c.lag || ready != c.ready || inflight != c.inflight {
			t.Errorf("%s: lag %d ready %d inflight %d, want %d %d %d", c.name, lag, ready, inflight, c.lag, c.ready, c.inflight)
		}
	}
}

func TestMessageType(t *testing.T) {
	props := func(kv ...string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return store.EncodeProperties(m)
	}
	cases := []struct {
		props    string
		prepared bool
		want     string
	}{
		{props(store.PropertyTags, "a"), false, MessageNormal},
		{props(store.PropertyDelayLevel, "3"), false, MessageDelay},
		{props(store.PropertyDelayLevel, "0"), false, MessageNormal},
		{props(store.PropertyTimerDeliverMS, "1700000000000"), false, MessageDelay},
		{props("__SHARDINGKEY", "order-7"), false, MessageFIFO},
		{props(store.PropertyTransaction, "true"), false, MessageTransaction},
		{props(store.PropertyDelayLevel, "3"), true, MessageTransaction},
		{"", false, MessageNormal},
	}
	for _, c := range cases {
		if got := MessageType(c.props, c.prepared); got != c.want {
			t.Errorf("MessageType(%q, %v) = %s, want %s", c.props, c.prepared, got, c.want)
		}
	}
}

// messageTypeByLookup is MessageType as a lookup per property
// (store.Property): what it was before its single pass.
func messageTypeByLookup(props string, prepared bool) string {
	if v, _ := store.Property(props, store.PropertyTransaction); prepared || strings.EqualFold(v, "true") {
		return MessageTransaction
	}
	if _, ok := store.Property(props, propertyShardingKey); ok {
		return MessageFIFO
	}
	for _, k := range delayProperties {
		if v, ok := store.Property(props, k); ok && v != "" && v != "0" {
			return MessageDelay
		}
	}
	return MessageNormal
}

// BenchmarkMessageType classifies a bench producer's properties (a key, a
// unique key, WAIT) once per stored message, in one pass and by lookups.
func BenchmarkMessageType(b *testing.B) {
	props := "KEYS\x01k123456\x02UNIQ_KEY\x017F0000010001000000000000000000000001\x02WAIT\x01true\x02"
	for _, c := range []struct {
		name string
		f    func(string, bool) string
	}{{"one-pass", MessageType}, {"lookups", messageTypeByLookup}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if c.f(props, false) != MessageNormal {
					b.Fatal("not normal")
				}
			}
		})
	}
}

// TestMessageTypeReadsFirstOccurrences: MessageType's single pass agrees
// with a lookup per property (store.Property, the first occurrence of a
// name) on properties that repeat names, leave values empty, or carry items
// without a separator.
func TestMessageTypeReadsFirstOccurrences(t *testing.T) {
	items := []string{"TRAN_MSG\x01false", "TRAN_MSG\x01TRUE", "DELAY\x010", "DELAY\x012", "TIMER_DELAY_MS\x01",
		"TIMER_DELAY_MS\x015000", "__SHARDINGKEY\x01", "KEYS\x01k1", "junk", "__STARTDELIVERTIME\x011700000000000"}
	// Every ordered pair and triple of items, each list ending in a separator
	// as encoded properties do.
	var lists []string
	for _, a := range items {
		for _, b := range items {
			lists = append(lists, a+"\x02"+b+"\x02")
			for _, c := range items {
				lists = append(lists, a+"\x02"+b+"\x02"+c+"\x02")
			}
		}
	}
	for _, props := range lists {
		for _, prepared := range []bool{false, true} {
			if got, want := MessageType(props, prepared), messageTypeByLookup(props, prepared); got != want {
				t.Fatalf("MessageType(%q, %v) = %s, a lookup per property says %s", props, prepared, got, want)
			}
		}
	}
}

// appendAt appends n one-byte messages to (topic, queue) stored at ts (ms) and
// waits until they are pullable.
func appendAt(t *testing.T, st *store.Store, topic string, queue int32, n int, ts int64) {
	t.Helper()
	host := netip.MustParseAddrPort("127.0.0.1:10911")
	var recs [][]byte
	for range n {
		rec, err := store.AppendMessage(nil, &store.Message{Topic: topic, QueueID: queue, Body: []byte("x"), BornHost: host, StoreHost: host})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if _, err := st.AppendBatch(recs, ts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.WaitDispatched(ctx, st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
}

func openTestStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 1 << 20, ConsumeQueueEntriesPerFile: 1000, IndexHashSlots: 100, IndexMaxEntries: 400})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// samples returns name's samples whose labels include want, as label sets
// with values.
func samples(t *testing.T, g prometheus.Gatherer, name string, want map[string]string) map[string]float64 {
	t.Helper()
	f := gatherFamily(t, g, name)
	out := map[string]float64{}
	if f == nil {
		return out
	}
	for _, m := range f.GetMetric() {
		l := labelsOf(m)
		match := true
		for k, v := range want {
			if l[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		out[l["consumer_group"]+"/"+l["topic"]+"/"+l["message_type"]] = value(m)
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return m.GetUntyped().GetValue()
}

// TestConsumerGauges: RocketMQ's lag, ready, in-flight and lag latency from a
// real store, committed offsets and the pulls this node served; on the leader
// only.
func TestConsumerGauges(t *testing.T) {
	st := openTestStore(t)
	appendAt(t, st, "T", 0, 6, 1_000_000)
	appendAt(t, st, "T", 1, 4, 2_000_000)
	role := replica.RoleLeader
	committed := map[queueKey]store.QueueOffset{{"g1", "T", 0}: 4, {"g1", "T", 1}: 1}
	m := New(testOptions)
	m.Watch(Source{
		Status: func() replica.Status { return replica.Status{Role: role} },
		Store:  st,
		Topics: func() []fsm.TopicConfig {
			return []fsm.TopicConfig{fsm.NewTopic("T", 2, fsm.PermRead|fsm.PermWrite), fsm.NewTopic("%RETRY%g1", 1, fsm.PermRead|fsm.PermWrite)}
		},
		SubscriptionGroups: func() []fsm.SubscriptionGroupConfig {
			return []fsm.SubscriptionGroupConfig{fsm.DefaultSubscriptionGroup("g1")}
		},
		Subscriptions: func() map[string][]string { return map[string][]string{"g1": {"%RETRY%g1", "T"}} },
		CommittedOffset: func(g, topic string, q int32) (store.QueueOffset, bool) {
			o, ok := committed[queueKey{g, topic, q}]
			return o, ok
		},
		Now: func() time.Time { return time.UnixMilli(2_005_000) },
	})
	m.ObservePulled("g1", "T", 0, 6, 6, 600)
	m.ObservePulled("g1", "T", 1, 2, 2, 200)

	reg := m.Registry()
	group := map[string]string{"consumer_group": "g1", "topic": "T", "is_retry": "false", "is_system": "false", "node_id": "broker-a-n0"}
	for name, want := range map[string]float64{
		"rocketmq_consumer_lag_messages":      (6 - 4) + (4 - 1),
		"rocketmq_consumer_ready_messages":    0 + (4 - 2), // q0 pulled to its max
		"rocketmq_consumer_inflight_messages": (6 - 4) + (2 - 1),
		// The oldest uncommitted message is q0's offset 4, stored at 1 000 000 ms.
		"rocketmq_consumer_lag_latency": (2_005_000 - 1_000_000) / 1000.0,
	} {
		got := samples(t, reg, name, group)
		if len(got) != 1 || got["g1/T/"] != want {
			t.Errorf("%s = %v, want one series g1/T = %v (no %%RETRY%% series)", name, got, want)
		}
	}
	if got := samples(t, reg, "rocketmq_messages_out_total", map[string]string{"consumer_group": "g1", "topic": "T"}); got["g1/T/"] != 8 {
		t.Errorf("messages out %v, want 8", got)
	}
	if got := samples(t, reg, "rocketmq_throughput_out_total", nil); got["g1/T/"] != 800 {
		t.Errorf("throughput out %v, want 800", got)
	}
	if got := samples(t, reg, "rocketmq_topic_number", nil); got["//"] != 2 {
		t.Errorf("topic number %v, want 2", got)
	}
	if got := samples(t, reg, "rocketmq_consumer_group_number", nil); got["//"] != 1 {
		t.Errorf("consumer group number %v, want 1", got)
	}

	// Caught up: no lag, and no latency.
	committed[queueKey{"g1", "T", 0}], committed[queueKey{"g1", "T", 1}] = 6, 4
	if got := samples(t, reg, "rocketmq_consumer_lag_latency", group); got["g1/T/"] != 0 {
		t.Errorf("lag latency when caught up = %v, want 0", got)
	}

	// A follower exports none of them: the leader's are the group's.
	role = replica.RoleFollower
	for _, name := range []string{"rocketmq_consumer_lag_messages", "rocketmq_consumer_ready_messages", "rocketmq_consumer_inflight_messages",
		"rocketmq_consumer_lag_latency", "rocketmq_topic_number", "rocketmq_consumer_group_number"} {
		if f := gatherFamily(t, reg, name); f != nil {
			t.Errorf("%s exported by a follower: %v", name, f)
		}
	}
}

// TestLabelCap: beyond MaxTopics topics and MaxGroups groups, series are
// reported as OtherLabel (summed), and the replacements are counted.
func TestLabelCap(t *testing.T) {
	st := openTestStore(t)
	appendAt(t, st, "A", 0, 3, 1_000_000)
	appendAt(t, st, "C", 0, 5, 1_000_000)
	m := New(Options{Cluster: "c1", BrokerName: "broker-a", SelfID: "n0", MaxTopics: 2, MaxGroups: 1})
	for _, topic := range []string{"A", "B", "C", "C"} {
		m.ObserveSent(topic, "", false, 100)
	}
	reg := m.Registry()
	in := samples(t, reg, "rocketmq_messages_in_total", nil)
	if len(in) != 3 || in["/A/normal"] != 1 || in["/B/normal"] != 1 || in["/"+OtherLabel+"/normal"] != 2 {
		t.Fatalf("messages in %v, want A 1, B 1, %s 2", in, OtherLabel)
	}
	if got := samples(t, reg, "rocketraft_metrics_label_overflow_total", map[string]string{"label": "topic"}); got["//"] != 2 {
		t.Errorf("topic overflow %v, want 2", got)
	}
	if got := samples(t, reg, "rocketraft_metrics_label_values", map[string]string{"label": "topic", "limit": "2"}); got["//"] != 2 {
		t.Errorf("topic label values %v, want 2 (limit 2)", got)
	}

	committed := map[queueKey]store.QueueOffset{{"g1", "A", 0}: 0, {"g2", "A", 0}: 1, {"g2", "C", 0}: 1}
	m.Watch(Source{
		Status: func() replica.Status { return replica.Status{Role: replica.RoleLeader} },
		Store:  st,
		Topics: func() []fsm.TopicConfig {
			return []fsm.TopicConfig{fsm.NewTopic("A", 1, 6), fsm.NewTopic("B", 1, 6), fsm.NewTopic("C", 1, 6)}
		},
		Subscriptions: func() map[string][]string { return map[string][]string{"g1": {"A"}, "g2": {"A", "C"}} },
		CommittedOffset: func(g, topic string, q int32) (store.QueueOffset, bool) {
			o, ok := committed[queueKey{g, topic, q}]
			return o, ok
		},
		Now: func() time.Time { return time.UnixMilli(1_010_000) },
	})
	lag := samples(t, reg, "rocketmq_consumer_lag_messages", nil)
	// g1 is the one admitted group; g2's rows (A: 2, C: 4) are summed as
	// __other__/A and __other__/__other__ (C is beyond the topic cap).
	want := map[string]float64{"g1/A/": 3, OtherLabel + "/A/": 2, OtherLabel + "/" + OtherLabel + "/": 4}
	if len(lag) != len(want) {
		t.Fatalf("lag series %v, want %v", lag, want)
	}
	for k, v := range want {
		if lag[k] != v {
			t.Errorf("lag %s = %v, want %v (all: %v)", k, lag[k], v, lag)
		}
	}
	if got := samples(t, reg, "rocketraft_metrics_label_overflow_total", map[string]string{"label": "consumer_group"}); got["//"] < 2 {
		t.Errorf("group overflow %v, want ≥ 2 (g2's two rows)", got)
	}
}
