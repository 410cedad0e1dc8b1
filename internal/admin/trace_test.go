package admin

import (
	"strings"
	"testing"
)

func traceRec(fields ...string) string { return strings.Join(fields, "\x01") + "\x02" }

// TestDecodeTraceRecords: the Go client's longer records (clientHost last),
// EndTransaction, and what Java's decoder skips (unknown types, short records).
func TestDecodeTraceRecords(t *testing.T) {
	body := traceRec("Pub", "1700000000000", "R", "pg", "T", "ID1", "tg", "k", "10.0.0.1:10911", "5", "4", "4", "OFF", "false", "10.9.9.9") +
		traceRec("SubBefore", "1700000000001", "R", "cg", "req", "ID1", "2", "null", "10.8.8.8") +
		traceRec("EndTransaction", "1700000000002", "R", "pg", "T", "ID1", "tg", "k", "10.0.0.1:10911", "1", "tx-1", "COMMIT_MESSAGE", "true") +
		traceRec("Pub", "1", "R") + traceRec("Nope", "x") + "\n"
	rs := decodeTraceRecords(body, "127.0.0.1")
	if len(rs) != 3 {
		t.Fatalf("%d records, want 3: %+v", len(rs), rs)
	}
	pub, sub, end := rs[0], rs[1], rs[2]
	if pub.ClientHost != "10.9.9.9" || pub.Success || pub.MsgType != "Order_Msg" || pub.CostMillis != 4 || pub.BodyLength != 5 ||
		pub.OffsetMsgID != "OFF" || pub.Time.UnixMilli() != 1700000000000 {
		t.Errorf("Go Pub: %+v", pub)
	}
	if sub.ClientHost != "10.8.8.8" || sub.RetryTimes != 2 || sub.Group != "cg" || sub.RequestID != "req" {
		t.Errorf("Go SubBefore: %+v", sub)
	}
	if end.TransactionID != "tx-1" || end.TransactionState != "COMMIT_MESSAGE" || !end.FromCheck || end.MsgType != "Trans_Msg_Half" ||
		end.ClientHost != "127.0.0.1" {
		t.Errorf("EndTransaction: %+v", end)
	}
}

// TestMessageSpecsNameTheFlag: bad flag combinations fail naming the flag.
func TestMessageSpecsNameTheFlag(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{PrintSpec{Topic: "T", QueueID: 1, From: -1, To: -1}.Validate(), "--broker-name"},
		{PrintSpec{Topic: "T", QueueID: -1, From: 5, To: 2}.Validate(), "--to=2"},
		{PrintSpec{Topic: "T", QueueID: -1, From: -1, To: -1, Begin: 9, End: 3}.Validate(), "--end=3"},
		{PrintSpec{QueueID: -1, From: -1, To: -1}.Validate(), "--topic"},
		{ConsumeSpec{Topic: "T", Count: 0}.Validate(), "--count=0"},
		{ConsumeSpec{Topic: "T", Count: 1, Commit: true}.Validate(), "--group"},
		{SendSpec{Topic: "T", QueueID: 2}.Validate(), "--broker-name"},
		{SendSpec{Topic: "T", QueueID: -1, Properties: map[string]string{"a": "x\x01y"}}.Validate(), "--property a"},
	}
	for i, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("case %d: %v, want an error naming %s", i, c.err, c.want)
		}
	}
	if err := (PrintSpec{Topic: "T", QueueID: -1, From: -1, To: -1}).Validate(); err != nil {
		t.Errorf("a plain print: %v", err)
	}
}
