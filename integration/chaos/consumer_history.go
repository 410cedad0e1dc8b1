package chaos

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// GroupKind is how a consumer group consumes.
type GroupKind int

const (
	// Concurrent: a push consumer with ConsumeConcurrently (any order, a
	// queue may be consumed by its old and new owner around a rebalance).
	Concurrent GroupKind = iota
	// Orderly: ConsumeOrderly; a queue is consumed by the holder of its broker
	// lock only, one message after another.
	Orderly
)

func (k GroupKind) String() string {
	if k == Orderly {
		return "orderly"
	}
	return "concurrent"
}

// ConsumerGroup is one group the scenario ran: every acknowledged message of
// Topic must be delivered to it at least once.
type ConsumerGroup struct {
	Name  string
	Topic string
	Kind  GroupKind
}

// Delivery is one message handed to a consumer's callback. Start and End
// bracket the callback (for an orderly group: the consume interval during which
// the consumer owns the queue).
type Delivery struct {
	Group    string
	Consumer string // instance name, unique per consumer of the scenario
	Queue    QueueKey
	Offset   int64
	ID       string // the body, which is the workload's id
	Start    time.Time
	End      time.Time
}

// OffsetObs is one committed offset of (Group, Queue) as the broker at Addr
// answered QUERY_CONSUMER_OFFSET at At, or, with Reset, an explicit reset to
// Offset the scenario made at At (the only legal way for it to move back).
type OffsetObs struct {
	Group  string
	Queue  QueueKey
	Offset int64
	At     time.Time
	Addr   string
	Reset  bool
}

// consumerLog is the consumer side of a History, under its own lock so that
// deliveries do not contend with sends.
type consumerLog struct {
	mu         sync.Mutex
	groups     []ConsumerGroup
	deliveries []Delivery
	offsets    []OffsetObs
	// scanned is how many sends topicQueues has looked at.
	scanned int
	topics  map[string]map[int32]bool
}

// AddGroup records a consumer group the scenario runs.
func (h *History) AddGroup(g ConsumerGroup) {
	h.cons.mu.Lock()
	h.cons.groups = append(h.cons.groups, g)
	h.cons.mu.Unlock()
}

// AddDelivery records one delivered message.
func (h *History) AddDelivery(d Delivery) {
	h.cons.mu.Lock()
	h.cons.deliveries = append(h.cons.deliveries, d)
	h.cons.mu.Unlock()
}

// AddOffset records one committed-offset observation.
func (h *History) AddOffset(o OffsetObs) {
	h.cons.mu.Lock()
	h.cons.offsets = append(h.cons.offsets, o)
	h.cons.mu.Unlock()
}

// AddOffsetReset records that the scenario reset (Group, Queue) to offset at
// at (RESET_OFFSET or an UPDATE_CONSUMER_OFFSET it sent itself): the next
// observations may be below the ones before without being a regression.
func (h *History) AddOffsetReset(group string, q QueueKey, offset int64, at time.Time) {
	h.AddOffset(OffsetObs{Group: group, Queue: q, Offset: offset, At: at, Reset: true})
}

// Groups returns a copy of the consumer groups.
func (h *History) Groups() []ConsumerGroup {
	h.cons.mu.Lock()
	defer h.cons.mu.Unlock()
	return slices.Clone(h.cons.groups)
}

// Deliveries returns a copy of the deliveries.
func (h *History) Deliveries() []Delivery {
	h.cons.mu.Lock()
	defer h.cons.mu.Unlock()
	return slices.Clone(h.cons.deliveries)
}

// deliveriesSince returns a copy of the deliveries from the i-th on.
func (h *History) deliveriesSince(i int) []Delivery {
	h.cons.mu.Lock()
	defer h.cons.mu.Unlock()
	return slices.Clone(h.cons.deliveries[min(i, len(h.cons.deliveries)):])
}

// Offsets returns a copy of the offset observations and resets.
func (h *History) Offsets() []OffsetObs {
	h.cons.mu.Lock()
	defer h.cons.mu.Unlock()
	return slices.Clone(h.cons.offsets)
}

// topicQueues is every topic with an acknowledged send so far (so it exists
// and has a route) and the queues sent to. It looks only at the sends recorded
// since its last call.
func (h *History) topicQueues() map[string][]int32 {
	h.mu.Lock()
	fresh := h.sends[h.cons.scanned:]
	h.cons.scanned = len(h.sends)
	if h.cons.topics == nil {
		h.cons.topics = map[string]map[int32]bool{}
	}
	for _, s := range fresh {
		if s.Outcome != OK {
			continue
		}
		qs := h.cons.topics[s.Queue.Topic]
		if qs == nil {
			qs = map[int32]bool{}
			h.cons.topics[s.Queue.Topic] = qs
		}
		qs[s.Queue.QueueID] = true
	}
	out := map[string][]int32{}
	for t, qs := range h.cons.topics {
		out[t] = slices.Sorted(maps.Keys(qs))
	}
	h.mu.Unlock()
	return out
}
