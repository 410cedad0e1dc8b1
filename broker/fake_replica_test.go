package broker

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

// fakeReplica is a single-node Replica: it appends straight to a real store and
// keeps metadata in maps. Role and leader are set by the test.
type fakeReplica struct {
	mu        sync.Mutex
	transfers []string // targets of TransferLeadership calls
	st        *store.Store
	status    ReplicaStatus
	topics    map[string]TopicConfig
	groups    map[string]SubscriptionGroup
	offsets   map[offsetKey]store.QueueOffset
	version   int64
	changes   chan ReplicaStatus
	puts      int
	// schedule is the delay-level progress (DeliverScheduled, schedule_fake_test.go).
	schedule map[int32]store.QueueOffset
	// tx is the transaction state (ApplyTransactionOps, transaction_fake_test.go).
	tx fakeTxState
}

func newFakeReplica(st *store.Store, role Role) *fakeReplica {
	return &fakeReplica{
		st:      st,
		status:  ReplicaStatus{Role: role, Term: 3, SelfID: "n0", LeaderID: "n0"},
		topics:  map[string]TopicConfig{},
		groups:  map[string]SubscriptionGroup{},
		offsets: map[offsetKey]store.QueueOffset{},
		changes: make(chan ReplicaStatus, 4),
	}
}

func (f *fakeReplica) PutMessages(_ context.Context, recs [][]byte) ([]PutResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status.Role != RoleLeader {
		return nil, ErrNotLeader
	}
	f.puts++
	res, err := f.st.AppendBatch(recs, time.Now().UnixMilli())
	if err != nil {
		return nil, err
	}
	out := make([]PutResult, len(res))
	for i, r := range res {
		host, _ := store.DecodeMessage(recs[i], false)
		out[i] = PutResult{QueueID: r.QueueID, QueueOffset: r.QueueOffset, PhysicalOffset: r.PhysicalOffset, OffsetMsgID: store.OffsetMsgID(host.StoreHost, r.PhysicalOffset)}
	}
	return out, nil
}

func (f *fakeReplica) UpsertTopic(_ context.Context, t TopicConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.topics[t.Name] = t
	f.version++
	return nil
}

func (f *fakeReplica) DeleteTopic(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.topics, name)
	f.version++
	return nil
}

func (f *fakeReplica) UpsertSubscriptionGroup(_ context.Context, g SubscriptionGroup) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.groups[g.GroupName] = g
	f.version++
	return nil
}

func (f *fakeReplica) CommitOffsets(_ context.Context, offs []ConsumerOffset) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range offs {
		f.offsets[offsetKey{o.Group, o.Topic, o.QueueID}] = o.Offset
	}
	return nil
}

func (f *fakeReplica) Topic(name string) (TopicConfig, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.topics[name]
	return t, ok
}

func (f *fakeReplica) Topics() []TopicConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []TopicConfig
	for _, t := range f.topics {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (f *fakeReplica) SubscriptionGroups() []SubscriptionGroup {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []SubscriptionGroup
	for _, g := range f.groups {
		out = append(out, g)
	}
	return out
}

func (f *fakeReplica) ConsumerOffset(group, topic string, queueID int32) (store.QueueOffset, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.offsets[offsetKey{group, topic, queueID}]
	return o, ok
}

func (f *fakeReplica) DataVersion() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.version
}

func (f *fakeReplica) Status() ReplicaStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status
}

func (f *fakeReplica) setStatus(st ReplicaStatus) {
	f.mu.Lock()
	f.status = st
	f.mu.Unlock()
	f.changes <- st
}

func (f *fakeReplica) RoleChanges() <-chan ReplicaStatus { return f.changes }

func (f *fakeReplica) TransferLeadership(_ context.Context, to string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.transfers = append(f.transfers, to)
	return nil
}

func (f *fakeReplica) transferTargets() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.transfers...)
}
