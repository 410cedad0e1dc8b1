package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

// ResetQueue is one queue of a reset answer: the offset the broker set.
type ResetQueue struct {
	Queue  QueueKey
	Offset int64
}

// ResetOffsetByTime asks node i to move group's offsets of topic to the first
// message stored at or after ts, as `mqadmin resetOffsetByTime` does
// (INVOKE_BROKER_TO_RESET_OFFSET, 222; the broker replicates the offsets and
// tells the group's clients with RESET_CONSUMER_CLIENT_OFFSET). Without force
// a queue only moves backwards. It returns the answer's table, sorted by
// queue, and the time the answer arrived: the offsets are what the broker
// set, so a scenario can record them as the reset points.
func (c *Cluster) ResetOffsetByTime(ctx context.Context, i int, group, topic string, ts time.Time, force bool) ([]ResetQueue, time.Time, error) {
	ext := map[string]string{
		"topic":     topic,
		"group":     group,
		"timestamp": strconv.FormatInt(ts.UnixMilli(), 10),
		"isForce":   strconv.FormatBool(force),
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second) // the broker gives its raft entry 10 s
	defer cancel()
	resp, err := c.TC.Invoke(ctx, c.Nodes[i].ClientAddr, transport.NewRequest(transport.InvokeBrokerToResetOffset, c.Sign(ext, nil), nil))
	at := time.Now()
	if err != nil {
		return nil, at, err
	}
	if resp.ResponseCode() != transport.Success {
		return nil, at, fmt.Errorf("reset %s on %s: code %d: %s", group, topic, resp.ResponseCode(), resp.Remark)
	}
	qs, err := parseResetBody(resp.Body)
	if err != nil {
		return nil, at, fmt.Errorf("reset %s on %s: %w", group, topic, err)
	}
	return qs, at, nil
}

// parseResetBody reads Apache's ResetOffsetBody, {"offsetTable":{<queue>:offset}}
// with each key the bare queue object (fastjson), the form mqadmin decodes.
func parseResetBody(body []byte) ([]ResetQueue, error) {
	js, err := transport.QuoteObjectKeys(body)
	if err != nil {
		return nil, fmt.Errorf("answer body %q: %w", body, err)
	}
	var tab struct {
		OffsetTable map[string]int64 `json:"offsetTable"`
	}
	if err := json.Unmarshal(js, &tab); err != nil {
		return nil, fmt.Errorf("answer body %q: %w", body, err)
	}
	out := make([]ResetQueue, 0, len(tab.OffsetTable))
	for k, off := range tab.OffsetTable {
		var mq struct {
			Topic   string `json:"topic"`
			QueueID int32  `json:"queueId"`
		}
		if err := json.Unmarshal([]byte(k), &mq); err != nil || mq.Topic == "" {
			return nil, fmt.Errorf("answer key %q is not a message queue: %v", k, err)
		}
		out = append(out, ResetQueue{Queue: QueueKey{Topic: mq.Topic, QueueID: mq.QueueID}, Offset: off})
	}
	slices.SortFunc(out, func(a, b ResetQueue) int { return compareQueue(a.Queue, b.Queue) })
	return out, nil
}
