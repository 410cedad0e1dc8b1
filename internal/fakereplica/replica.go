package fakereplica

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

type offsetKey struct {
	group, topic string
	queueID      int32
}

// Replica is the fake. Fields set before use: Clock (default time.Now),
// PeerList, SnapshotErr, Stats.
type Replica struct {
	mu         sync.Mutex
	st         *store.Store
	status     replica.Status
	topics     map[string]fsm.TopicConfig
	groups     map[string]fsm.SubscriptionGroupConfig
	offsets    map[offsetKey]store.QueueOffset
	resets     map[offsetKey]fsm.ResetMark
	version    int64
	changes    chan replica.Status
	puts       int
	transfers  []string
	leadership []replica.LeadershipChange
	schedule   map[int32]store.QueueOffset
	tx         txState
	calls      []string
	// acl and aclMirrors: acl.go.
	acl        aclState
	aclMirrors []*Replica
	// members and announcements: members.go.
	members       map[string]fsm.MemberInfo
	announcements int

	// Clock is the leader's clock (Now); nil means time.Now.
	Clock func() time.Time
	// PeerList answers Peers.
	PeerList []replica.Peer
	// SnapshotErr answers Snapshot.
	SnapshotErr error
	// Stats answers RaftStats.
	Stats map[string]string
}

// New is a fake over st in role; term 3, self and leader "n0".
func New(st *store.Store, role replica.Role) *Replica {
	return &Replica{
		st:      st,
		status:  replica.Status{Role: role, Term: 3, SelfID: "n0", LeaderID: "n0"},
		topics:  map[string]fsm.TopicConfig{},
		groups:  map[string]fsm.SubscriptionGroupConfig{},
		offsets: map[offsetKey]store.QueueOffset{},
		changes: make(chan replica.Status, 4),
	}
}

// Store is the store the fake appends to.
func (f *Replica) Store() *store.Store { return f.st }

func (f *Replica) Now() time.Time {
	if f.Clock != nil {
		return f.Clock()
	}
	return time.Now()
}

func (f *Replica) leading() error {
	if f.status.Role != replica.RoleLeader {
		return replica.ErrNotLeader
	}
	return nil
}

// PutMessages appends the records as they are (no topic checks: tests write
// system topics they never created).
func (f *Replica) PutMessages(_ context.Context, recs [][]byte) ([]fsm.MessageResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.leading(); err != nil {
		return nil, err
	}
	f.puts++
	res, err := f.st.AppendBatch(recs, f.Now().UnixMilli())
	if err != nil {
		return nil, err
	}
	out := make([]fsm.MessageResult, len(res))
	for i, r := range res {
		host, _ := store.DecodeMessage(recs[i], false)
		out[i] = fsm.MessageResult{AppendResult: r,
			OffsetMsgID: store.OffsetMsgID(host.StoreHost, r.PhysicalOffset)}
	}
	return out, nil
}

func (f *Replica) UpsertTopic(_ context.Context, t fsm.TopicConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.topics[t.Name] = t
	f.version++
	return nil
}

func (f *Replica) DeleteTopic(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.topics, name)
	f.version++
	return nil
}

func (f *Replica) UpsertSubscriptionGroup(_ context.Context, g fsm.SubscriptionGroupConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.groups[g.GroupName] = g
	f.version++
	return nil
}

// DeleteSubscriptionGroup is the FSM's rule: a missing group is refused; with
// cleanOffsets the group's committed offsets go too.
func (f *Replica) DeleteSubscriptionGroup(_ context.Context, name string, cleanOffsets bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.groups[name]; !ok {
		return fmt.Errorf("%w: delete group=%s: %w", replica.ErrConfigRefused, name, fsm.ErrGroupNotFound)
	}
	delete(f.groups, name)
	if cleanOffsets {
		for k := range f.offsets {
			if k.group == name {
				delete(f.offsets, k)
			}
		}
	}
	f.version++
	return nil
}

func (f *Replica) CommitOffsets(_ context.Context, offs []fsm.OffsetEntry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range offs {
		f.offsets[offsetKey{o.Group, o.Topic, o.QueueID}] = o.Offset
	}
	return nil
}

// ResetOffsets sets the offsets and leaves reset marks, as fsm.OffsetReset.
func (f *Replica) ResetOffsets(_ context.Context, at time.Time, offs []fsm.OffsetEntry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.resets == nil {
		f.resets = map[offsetKey]fsm.ResetMark{}
	}
	for _, o := range offs {
		k := offsetKey{o.Group, o.Topic, o.QueueID}
		f.offsets[k] = o.Offset
		f.resets[k] = fsm.ResetMark{Offset: int64(o.Offset), At: at.UnixMilli()}
	}
	return nil
}

func (f *Replica) LastReset(group, topic string, queueID int32) (fsm.ResetMark, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.resets[offsetKey{group, topic, queueID}]
	return r, ok
}

func (f *Replica) Topic(name string) (fsm.TopicConfig, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.topics[name]
	return t, ok
}

func (f *Replica) Topics() []fsm.TopicConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]fsm.TopicConfig, 0, len(f.topics))
	for _, t := range f.topics {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (f *Replica) SubscriptionGroups() []fsm.SubscriptionGroupConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]fsm.SubscriptionGroupConfig, 0, len(f.groups))
	for _, g := range f.groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GroupName < out[j].GroupName })
	return out
}

func (f *Replica) ConsumerOffset(group, topic string, queueID int32) (store.QueueOffset, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.offsets[offsetKey{group, topic, queueID}]
	return o, ok
}

func (f *Replica) DataVersion() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.version
}

func (f *Replica) Status() replica.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status
}

// SetStatus changes the status and delivers it on RoleChanges.
func (f *Replica) SetStatus(st replica.Status) {
	f.mu.Lock()
	f.status = st
	f.mu.Unlock()
	f.changes <- st
}

// SetStatusQuietly changes the status without a role event (set-up before the
// broker starts).
func (f *Replica) SetStatusQuietly(st replica.Status) {
	f.mu.Lock()
	f.status = st
	f.mu.Unlock()
}

func (f *Replica) RoleChanges() <-chan replica.Status { return f.changes }

func (f *Replica) TransferLeadership(_ context.Context, to string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.transfers = append(f.transfers, to)
	return nil
}

// LeadershipHistory returns what SetLeadershipHistory set.
func (f *Replica) LeadershipHistory() []replica.LeadershipChange {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]replica.LeadershipChange(nil), f.leadership...)
}

// SetLeadershipHistory sets what LeadershipHistory answers.
func (f *Replica) SetLeadershipHistory(h []replica.LeadershipChange) {
	f.mu.Lock()
	f.leadership = append([]replica.LeadershipChange(nil), h...)
	f.mu.Unlock()
}

// TransferTargets lists the targets of TransferLeadership calls.
func (f *Replica) TransferTargets() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.transfers...)
}

// PutCount is the number of entries that stored messages.
func (f *Replica) PutCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.puts
}

// ScheduleProgress and DeliverScheduled: the advances are a compare-and-set on
// the progress map, as fsm.DeliverScheduled applies them.
func (f *Replica) ScheduleProgress() map[int32]store.QueueOffset {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.schedule)
}

func (f *Replica) DeliverScheduled(_ context.Context, recs [][]byte, advances []fsm.ScheduleAdvance) ([]error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.leading(); err != nil {
		return nil, err
	}
	if f.schedule == nil {
		f.schedule = map[int32]store.QueueOffset{}
	}
	for _, a := range advances {
		if f.schedule[a.Level] != a.From {
			return nil, fmt.Errorf("%w: level %d at %d, want %d", fsm.ErrScheduleConflict, a.Level, f.schedule[a.Level], a.From)
		}
	}
	f.puts++
	if len(recs) > 0 {
		if _, err := f.st.AppendBatch(recs, f.Now().UnixMilli()); err != nil {
			return nil, err
		}
	}
	for _, a := range advances {
		f.schedule[a.Level] = a.To
	}
	return make([]error, len(recs)), nil
}

// Membership: calls are recorded (Calls), answers come from the fields.

func (f *Replica) Peers() ([]replica.Peer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]replica.Peer(nil), f.PeerList...), nil
}

func (f *Replica) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	return nil
}

func (f *Replica) AddVoter(_ context.Context, id, addr string) error {
	return f.record("voter " + id + " " + addr)
}

func (f *Replica) AddNonvoter(_ context.Context, id, addr string) error {
	return f.record("nonvoter " + id + " " + addr)
}

func (f *Replica) RemoveServer(_ context.Context, id string) error { return f.record("remove " + id) }

// Calls lists the membership changes asked for, in order.
func (f *Replica) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *Replica) Snapshot() error { return f.SnapshotErr }

func (f *Replica) RaftStats() map[string]string {
	if f.Stats == nil {
		return map[string]string{}
	}
	return maps.Clone(f.Stats)
}

var _ replica.Replica = (*Replica)(nil)

// errNoStore is returned by writes of a fake built without a store.
var errNoStore = errors.New("fakereplica: no store")
