package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rocketraft/rocketraft/nameserver"
)

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"text", "json"} {
		if f, err := ParseFormat(s); err != nil || string(f) != s {
			t.Errorf("%s: %q %v", s, f, err)
		}
	}
	if _, err := ParseFormat("yaml"); err == nil || !strings.Contains(err.Error(), `--output="yaml"`) {
		t.Errorf("yaml: %v", err)
	}
}

// decodeJSON renders t as JSON and decodes it generically.
func decodeJSON(t *testing.T, tb Table) any {
	t.Helper()
	var buf bytes.Buffer
	if err := tb.Render(&buf, FormatJSON); err != nil {
		t.Fatalf("%v: %v", tb.Header, err)
	}
	var v any
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
		t.Fatalf("%v: not JSON: %v\n%s", tb.Header, err, buf.String())
	}
	return v
}

// TestTablesCarryTheirDataAsJSON: every table builder sets a document with the
// same values as its rows, typed: numbers as numbers, an error as "error",
// totals of the footer as fields, empty results as [] rather than null.
func TestTablesCarryTheirDataAsJSON(t *testing.T) {
	field := func(v any, path ...any) any {
		for _, p := range path {
			switch k := p.(type) {
			case string:
				v = v.(map[string]any)[k]
			case int:
				v = v.([]any)[k]
			}
		}
		return v
	}
	cases := []struct {
		name string
		tb   Table
		path []any
		want any
	}{
		{"cluster lag", ClusterTable(withLag([]NodeStatus{{Group: "broker-a", Role: "LEADER", AppliedIndex: 9, CommitIndex: 9},
			{Group: "broker-a", Role: "FOLLOWER", AppliedIndex: 5, CommitIndex: 7}})), []any{1, "lag"}, 4.0},
		{"cluster unreachable", ClusterTable([]NodeStatus{{Group: "broker-a", Addr: "a:1", Err: errors.New("refused")}}), []any{0, "error"}, "refused"},
		{"results", ResultsTable("topic create T", []GroupResult{{Group: "broker-a", Addr: "a:1", Err: ErrNoTarget}}), []any{0, "ok"}, false},
		{"topic list", TopicListTable([]string{"A", "B"}), []any{1, "topic"}, "B"},
		{"topic list empty", TopicListTable(nil), nil, []any{}},
		{"route", RouteTable("T", nameserver.TopicRouteData{QueueDatas: []nameserver.QueueData{{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 2, Perm: 6}}}),
			[]any{"queueDatas", 0, "readQueueNums"}, 4.0},
		{"status total", TopicStatusTable("T", []QueueStatus{{Group: "broker-a", MinOffset: 1, MaxOffset: 4}, {Group: "broker-a", QueueID: 1, Err: ErrNoTarget}}),
			[]any{"totalMessages"}, 3.0},
		{"status error", TopicStatusTable("T", []QueueStatus{{Group: "broker-a", Err: ErrNoTarget}}), []any{"queues", 0, "error"}, ErrNoTarget.Error()},
		{"group list", GroupListTable([]SubscriptionGroup{{BrokerGroup: "broker-a", Name: "g", RetryMaxTimes: 16}}), []any{0, "retryMaxTimes"}, 16.0},
		{"progress", GroupProgressTable("g", []QueueProgress{{Topic: "T", Lag: 2}, {Topic: "T", QueueID: 1, Lag: 3, ConsumerOffset: -1}}), []any{"totalLag"}, 5.0},
		{"progress none committed", GroupProgressTable("g", []QueueProgress{{ConsumerOffset: -1}}), []any{"queues", 0, "consumerOffset"}, -1.0},
		{"messages", MessagesText([]MessageView{{Topic: "T", QueueOffset: 7, Keys: []string{"k"}}}), []any{0, "queueOffset"}, 7.0},
		{"peers", RaftPeersTable("broker-a", []RaftPeer{{ID: "n0", Leader: true}}), []any{0, "leader"}, true},
		{"snapshot", SnapshotTable("broker-a", []SnapshotResult{{ID: "n0", LastIndex: "41", Result: "snapshot taken"}}), []any{0, "snapshotIndex"}, 41.0},
		{"reset", ResetOffsetTable("g", []ResetOffset{{BrokerGroup: "broker-a", Topic: "T", Offset: 12}}), []any{"queues", 0, "offset"}, 12.0},
		{"running info", RunningInfoTable("g", []RunningInfo{{ClientID: "c1", Raw: []byte("{x"), Properties: map[string]string{"a": "b"}}}),
			[]any{"clients", 0, "answerBytes"}, 2.0},
		{"acl", ACLListTable([]ACLConfig{{BrokerGroup: "broker-a", Accounts: []ACLAccount{{AccessKey: "ak", Admin: true}}}}),
			[]any{0, "plainAccessConfigs", 0, "admin"}, true},
		{"topic update", TopicUpdateTable("T", []TopicChange{{Group: "broker-a", Before: nameserver.TopicConfig{TopicName: "T", Perm: 6, WriteQueueNums: 8},
			After: nameserver.TopicConfig{TopicName: "T", Perm: 4, WriteQueueNums: 8}}}), []any{0, "after", "perm"}, 4.0},
		{"topic update absent", TopicUpdateTable("T", []TopicChange{{Group: "broker-b", Absent: true}}), []any{0, "result"}, "absent"},
	}
	for _, c := range cases {
		got := field(decodeJSON(t, c.tb), c.path...)
		if gb, _ := json.Marshal(got); string(gb) != mustJSON(t, c.want) {
			t.Errorf("%s: %v = %s, want %s", c.name, c.path, gb, mustJSON(t, c.want))
		}
	}
	if err := (Table{Header: []string{"X"}}).WriteJSON(&bytes.Buffer{}); !errors.Is(err, ErrNoJSON) {
		t.Errorf("table without a document: %v", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
