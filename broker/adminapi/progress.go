package adminapi

import (
	"context"
	"encoding/json"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// QueueProgress is one queue of a consumer group's progress: the broker's max
// offset (next to be written), the group's committed offset and the difference.
// internal/admin decodes this shape.
type QueueProgress struct {
	Topic          string            `json:"topic"`
	QueueID        int32             `json:"queueId"`
	BrokerOffset   store.QueueOffset `json:"brokerOffset"`
	ConsumerOffset store.QueueOffset `json:"consumerOffset"` // -1: none committed
	Lag            int64             `json:"lag"`
}

// GroupProgress is the body of a ConsumerProgress answer.
type GroupProgress struct {
	Group      string          `json:"group"`
	BrokerName string          `json:"brokerName"`
	Queues     []QueueProgress `json:"queues"`
}

// queueProgress computes lag: a group without an offset would start at the
// queue's min, so everything readable counts.
func queueProgress(topic string, q int32, off store.QueueOffset, committed bool, minOff, maxOff store.QueueOffset) QueueProgress {
	p := QueueProgress{Topic: topic, QueueID: q, BrokerOffset: maxOff, ConsumerOffset: off}
	from := off
	if !committed {
		p.ConsumerOffset = -1
		from = minOff
	}
	p.Lag = max(int64(maxOff-from), 0)
	return p
}

// groupProgress lists every queue of topic (every topic when empty) on which the
// group has committed an offset; a named topic lists all its queues. Offsets
// pending on the leader count as committed (they are what the group resumes from).
func (a *API) groupProgress(group, topic string) GroupProgress {
	gp := GroupProgress{Group: group, BrokerName: a.d.BrokerName, Queues: []QueueProgress{}}
	for _, t := range a.d.Replica.Topics() {
		if topic != "" && t.Name != topic {
			continue
		}
		for q := range max(t.ReadQueueNums, t.WriteQueueNums) {
			off, ok := a.consumerOffset(group, t.Name, q)
			if !ok && topic == "" {
				continue
			}
			gp.Queues = append(gp.Queues, queueProgress(t.Name, q, off, ok,
				a.d.Store.MinQueueOffset(t.Name, q), a.d.Store.MaxQueueOffset(t.Name, q)))
		}
	}
	return gp
}

// consumerProgress serves ConsumerProgress on the leader, which holds the
// offsets not yet replicated (the chain relays it from a follower).
func (a *API) consumerProgress(_ context.Context, req *route.Request) (*transport.Command, error) {
	f := route.FieldsOf(req.Command)
	group, topic := f.Str("consumerGroup", true), f.Str("topic", false)
	if f.Err != nil {
		return nil, f.Err
	}
	if err := route.ValidateGroup(group); err != nil {
		return nil, err
	}
	body, err := json.Marshal(a.groupProgress(group, topic))
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}
