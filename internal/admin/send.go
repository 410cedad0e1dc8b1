package admin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// AdminProducerGroup is the producer group message send sends as.
const AdminProducerGroup = "rocketraft-admin"

// SendSpec is one message for message send (mqadmin sendMessage).
type SendSpec struct {
	Topic      string
	Tags       string
	Keys       []string
	Body       string
	Properties map[string]string
	// BrokerName and QueueID pin the queue; "" and -1 take the first group of
	// the route with write permission and a queue of it by the clock.
	BrokerName string
	QueueID    int32
}

// Validate names the first flag that breaks a rule.
func (s SendSpec) Validate() error {
	switch {
	case s.Topic == "":
		return fmt.Errorf("--topic is required")
	case s.QueueID >= 0 && s.BrokerName == "":
		return fmt.Errorf("--queue=%d needs --broker-name: queue ids are per group", s.QueueID)
	}
	for k := range s.Properties {
		if k == "" || strings.ContainsAny(k, "\x01\x02") {
			return fmt.Errorf("--property %q: a name is non-empty and has no 0x01/0x02 bytes", k)
		}
		if strings.ContainsAny(s.Properties[k], "\x01\x02") {
			return fmt.Errorf("--property %s: the value has 0x01/0x02 bytes (RocketMQ's property separators)", k)
		}
	}
	return nil
}

// SendResult is what message send reports: the producer msgId (UNIQ_KEY) the
// message carries, the offset msgId the broker answered, and where it landed.
type SendResult struct {
	MsgID       string `json:"msgId"`
	OffsetMsgID string `json:"offsetMsgId"`
	BrokerName  string `json:"brokerName"`
	Addr        string `json:"addr"`
	QueueID     int32  `json:"queueId"`
	QueueOffset int64  `json:"queueOffset"`
}

// newUniqKey is a producer msgId: 32 hex digits like the clients' (random
// here: the message's identity, not its position).
func newUniqKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

// Send stores one message with SEND_MESSAGE (10) on the chosen queue's group
// leader and reports where it went.
func (c *Client) Send(ctx context.Context, s SendSpec) (SendResult, error) {
	if err := s.Validate(); err != nil {
		return SendResult{}, fmt.Errorf("message send: %w", err)
	}
	r, err := c.TopicRoute(ctx, s.Topic)
	if err != nil && c.cfg.BrokerAddr == "" {
		return SendResult{}, err
	}
	targets := routeTargets(r)
	writable := map[string]int32{}
	for _, qd := range r.QueueDatas {
		if qd.Perm&2 != 0 && qd.WriteQueueNums > 0 {
			writable[qd.BrokerName] = qd.WriteQueueNums
		}
	}
	group, q := s.BrokerName, s.QueueID
	if group == "" {
		names := slices.Sorted(maps.Keys(writable))
		if len(names) == 0 {
			return SendResult{}, fmt.Errorf("topic %s has no writable queue in its route: %w", s.Topic, ErrNoTarget)
		}
		group = names[0]
	}
	n, ok := writable[group]
	if !ok && c.cfg.BrokerAddr == "" {
		return SendResult{}, fmt.Errorf("topic %s has no writable queues on broker group %q: %w", s.Topic, group, ErrNoTarget)
	}
	if q < 0 {
		q = int32(time.Now().UnixNano() % int64(max(n, 1)))
	} else if ok && q >= n {
		return SendResult{}, fmt.Errorf("--queue=%d: group %s writes queues 0..%d of %s: %w", q, group, n-1, s.Topic, ErrNotFound)
	}
	addr := targets[group]
	if c.cfg.BrokerAddr != "" {
		addr = c.cfg.BrokerAddr
	}
	props := maps.Clone(s.Properties)
	if props == nil {
		props = map[string]string{}
	}
	uniq := newUniqKey()
	props[store.PropertyUniqKey] = uniq
	props["WAIT"] = "true"
	if s.Tags != "" {
		props[store.PropertyTags] = s.Tags
	}
	if len(s.Keys) > 0 {
		props[store.PropertyKeys] = strings.Join(s.Keys, " ")
	}
	ext := map[string]string{"producerGroup": AdminProducerGroup, "topic": s.Topic, "defaultTopic": "TBW102",
		"defaultTopicQueueNums": "4", "queueId": strconv.Itoa(int(q)), "sysFlag": "0",
		"bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10), "flag": "0",
		"properties": store.EncodeProperties(props), "reconsumeTimes": "0", "unitMode": "false", "batch": "false"}
	cctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, err := c.tc.Invoke(cctx, addr, transport.NewRequest(transport.SendMessage, c.cfg.Credentials.SignExt(ext, []byte(s.Body)), []byte(s.Body)))
	if err != nil {
		return SendResult{}, fmt.Errorf("send topic=%s broker=%s: %w", s.Topic, addr, err)
	}
	if resp.ResponseCode() != transport.Success {
		return SendResult{}, fmt.Errorf("send topic=%s broker=%s: %s %s: %w", s.Topic, addr, resp.ResponseCode(), resp.Remark, ErrBrokerResponse)
	}
	res := SendResult{MsgID: uniq, OffsetMsgID: resp.Field("msgId"), BrokerName: group, Addr: addr}
	qid, err1 := strconv.ParseInt(resp.Field("queueId"), 10, 32)
	off, err2 := strconv.ParseInt(resp.Field("queueOffset"), 10, 64)
	if err1 != nil || err2 != nil {
		return res, fmt.Errorf("send broker=%s: queueId=%q queueOffset=%q: %w", addr, resp.Field("queueId"), resp.Field("queueOffset"), ErrBadAnswer)
	}
	res.QueueID, res.QueueOffset = int32(qid), off
	return res, nil
}

// SendResultTable renders Send as mqadmin sendMessage's row, plus the offset msgId.
func SendResultTable(r SendResult) Table {
	return Table{
		Header: []string{"BROKER-NAME", "QUEUE", "QUEUE-OFFSET", "MSGID", "OFFSET-MSGID"},
		Rows:   [][]string{{r.BrokerName, strconv.Itoa(int(r.QueueID)), strconv.FormatInt(r.QueueOffset, 10), r.MsgID, r.OffsetMsgID}},
		Doc:    r,
	}
}
