package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// ErrNothingToChange: topic update was given no field to change.
var ErrNothingToChange = errors.New("admin: nothing to change")

// TopicPatch is what topic update changes; a nil field keeps the value the
// topic has on each group. UPDATE_AND_CREATE_TOPIC replaces the whole config,
// so the patch is applied to the config read first (GET_TOPIC_CONFIG).
type TopicPatch struct {
	ReadQueueNums  *int32
	WriteQueueNums *int32
	Perm           *int32 // PermName bits: 2 write, 4 read
	Order          *bool
}

// Empty reports a patch that changes no field.
func (p TopicPatch) Empty() bool {
	return p.ReadQueueNums == nil && p.WriteQueueNums == nil && p.Perm == nil && p.Order == nil
}

func (p TopicPatch) apply(tc nameserver.TopicConfig) nameserver.TopicConfig {
	if p.ReadQueueNums != nil {
		tc.ReadQueueNums = *p.ReadQueueNums
	}
	if p.WriteQueueNums != nil {
		tc.WriteQueueNums = *p.WriteQueueNums
	}
	if p.Perm != nil {
		tc.Perm = nameserver.Perm(*p.Perm)
	}
	if p.Order != nil {
		tc.Order = *p.Order
	}
	return tc
}

// sameShape compares the fields UPDATE_AND_CREATE_TOPIC writes (the struct
// holds a map, so it is not comparable with ==).
func sameShape(a, b nameserver.TopicConfig) bool {
	return a.ReadQueueNums == b.ReadQueueNums && a.WriteQueueNums == b.WriteQueueNums && a.Perm == b.Perm &&
		a.TopicSysFlag == b.TopicSysFlag && a.Order == b.Order && a.TopicFilterType == b.TopicFilterType
}

// TopicChange is the outcome of topic update on one group.
type TopicChange struct {
	Group string
	Addr  string
	// Before is the config read; After what was written (equal when the patch
	// changed nothing there, and then nothing was written).
	Before, After nameserver.TopicConfig
	// Absent: the group has no such topic and was left alone.
	Absent bool
	Err    error
}

// Outcome is one word for the change: updated, unchanged, absent or failed.
func (c TopicChange) Outcome() string {
	switch {
	case c.Err != nil:
		return "failed"
	case c.Absent:
		return "absent"
	case sameShape(c.Before, c.After):
		return "unchanged"
	}
	return "updated"
}

// TopicConfig reads a topic's config from the group node at addr
// (GET_TOPIC_CONFIG; a follower forwards it to its leader). A topic the group
// does not have wraps ErrNotFound.
func (c *Client) TopicConfig(ctx context.Context, addr, topic string) (nameserver.TopicConfig, error) {
	resp, err := c.invoke(ctx, addr, transport.GetTopicConfig, map[string]string{"topic": topic}, 0)
	if err != nil {
		return nameserver.TopicConfig{}, err
	}
	switch resp.ResponseCode() {
	case transport.Success:
	case transport.TopicNotExist:
		return nameserver.TopicConfig{}, fmt.Errorf("topic %s at broker=%s: %w", topic, addr, ErrNotFound)
	case transport.RequestCodeNotSupported:
		// A node older than the code, e.g. during a rolling upgrade: updating
		// blind would reset the fields not given, so refuse instead.
		return nameserver.TopicConfig{}, fmt.Errorf("%s broker=%s: not served by this broker version; upgrade it, or give every field to topic create: %w",
			transport.GetTopicConfig, addr, ErrBrokerResponse)
	default:
		return nameserver.TopicConfig{}, fmt.Errorf("%s broker=%s: %s %s: %w", transport.GetTopicConfig, addr, resp.ResponseCode(), resp.Remark, ErrBrokerResponse)
	}
	var tc nameserver.TopicConfig
	if err := json.Unmarshal(resp.Body, &tc); err != nil {
		return tc, fmt.Errorf("%s broker=%s: %v: %w", transport.GetTopicConfig, addr, err, ErrBadAnswer)
	}
	if tc.TopicName != topic {
		return tc, fmt.Errorf("%s broker=%s: asked for topic %s, got %q: %w", transport.GetTopicConfig, addr, topic, tc.TopicName, ErrBadAnswer)
	}
	return tc, nil
}

// TopicUpdate changes the fields of p on every selected group that has the
// topic, keeping the others as each group has them: it reads the config,
// applies p and writes the result back (groups where nothing changes are not
// written). Groups without the topic are reported Absent and left alone; when
// no selected group has it the error wraps ErrNotFound (create it first).
//
// Read and write are two requests: an update by someone else in between is
// overwritten by the fields read here. Admin changes are rare and manual; a
// compare-and-set would need a broker code RocketMQ does not have. (mqadmin
// updateTopic does not read at all: it resets what is not given to defaults.)
func (c *Client) TopicUpdate(ctx context.Context, topic, cluster, brokerName string, p TopicPatch) ([]TopicChange, error) {
	if p.Empty() {
		return nil, fmt.Errorf("topic update %s: %w", topic, ErrNothingToChange)
	}
	groups, err := c.selected(ctx, cluster, brokerName)
	if err != nil {
		return nil, err
	}
	var out []TopicChange
	var absent []string
	for _, g := range groups {
		ch := TopicChange{Group: g.Name, Addr: g.Target()}
		ch.Before, ch.Err = c.TopicConfig(ctx, ch.Addr, topic)
		switch {
		case errors.Is(ch.Err, ErrNotFound):
			ch.Absent, ch.Err = true, nil
			absent = append(absent, g.Name)
		case ch.Err == nil:
			ch.After = p.apply(ch.Before)
			if !sameShape(ch.Before, ch.After) {
				_, ch.Err = c.call(ctx, ch.Addr, transport.UpdateAndCreateTopic, upsertExt(ch.After))
			}
		}
		out = append(out, ch)
	}
	if len(absent) == len(groups) {
		return out, fmt.Errorf("topic %s does not exist on broker groups %v: create it with topic create: %w", topic, absent, ErrNotFound)
	}
	return out, nil
}

// TopicUpdateError is the first failed group, for the exit status.
func TopicUpdateError(cs []TopicChange) error {
	for _, c := range cs {
		if c.Err != nil {
			return fmt.Errorf("group %s: %w", c.Group, c.Err)
		}
	}
	return nil
}

// topicChangeDoc is one row of TopicUpdateTable in JSON; before and after are
// RocketMQ's TopicConfig.
type topicChangeDoc struct {
	BrokerName string                  `json:"brokerName"`
	Addr       string                  `json:"addr"`
	Topic      string                  `json:"topic"`
	Result     string                  `json:"result"`
	Before     *nameserver.TopicConfig `json:"before,omitempty"`
	After      *nameserver.TopicConfig `json:"after,omitempty"`
	Error      string                  `json:"error,omitempty"`
}

// TopicUpdateTable renders TopicUpdate: per group the fields after the update,
// "old->new" where it changed them.
func TopicUpdateTable(topic string, cs []TopicChange) Table {
	t := Table{Header: []string{"GROUP", "ADDR", "TOPIC", "READ-QUEUES", "WRITE-QUEUES", "PERM", "ORDER", "RESULT"}}
	docs := []topicChangeDoc{}
	for _, c := range cs {
		d := topicChangeDoc{BrokerName: c.Group, Addr: c.Addr, Topic: topic, Result: c.Outcome(), Error: errText(c.Err)}
		row := []string{c.Group, c.Addr, topic, "", "", "", ""}
		var res string
		switch {
		case c.Absent:
			res = "SKIPPED: no such topic on this group (topic create --broker-name " + c.Group + " adds it)"
		case c.Err != nil && c.Before.TopicName == "":
			res = "FAILED: " + c.Err.Error() // the read failed: no fields to show
		default:
			b, a := c.Before, c.After
			d.Before, d.After = &b, &a
			row[3] = arrow(strconv.Itoa(int(b.ReadQueueNums)), strconv.Itoa(int(a.ReadQueueNums)))
			row[4] = arrow(strconv.Itoa(int(b.WriteQueueNums)), strconv.Itoa(int(a.WriteQueueNums)))
			row[5] = arrow(permString(b.Perm), permString(a.Perm))
			row[6] = arrow(strconv.FormatBool(b.Order), strconv.FormatBool(a.Order))
			if c.Err != nil {
				res = "FAILED: " + c.Err.Error()
			} else {
				res = map[string]string{"updated": "OK", "unchanged": "OK (unchanged)"}[d.Result]
			}
		}
		t.Rows = append(t.Rows, append(row, res))
		docs = append(docs, d)
	}
	t.Doc = docs
	return t
}

// arrow is "old->new", or the value when it did not change.
func arrow(before, after string) string {
	if before == after {
		return after
	}
	return before + "->" + after
}
