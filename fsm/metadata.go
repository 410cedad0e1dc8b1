package fsm

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rocketraft/rocketraft/store"
)

// Business errors of metadata and put commands: they come back as result values, never
// as panics, and are identical on every replica because they depend only on replicated
// state.
var (
	ErrTopicNotFound       = errors.New("fsm: topic not found")
	ErrQueueIDInvalid      = errors.New("fsm: queue id out of range")
	ErrGroupNotFound       = errors.New("fsm: subscription group not found")
	ErrInvalidConfig       = errors.New("fsm: invalid config")
	ErrSegmentSizeConflict = errors.New("fsm: segment size already pinned to another value")
)

// Topic permission bits (RocketMQ PermName).
const (
	PermInherit int32 = 0x1
	PermWrite   int32 = 0x2
	PermRead    int32 = 0x4
)

// maxQueueNums bounds queue counts of a topic config; RocketMQ has no hard limit, but a
// config with more queues than this is a typo, and each queue costs files on every node.
const maxQueueNums = 1 << 16

// TopicFilterSingleTag is RocketMQ's TopicFilterType of every topic a broker
// creates (TopicFilterType.SINGLE_TAG).
const TopicFilterSingleTag = "SINGLE_TAG"

// NewTopic is a topic with queues read and write queues, perm, and RocketMQ's
// defaults for the rest.
func NewTopic(name string, queues, perm int32) TopicConfig {
	return TopicConfig{Name: name, ReadQueueNums: queues, WriteQueueNums: queues, Perm: perm, TopicFilterType: TopicFilterSingleTag}
}

// TopicConfig is RocketMQ's TopicConfig; the JSON names are RocketMQ's so the broker
// can serve it on the wire unchanged.
type TopicConfig struct {
	Name            string            `json:"topicName"`
	ReadQueueNums   int32             `json:"readQueueNums"`
	WriteQueueNums  int32             `json:"writeQueueNums"`
	Perm            int32             `json:"perm"`
	TopicFilterType string            `json:"topicFilterType,omitempty"`
	TopicSysFlag    int32             `json:"topicSysFlag"`
	Order           bool              `json:"order"`
	Attributes      map[string]string `json:"attributes,omitempty"`
}

func (t *TopicConfig) validate() error {
	switch {
	case t.Name == "" || len(t.Name) > store.MaxTopicLength:
		return fmt.Errorf("%w: topic name of %d bytes", ErrInvalidConfig, len(t.Name))
	case t.ReadQueueNums < 0 || t.ReadQueueNums > maxQueueNums:
		return fmt.Errorf("%w: topic=%s readQueueNums=%d", ErrInvalidConfig, t.Name, t.ReadQueueNums)
	case t.WriteQueueNums < 0 || t.WriteQueueNums > maxQueueNums:
		return fmt.Errorf("%w: topic=%s writeQueueNums=%d", ErrInvalidConfig, t.Name, t.WriteQueueNums)
	}
	return nil
}

// SubscriptionGroupConfig is RocketMQ's SubscriptionGroupConfig (JSON names as in Java).
type SubscriptionGroupConfig struct {
	GroupName                      string            `json:"groupName"`
	ConsumeEnable                  bool              `json:"consumeEnable"`
	ConsumeFromMinEnable           bool              `json:"consumeFromMinEnable"`
	ConsumeBroadcastEnable         bool              `json:"consumeBroadcastEnable"`
	ConsumeMessageOrderly          bool              `json:"consumeMessageOrderly"`
	RetryQueueNums                 int32             `json:"retryQueueNums"`
	RetryMaxTimes                  int32             `json:"retryMaxTimes"`
	BrokerID                       int64             `json:"brokerId"`
	WhichBrokerWhenConsumeSlowly   int64             `json:"whichBrokerWhenConsumeSlowly"`
	NotifyConsumerIDsChangedEnable bool              `json:"notifyConsumerIdsChangedEnable"`
	GroupSysFlag                   int32             `json:"groupSysFlag"`
	ConsumeTimeoutMinute           int32             `json:"consumeTimeoutMinute"`
	Attributes                     map[string]string `json:"attributes,omitempty"`
}

// DefaultSubscriptionGroup returns RocketMQ's defaults for an auto-created group.
func DefaultSubscriptionGroup(name string) SubscriptionGroupConfig {
	return SubscriptionGroupConfig{
		GroupName: name, ConsumeEnable: true, ConsumeFromMinEnable: true, ConsumeBroadcastEnable: true,
		RetryQueueNums: 1, RetryMaxTimes: 16, WhichBrokerWhenConsumeSlowly: 1,
		NotifyConsumerIDsChangedEnable: true, ConsumeTimeoutMinute: 15,
	}
}

// TopicQueue names one queue of a topic.
type TopicQueue struct {
	Topic   string
	QueueID int32
}

// OffsetEntry is one committed consumer offset.
type OffsetEntry struct {
	Group   string            `json:"group"`
	Topic   string            `json:"topic"`
	QueueID int32             `json:"queueId"`
	Offset  store.QueueOffset `json:"offset"`
}

// ScheduleEntry is the delivery progress of one delay level (queue id = level - 1 in
// SCHEDULE_TOPIC_XXXX).
type ScheduleEntry struct {
	Level  int32             `json:"level"`
	Offset store.QueueOffset `json:"offset"`
}

// DataVersion counts topic and subscription-group config changes; the broker reports it
// to the nameserver (dataVersion.counter) so routes refresh when it moves.
type DataVersion int64

// Metadata is the replicated non-message state of a broker group. Apply mutates it
// (one writer, the raft FSM goroutine); readers on any goroutine use the accessors.
type Metadata struct {
	mu sync.RWMutex
	// Invariant: every map is non-nil; offsets[g] is non-nil for every key g.
	topics   map[string]TopicConfig
	groups   map[string]SubscriptionGroupConfig
	offsets  map[string]map[TopicQueue]store.QueueOffset
	schedule map[int32]store.QueueOffset
	// trans is the transaction bookkeeping (transaction_state.go); never nil.
	trans   *txState
	version DataVersion
	// segmentSize is the pinned CommitLog segment size (0 until pinned).
	segmentSize int64
	// acl is the replicated ACL document (acl.go); nil while never set. Stored
	// under mu, loaded without it.
	acl atomic.Pointer[aclState]
	// members is what each member announced about itself, by raft id
	// (members.go).
	members map[string]MemberInfo
	// resets is the last operator reset of each offset (resets.go); nil
	// until the first, and not part of the image.
	resets map[resetKey]ResetMark
}

func newMetadata() *Metadata {
	return &Metadata{
		topics:   map[string]TopicConfig{},
		groups:   map[string]SubscriptionGroupConfig{},
		offsets:  map[string]map[TopicQueue]store.QueueOffset{},
		schedule: map[int32]store.QueueOffset{},
		trans:    newTxState(),
		members:  map[string]MemberInfo{},
	}
}

// Topic returns the config of one topic.
func (m *Metadata) Topic(name string) (TopicConfig, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.topics[name]
	return t, ok
}

// Topics returns all topic configs sorted by name.
func (m *Metadata) Topics() []TopicConfig {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return sortedValues(m.topics)
}

// SubscriptionGroup returns the config of one group.
func (m *Metadata) SubscriptionGroup(name string) (SubscriptionGroupConfig, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g, ok := m.groups[name]
	return g, ok
}

// SubscriptionGroups returns all group configs sorted by name.
func (m *Metadata) SubscriptionGroups() []SubscriptionGroupConfig {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return sortedValues(m.groups)
}

// ConsumerOffset returns a group's committed offset on one queue.
func (m *Metadata) ConsumerOffset(group, topic string, queueID int32) (store.QueueOffset, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	o, ok := m.offsets[group][TopicQueue{topic, queueID}]
	return o, ok
}

// ConsumerOffsets returns a copy of every committed offset of a group.
func (m *Metadata) ConsumerOffsets(group string) map[TopicQueue]store.QueueOffset {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return maps.Clone(m.offsets[group])
}

// ScheduleProgress returns a copy of the delay-level progress.
func (m *Metadata) ScheduleProgress() map[int32]store.QueueOffset {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return maps.Clone(m.schedule)
}

// DataVersion returns the config change counter.
func (m *Metadata) DataVersion() DataVersion {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.version
}

// PinnedSegmentSize returns the group's pinned CommitLog segment size (0 if unpinned).
func (m *Metadata) PinnedSegmentSize() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.segmentSize
}

func sortedValues[V any](m map[string]V) []V {
	keys := slices.Sorted(maps.Keys(m))
	out := make([]V, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// The mutators below are called only from Apply/Restore (the FSM goroutine).

func (m *Metadata) upsertTopic(t TopicConfig) (DataVersion, error) {
	if err := t.validate(); err != nil {
		return m.DataVersion(), err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.topics[t.Name] = t
	m.version++
	return m.version, nil
}

func (m *Metadata) deleteTopic(name string) (DataVersion, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.topics[name]; !ok {
		return m.version, fmt.Errorf("delete topic=%s: %w", name, ErrTopicNotFound)
	}
	delete(m.topics, name)
	// RocketMQ's deleteTopic also cleans the topic's consumer offsets.
	for g, qs := range m.offsets {
		for tq := range qs {
			if tq.Topic == name {
				delete(qs, tq)
			}
		}
		if len(qs) == 0 {
			delete(m.offsets, g)
		}
	}
	m.version++
	return m.version, nil
}

func (m *Metadata) upsertGroup(g SubscriptionGroupConfig) (DataVersion, error) {
	if g.GroupName == "" {
		return m.DataVersion(), fmt.Errorf("%w: empty group name", ErrInvalidConfig)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.groups[g.GroupName] = g
	m.version++
	return m.version, nil
}

func (m *Metadata) deleteGroup(name string, cleanOffsets bool) (DataVersion, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.groups[name]; !ok {
		return m.version, fmt.Errorf("delete group=%s: %w", name, ErrGroupNotFound)
	}
	delete(m.groups, name)
	if cleanOffsets {
		delete(m.offsets, name)
	}
	m.version++
	return m.version, nil
}

func (m *Metadata) setOffsets(es []OffsetEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range es {
		qs := m.offsets[e.Group]
		if qs == nil {
			qs = map[TopicQueue]store.QueueOffset{}
			m.offsets[e.Group] = qs
		}
		qs[TopicQueue{e.Topic, e.QueueID}] = e.Offset
	}
}

func (m *Metadata) setSchedule(es []ScheduleEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range es {
		m.schedule[e.Level] = e.Offset
	}
}

// pin records the group's segment size the first time; a later pin must agree.
func (m *Metadata) pin(size int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.segmentSize != 0 && m.segmentSize != size {
		return fmt.Errorf("pin segment size %d, pinned %d: %w", size, m.segmentSize, ErrSegmentSizeConflict)
	}
	m.segmentSize = size
	return nil
}

// metadataImage is the serialized form of Metadata for checkpoints and snapshots. Every
// collection is a slice sorted by its key so that the same state always serializes to
// the same bytes (two replicas at one index write identical images).
type metadataImage struct {
	DataVersion DataVersion               `json:"dataVersion"`
	SegmentSize int64                     `json:"segmentSize"`
	Topics      []TopicConfig             `json:"topics"`
	Groups      []SubscriptionGroupConfig `json:"groups"`
	Offsets     []OffsetEntry             `json:"offsets"`
	Schedule    []ScheduleEntry           `json:"schedule"`
	// Transaction is absent while no transaction was ever decided or checked.
	Transaction *transactionImage `json:"transaction,omitempty"`
	// ACL is absent while no ACL document was ever set (and in images written
	// before ACLs were replicated, which load as "never set").
	ACL *aclImage `json:"acl,omitempty"`
	// Members is absent while no member announced itself (and in images
	// written before members were replicated, which load with none).
	Members []MemberInfo `json:"members,omitempty"`
}

func (m *Metadata) image() metadataImage {
	m.mu.RLock()
	defer m.mu.RUnlock()
	img := metadataImage{
		DataVersion: m.version,
		SegmentSize: m.segmentSize,
		Topics:      sortedValues(m.topics),
		Groups:      sortedValues(m.groups),
		Offsets:     []OffsetEntry{},
		Schedule:    []ScheduleEntry{},
		Transaction: m.trans.image(),
		ACL:         m.aclImageOf(),
		Members:     membersImage(m.members),
	}
	for g, qs := range m.offsets {
		for tq, o := range qs {
			img.Offsets = append(img.Offsets, OffsetEntry{Group: g, Topic: tq.Topic, QueueID: tq.QueueID, Offset: o})
		}
	}
	slices.SortFunc(img.Offsets, func(a, b OffsetEntry) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.QueueID, b.QueueID))
	})
	for l, o := range m.schedule {
		img.Schedule = append(img.Schedule, ScheduleEntry{Level: l, Offset: o})
	}
	slices.SortFunc(img.Schedule, func(a, b ScheduleEntry) int { return cmp.Compare(a.Level, b.Level) })
	return img
}

// marshal returns the deterministic JSON of the current state.
func (m *Metadata) marshal() ([]byte, error) {
	return json.Marshal(m.image())
}

// install replaces the whole state with an image (restore, start-up).
func (m *Metadata) install(img metadataImage) {
	n := newMetadata()
	for _, t := range img.Topics {
		n.topics[t.Name] = t
	}
	for _, g := range img.Groups {
		n.groups[g.GroupName] = g
	}
	n.setOffsets(img.Offsets)
	n.setSchedule(img.Schedule)
	for _, info := range img.Members {
		n.members[info.ID] = info
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.topics, m.groups, m.offsets, m.schedule, m.members = n.topics, n.groups, n.offsets, n.schedule, n.members
	m.trans = txStateFromImage(img.Transaction)
	m.acl.Store(aclStateOf(img.ACL))
	m.version, m.segmentSize = img.DataVersion, img.SegmentSize
}

func unmarshalImage(b []byte) (metadataImage, error) {
	var img metadataImage
	if err := json.Unmarshal(b, &img); err != nil {
		return img, fmt.Errorf("metadata image: %w", err)
	}
	return img, nil
}
