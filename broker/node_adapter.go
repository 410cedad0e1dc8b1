package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

// nodeReplica implements Replica over a raft node and its FSM.
type nodeReplica struct {
	n    *node.Node
	meta *fsm.Metadata

	once    sync.Once
	changes chan ReplicaStatus
}

// NewNodeReplica adapts a node to the Replica the broker uses.
func NewNodeReplica(n *node.Node) Replica {
	return &nodeReplica{n: n, meta: n.FSM().Metadata(), changes: make(chan ReplicaStatus, 1)}
}

// mapNodeError turns node errors into the broker's (codes.go maps those to codes).
func mapNodeError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, node.ErrNotLeader):
		return fmt.Errorf("%w: %w", ErrNotLeader, err)
	case errors.Is(err, node.ErrBusy):
		return fmt.Errorf("%w: %w", ErrBusy, err)
	case errors.Is(err, node.ErrClosed):
		return fmt.Errorf("%w: %w", ErrNoLeader, err)
	default:
		return fmt.Errorf("%w: %w", ErrUnknownOutcome, err)
	}
}

func (r *nodeReplica) PutMessages(ctx context.Context, recs [][]byte) ([]PutResult, error) {
	res, err := r.n.Propose(ctx, recs)
	if err != nil {
		return nil, mapNodeError(err)
	}
	out := make([]PutResult, len(res))
	for i, m := range res {
		if m.Err != nil {
			return nil, m.Err
		}
		out[i] = PutResult{QueueID: m.QueueID, QueueOffset: m.QueueOffset, PhysicalOffset: m.PhysicalOffset, OffsetMsgID: m.OffsetMsgID}
	}
	return out, nil
}

func (r *nodeReplica) applyConfig(ctx context.Context, cmd fsm.Command) error {
	resp, err := r.n.Apply(ctx, cmd)
	if err != nil {
		return mapNodeError(err)
	}
	if cr, ok := resp.(*fsm.ConfigResult); ok && cr.Err != nil {
		return fmt.Errorf("%w: %w", ErrBadHeader, cr.Err)
	}
	return nil
}

func (r *nodeReplica) UpsertTopic(ctx context.Context, t TopicConfig) error {
	return r.applyConfig(ctx, fsm.TopicUpsert{Topic: fsm.TopicConfig{
		Name: t.Name, ReadQueueNums: t.ReadQueueNums, WriteQueueNums: t.WriteQueueNums, Perm: t.Perm,
		TopicFilterType: "SINGLE_TAG", TopicSysFlag: t.TopicSysFlag, Order: t.Order,
	}})
}

func (r *nodeReplica) DeleteTopic(ctx context.Context, name string) error {
	return r.applyConfig(ctx, fsm.TopicDelete{Topic: name})
}

func (r *nodeReplica) UpsertSubscriptionGroup(ctx context.Context, g SubscriptionGroup) error {
	c := fsm.DefaultSubscriptionGroup(g.GroupName)
	c.ConsumeEnable, c.ConsumeBroadcastEnable = g.ConsumeEnable, g.ConsumeBroadcastEnable
	c.RetryQueueNums, c.RetryMaxTimes = g.RetryQueueNums, g.RetryMaxTimes
	return r.applyConfig(ctx, fsm.SubscriptionGroupUpsert{Group: c})
}

func (r *nodeReplica) CommitOffsets(ctx context.Context, offsets []ConsumerOffset) error {
	es := make([]fsm.OffsetEntry, len(offsets))
	for i, o := range offsets {
		es[i] = fsm.OffsetEntry{Group: o.Group, Topic: o.Topic, QueueID: o.QueueID, Offset: o.Offset}
	}
	return r.applyConfig(ctx, fsm.ConsumerOffsets{Offsets: es})
}

func fromFSMTopic(t fsm.TopicConfig) TopicConfig {
	return TopicConfig{Name: t.Name, ReadQueueNums: t.ReadQueueNums, WriteQueueNums: t.WriteQueueNums, Perm: t.Perm, TopicSysFlag: t.TopicSysFlag, Order: t.Order}
}

func (r *nodeReplica) Topic(name string) (TopicConfig, bool) {
	t, ok := r.meta.Topic(name)
	return fromFSMTopic(t), ok
}

func (r *nodeReplica) Topics() []TopicConfig {
	ts := r.meta.Topics()
	out := make([]TopicConfig, len(ts))
	for i, t := range ts {
		out[i] = fromFSMTopic(t)
	}
	return out
}

func (r *nodeReplica) SubscriptionGroups() []SubscriptionGroup {
	gs := r.meta.SubscriptionGroups()
	out := make([]SubscriptionGroup, len(gs))
	for i, g := range gs {
		out[i] = SubscriptionGroup{GroupName: g.GroupName, ConsumeEnable: g.ConsumeEnable, ConsumeBroadcastEnable: g.ConsumeBroadcastEnable, RetryQueueNums: g.RetryQueueNums, RetryMaxTimes: g.RetryMaxTimes}
	}
	return out
}

func (r *nodeReplica) ConsumerOffset(group, topic string, queueID int32) (store.QueueOffset, bool) {
	return r.meta.ConsumerOffset(group, topic, queueID)
}

func (r *nodeReplica) DataVersion() int64 { return int64(r.meta.DataVersion()) }

func roleOf(r node.Role) Role {
	switch r {
	case node.RoleLeader:
		return RoleLeader
	case node.RoleCandidate:
		return RoleCandidate
	case node.RoleShutdown:
		return RoleShutdown
	default: // follower, and a leader still behind its barrier
		return RoleFollower
	}
}

func (r *nodeReplica) Status() ReplicaStatus {
	st := r.n.State()
	return ReplicaStatus{
		Role: roleOf(st.Role), Term: st.Term, SelfID: string(st.ID), LeaderID: string(st.LeaderID),
		AppliedIndex: st.AppliedIndex, CommitIndex: st.CommitIndex, LastIndex: st.LastIndex,
	}
}

// RoleChanges relays the node's role events as ReplicaStatus.
func (r *nodeReplica) RoleChanges() <-chan ReplicaStatus {
	r.once.Do(func() {
		events, cancel := r.n.Subscribe()
		go func() {
			defer cancel()
			defer close(r.changes)
			for ev := range events {
				st := r.Status()
				st.Role, st.Term, st.LeaderID = roleOf(ev.Role), ev.Term, string(ev.LeaderID)
				select {
				case <-r.changes: // keep only the newest
				default:
				}
				r.changes <- st
				if ev.Role == node.RoleShutdown {
					return
				}
			}
		}()
	})
	return r.changes
}

func (r *nodeReplica) TransferLeadership(ctx context.Context, toID string) error {
	return mapNodeError(r.n.TransferLeadership(ctx, raft.ServerID(toID)))
}

// The methods below implement RaftAdmin (admin_raft.go) over the node.

func (r *nodeReplica) Peers() ([]RaftPeer, error) {
	servers, err := r.n.Configuration()
	if err != nil {
		return nil, mapNodeError(err)
	}
	out := make([]RaftPeer, len(servers))
	for i, s := range servers {
		out[i] = RaftPeer{ID: string(s.ID), Address: string(s.Address), Suffrage: s.Suffrage.String()}
	}
	return out, nil
}

func (r *nodeReplica) AddVoter(ctx context.Context, id, addr string) error {
	return mapMembershipError(r.n.AddVoter(ctx, raft.ServerID(id), raft.ServerAddress(addr)))
}

func (r *nodeReplica) AddNonvoter(ctx context.Context, id, addr string) error {
	return mapMembershipError(r.n.AddNonvoter(ctx, raft.ServerID(id), raft.ServerAddress(addr)))
}

func (r *nodeReplica) RemoveServer(ctx context.Context, id string) error {
	return mapMembershipError(r.n.RemoveServer(ctx, raft.ServerID(id)))
}

// Snapshot reports raft's "nothing new to snapshot" as ErrNothingToSnapshot: the
// operator asked for a state that already holds.
func (r *nodeReplica) Snapshot() error {
	err := r.n.Snapshot()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNothingNewToSnapshot):
		return fmt.Errorf("%w: %w", ErrNothingToSnapshot, err)
	default:
		return fmt.Errorf("%w: %w", ErrUnknownOutcome, err)
	}
}

// mapMembershipError sends an unknown server id to ErrBadHeader (the operator
// named a member that is not there) and everything else through mapNodeError.
func mapMembershipError(err error) error {
	if errors.Is(err, node.ErrUnknownServer) {
		return fmt.Errorf("%w: %w", ErrBadHeader, err)
	}
	return mapNodeError(err)
}

func (r *nodeReplica) RaftStats() map[string]string { return r.n.Raft().Stats() }
