package admin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultTraceTopic is Apache's msgTraceTopicName default.
const DefaultTraceTopic = "RMQ_SYS_TRACE_TOPIC"

// traceMaxNum is how many trace messages one group is asked for, as mqadmin
// queryMsgTraceById asks.
const traceMaxNum = 64

// RocketMQ's trace encoding (TraceDataEncoder): fields end with 0x01, records
// with 0x02, several records per trace message body.
const (
	traceFieldSep  = "\x01"
	traceRecordSep = "\x02"
)

// TraceRecord is one decoded trace record. Which fields a type fills follows
// the encoder: Pub (producer: topic, tags, keys, store host, body length,
// cost, message type, offset msgId, success), SubBefore (consumer group,
// request id, retry times), SubAfter (cost, success, context code) and
// EndTransaction (transaction id and state).
type TraceRecord struct {
	Type        string    `json:"type"`
	Time        time.Time `json:"time"`
	Region      string    `json:"region,omitempty"`
	Group       string    `json:"group"`
	Topic       string    `json:"topic,omitempty"`
	MsgID       string    `json:"msgId"`
	Tags        string    `json:"tags,omitempty"`
	Keys        string    `json:"keys,omitempty"`
	StoreHost   string    `json:"storeHost,omitempty"`
	BodyLength  int       `json:"bodyLength,omitempty"`
	CostMillis  int64     `json:"costMillis"`
	MsgType     string    `json:"msgType,omitempty"`
	OffsetMsgID string    `json:"offsetMsgId,omitempty"`
	Success     bool      `json:"success"`
	// ClientHost is the record's own (Go clients write it) or else the host
	// that sent the trace message (Apache's TraceView does the same).
	ClientHost       string `json:"clientHost"`
	RequestID        string `json:"requestId,omitempty"`
	RetryTimes       int    `json:"retryTimes,omitempty"`
	ContextCode      int    `json:"contextCode,omitempty"`
	TransactionID    string `json:"transactionId,omitempty"`
	TransactionState string `json:"transactionState,omitempty"`
	FromCheck        bool   `json:"fromTransactionCheck,omitempty"`
}

// traceMsgTypes are MessageType's ordinals (Normal_Msg, Trans_Msg_Half, ...).
var traceMsgTypes = []string{"Normal_Msg", "Trans_Msg_Half", "Trans_msg_Commit", "Delay_Msg", "Order_Msg"}

// decodeTraceRecords splits one trace body; records of unknown types or too
// few fields are skipped, as Java's decoder skips them.
func decodeTraceRecords(body, bornHost string) []TraceRecord {
	var out []TraceRecord
	for _, rec := range strings.Split(body, traceRecordSep) {
		f := strings.Split(strings.TrimLeft(rec, "\r\n\t "), traceFieldSep)
		at := func(i int) string {
			if i < len(f) {
				return f[i]
			}
			return ""
		}
		num := func(i int) int64 { n, _ := strconv.ParseInt(at(i), 10, 64); return n }
		ms := func(i int) time.Time { return time.UnixMilli(num(i)).UTC() }
		r := TraceRecord{Type: f[0], ClientHost: bornHost}
		switch {
		case f[0] == "Pub" && len(f) >= 13:
			r.Time, r.Region, r.Group, r.Topic, r.MsgID, r.Tags, r.Keys, r.StoreHost = ms(1), at(2), at(3), at(4), at(5), at(6), at(7), at(8)
			r.BodyLength, r.CostMillis = int(num(9)), num(10)
			if t := int(num(11)); t >= 0 && t < len(traceMsgTypes) {
				r.MsgType = traceMsgTypes[t]
			}
			r.OffsetMsgID = at(12)
			r.Success = len(f) < 14 || at(13) == "true"
			if len(f) >= 15 && at(14) != "" {
				r.ClientHost = at(14)
			}
		case f[0] == "SubBefore" && len(f) >= 8:
			r.Time, r.Region, r.Group, r.RequestID, r.MsgID = ms(1), at(2), at(3), at(4), at(5)
			r.RetryTimes, r.Keys, r.Success = int(num(6)), at(7), true
			if len(f) >= 9 && at(8) != "" {
				r.ClientHost = at(8)
			}
		case f[0] == "SubAfter" && len(f) >= 7:
			r.RequestID, r.MsgID, r.CostMillis, r.Success, r.Keys, r.ContextCode = at(1), at(2), num(3), at(4) == "true", at(5), int(num(6))
			if len(f) >= 9 {
				r.Time, r.Group = ms(7), at(8)
			}
		case f[0] == "EndTransaction" && len(f) >= 13:
			r.Time, r.Region, r.Group, r.Topic, r.MsgID, r.Tags, r.Keys, r.StoreHost = ms(1), at(2), at(3), at(4), at(5), at(6), at(7), at(8)
			if t := int(num(9)); t >= 0 && t < len(traceMsgTypes) {
				r.MsgType = traceMsgTypes[t]
			}
			r.TransactionID, r.TransactionState, r.FromCheck, r.Success = at(10), at(11), at(12) == "true", true
		default:
			continue
		}
		out = append(out, r)
	}
	return out
}

// Trace reads the trace records of one message (mqadmin queryMsgTraceById):
// QUERY_MESSAGE on traceTopic by key = msgID on every group serving it (a
// trace message's KEYS are the msgIds it traces), then the records of that
// msgId, oldest first. A message nobody traced is ErrNotFound.
func (c *Client) Trace(ctx context.Context, msgID, traceTopic string) ([]TraceRecord, error) {
	if msgID == "" {
		return nil, fmt.Errorf("message trace: the MSGID argument is empty")
	}
	if traceTopic == "" {
		traceTopic = DefaultTraceTopic
	}
	out := []TraceRecord{}
	err := c.queryByKey(ctx, traceTopic, msgID, traceMaxNum, func(g, addr string, body []byte) error {
		ms, err := decodeRecords(body)
		if err != nil {
			return err
		}
		for _, m := range ms {
			v := withBody(m, g, addr)
			if v.Topic != traceTopic || !slices.Contains(v.Keys, msgID) {
				continue // the index matches hashes
			}
			host := v.BornHost
			if i := strings.LastIndexByte(host, ':'); i > 0 {
				host = host[:i]
			}
			for _, r := range decodeTraceRecords(v.Body, host) {
				if r.MsgID == msgID {
					out = append(out, r)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no trace of msgId=%s in %s: %w", msgID, traceTopic, ErrNotFound)
	}
	slices.SortStableFunc(out, func(a, b TraceRecord) int { return cmp.Compare(a.Time.UnixMilli(), b.Time.UnixMilli()) })
	return out, nil
}

// TraceTable renders Trace like mqadmin queryMsgTraceById, with the topic and
// offset msgId of publishes and the request id of consumes.
func TraceTable(msgID string, rs []TraceRecord) Table {
	t := Table{Header: []string{"TYPE", "GROUP", "CLIENT-HOST", "TIME", "COST-MS", "STATUS", "DETAIL"}}
	for _, r := range rs {
		status := "success"
		if !r.Success {
			status = "failed"
		}
		var detail string
		switch r.Type {
		case "Pub":
			detail = fmt.Sprintf("topic=%s tags=%s keys=%s storeHost=%s offsetMsgId=%s %s", r.Topic, r.Tags, r.Keys, r.StoreHost, r.OffsetMsgID, r.MsgType)
		case "SubBefore":
			detail = fmt.Sprintf("requestId=%s retryTimes=%d", r.RequestID, r.RetryTimes)
		case "SubAfter":
			detail = fmt.Sprintf("requestId=%s contextCode=%d", r.RequestID, r.ContextCode)
		case "EndTransaction":
			detail = fmt.Sprintf("topic=%s transactionId=%s state=%s fromCheck=%v", r.Topic, r.TransactionID, r.TransactionState, r.FromCheck)
		}
		t.Rows = append(t.Rows, []string{r.Type, r.Group, r.ClientHost, r.Time.Format(time.RFC3339Nano),
			strconv.FormatInt(r.CostMillis, 10), status, detail})
	}
	t.Footer = []string{fmt.Sprintf("%d trace records of msgId %s", len(rs), msgID)}
	t.Doc = struct {
		MsgID   string        `json:"msgId"`
		Records []TraceRecord `json:"records"`
	}{msgID, rows(rs)}
	return t
}
