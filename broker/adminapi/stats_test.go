package adminapi

import (
	"testing"
)

// TestMarshalBeanKeyedWritesQueueKeysBare: a MessageQueue-keyed table comes out
// as Apache's fastjson writes it, the queue object as a bare key (the rewrite's
// own cases are transport's TestBareObjectKeys).
func TestMarshalBeanKeyedWritesQueueKeysBare(t *testing.T) {
	table := TopicStatsTable{OffsetTable: map[string]TopicOffset{
		messageQueueKey(`T"q`, "broker-a", 1): {MinOffset: 0, MaxOffset: 5, LastUpdateTimestamp: 7},
	}}
	got, err := marshalBeanKeyed(table)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"offsetTable":{{"brokerName":"broker-a","queueId":1,"topic":"T\"q"}:{"minOffset":0,"maxOffset":5,"lastUpdateTimestamp":7}},"topicPutTps":0}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

}
