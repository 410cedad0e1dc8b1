package adminapi

import (
	"testing"
)

// TestMarshalBeanKeyedWritesQueueKeysBare: a MessageQueue-keyed table comes out
// as Apache's fastjson writes it, the queue object as a bare key, while string
// keys, string values that look like objects, and keys that only start like an
// object stay as they were.
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

	cases := map[string]string{
		`{"a":"{\"x\":1}"}`:                    `{"a":"{\"x\":1}"}`,              // a value, not a key
		`{"{not json":1}`:                      `{"{not json":1}`,                // starts like an object, is not one
		`{"plain":{"{\"k\":2}":3},"s":"\\"}`:   `{"plain":{{"k":2}:3},"s":"\\"}`, // nested, and a trailing escaped backslash
		`{"offsetTable":{}}`:                   `{"offsetTable":{}}`,
		`[{"{\"q\":[1,2]}":true},"{\"q\":0}"]`: `[{{"q":[1,2]}:true},"{\"q\":0}"]`,
	}
	for in, want := range cases {
		if got := string(unquoteObjectKeys([]byte(in))); got != want {
			t.Errorf("unquoteObjectKeys(%s) = %s, want %s", in, got, want)
		}
	}
}
