package adminapi

import (
	"encoding/json"
	"testing"

	"github.com/rocketraft/rocketraft/store"
)

func TestResetOffsetsRule(t *testing.T) {
	search := func(q int32, ts int64) store.QueueOffset { return store.QueueOffset(ts/10 + int64(q)) }
	maxOff := func(q int32) store.QueueOffset { return 100 + store.QueueOffset(q) }
	current := func(q int32) (store.QueueOffset, bool) {
		if q == 2 {
			return 0, false
		}
		return 5, true
	}
	cases := []struct {
		ts    int64
		force bool
		want  []int64
	}{
		{30, true, []int64{3, 4, 5}},       // by timestamp
		{30, false, []int64{3, 4, 5}},      // backwards only: all are ≤ 5 or have no offset
		{100, false, []int64{5, 5, 12}},    // queues 0 and 1 would move forward: kept at 5
		{100, true, []int64{10, 11, 12}},   // forced forward
		{-1, true, []int64{100, 101, 102}}, // to the end
	}
	for _, c := range cases {
		got := resetOffsets("broker-a", "T", 3, c.ts, c.force, search, maxOff, current)
		for i, e := range got {
			if e.Offset != c.want[i] || e.QueueID != int32(i) || e.Topic != "T" || e.BrokerName != "broker-a" {
				t.Errorf("ts=%d force=%v queue %d: %+v, want offset %d", c.ts, c.force, i, e, c.want[i])
			}
		}
	}
}

func TestGsonOffsetTableGolden(t *testing.T) {
	got := string(gsonOffsetTable([]ResetOffsetEntry{{Topic: "T", BrokerName: "b", QueueID: 0, Offset: 5}, {Topic: "T", BrokerName: "b", QueueID: 1, Offset: 7}}))
	want := `{"offsetTable":[[{"topic":"T","brokerName":"b","queueId":0},5],[{"topic":"T","brokerName":"b","queueId":1},7]]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Fatal("the Go client picks the gson parser only for valid JSON")
	}
}

// TestResetNotificationPerLanguage: a Java client gets Apache's fastjson map
// (bare MessageQueue keys), any other the gson array form the Go client parses.
func TestResetNotificationPerLanguage(t *testing.T) {
	entries := []ResetOffsetEntry{{Topic: "T", BrokerName: "b", QueueID: 1, Offset: 7}}
	if got, want := string(resetNotification("JAVA", entries)), `{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:7}}`; got != want {
		t.Errorf("JAVA: %s\nwant %s", got, want)
	}
	if got := string(resetNotification("GO", entries)); got != string(gsonOffsetTable(entries)) {
		t.Errorf("GO: %s", got)
	}
}
