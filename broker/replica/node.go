package replica

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

// NodeOptions are the optional hooks of NewNode.
type NodeOptions struct {
	// ObserveApply, when set, is told how long each successful PutMessages took
	// from proposal to being applied here (a metric).
	ObserveApply func(time.Duration)
}

// nodeReplica implements Replica over a raft node and its FSM.
type nodeReplica struct {
	n    *node.Node
	meta *fsm.Metadata
	opts NodeOptions

	once    sync.Once
	changes chan Status
}

// NewNode adapts a node to the Replica the broker uses.
func NewNode(n *node.Node, opts NodeOptions) Replica {
	return &nodeReplica{n: n, meta: n.FSM().Metadata(), opts: opts, changes: make(chan Status, 1)}
}

// mapNodeError turns node errors into this package's (broker/route maps those
// to codes).
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

func (r *nodeReplica) Now() time.Time { return r.n.Now() }

func (r *nodeReplica) PutMessages(ctx context.Context, recs [][]byte) ([]fsm.MessageResult, error) {
	start := time.Now()
	res, err := r.n.Propose(ctx, recs)
	return r.putOutcome(start, res, err)
}

// PutMessagesAsync implements AsyncMessages.
func (r *nodeReplica) PutMessagesAsync(ctx context.Context, recs [][]byte, done func([]fsm.MessageResult, error)) {
	start := time.Now()
	r.n.ProposeAsync(ctx, recs, func(res []fsm.MessageResult, err error) {
		done(r.putOutcome(start, res, err))
	})
}

// putOutcome is PutMessages' answer for the node's outcome of a proposal
// made at start.
func (r *nodeReplica) putOutcome(start time.Time, res []fsm.MessageResult, err error) ([]fsm.MessageResult, error) {
	if err != nil {
		return nil, mapNodeError(err)
	}
	for _, m := range res {
		if m.Err != nil {
			return nil, m.Err
		}
	}
	if r.opts.ObserveApply != nil {
		r.opts.ObserveApply(time.Since(start))
	}
	return res, nil
}

func (r *nodeReplica) applyConfig(ctx context.Context, cmd fsm.Command) error {
	resp, err := r.n.Apply(ctx, cmd)
	if err != nil {
		return mapNodeError(err)
	}
	if cr, ok := resp.(*fsm.ConfigResult); ok && cr.Err != nil {
		return fmt.Errorf("%w: %w", ErrConfigRefused, cr.Err)
	}
	return nil
}

func (r *nodeReplica) UpsertTopic(ctx context.Context, t fsm.TopicConfig) error {
	return r.applyConfig(ctx, fsm.TopicUpsert{Topic: t})
}

func (r *nodeReplica) DeleteTopic(ctx context.Context, name string) error {
	return r.applyConfig(ctx, fsm.TopicDelete{Topic: name})
}

func (r *nodeReplica) UpsertSubscriptionGroup(ctx context.Context, g fsm.SubscriptionGroupConfig) error {
	return r.applyConfig(ctx, fsm.SubscriptionGroupUpsert{Group: g})
}

func (r *nodeReplica) DeleteSubscriptionGroup(ctx context.Context, name string, cleanOffsets bool) error {
	return r.applyConfig(ctx, fsm.SubscriptionGroupDelete{Group: name, CleanOffsets: cleanOffsets})
}

func (r *nodeReplica) CommitOffsets(ctx context.Context, offsets []fsm.OffsetEntry) error {
	return r.applyConfig(ctx, fsm.ConsumerOffsets{Offsets: offsets})
}

func (r *nodeReplica) ResetOffsets(ctx context.Context, at time.Time, offsets []fsm.OffsetEntry) error {
	return r.applyConfig(ctx, fsm.OffsetReset{At: at.UnixMilli(), Offsets: offsets})
}

func (r *nodeReplica) LastReset(group, topic string, queueID int32) (fsm.ResetMark, bool) {
	return r.meta.LastReset(group, topic, queueID)
}

func (r *nodeReplica) Topic(name string) (fsm.TopicConfig, bool) { return r.meta.Topic(name) }

func (r *nodeReplica) Topics() []fsm.TopicConfig { return r.meta.Topics() }

func (r *nodeReplica) SubscriptionGroups() []fsm.SubscriptionGroupConfig {
	return r.meta.SubscriptionGroups()
}

func (r *nodeReplica) ConsumerOffset(group, topic string, queueID int32) (store.QueueOffset, bool) {
	return r.meta.ConsumerOffset(group, topic, queueID)
}

func (r *nodeReplica) DataVersion() int64 { return int64(r.meta.DataVersion()) }

func (r *nodeReplica) ACLDocument() ([]byte, uint64, bool) { return r.meta.ACLDocument() }

// SetACL proposes doc at the version after the one applied here. On the leader
// that is the newest committed one (its barrier ran), so a conflict means a
// concurrent change; the FSM refuses it rather than losing one of the two.
func (r *nodeReplica) SetACL(ctx context.Context, doc []byte) error {
	if len(doc) > fsm.MaxACLDocument {
		return fmt.Errorf("%w: %w: %d bytes, limit %d", ErrConfigRefused, fsm.ErrACLTooLarge, len(doc), fsm.MaxACLDocument)
	}
	_, v, _ := r.meta.ACLDocument()
	return r.applyConfig(ctx, fsm.ACLSet{Version: v + 1, Document: doc})
}

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

func (r *nodeReplica) Status() Status {
	st := r.n.State()
	return Status{
		Role: roleOf(st.Role), Term: st.Term, SelfID: string(st.ID), LeaderID: string(st.LeaderID),
		AppliedIndex: st.AppliedIndex, CommitIndex: st.CommitIndex, LastIndex: st.LastIndex,
	}
}

// RoleChanges relays the node's role events as Status.
func (r *nodeReplica) RoleChanges() <-chan Status {
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

func (r *nodeReplica) LeadershipHistory() []LeadershipChange {
	h := r.n.LeadershipHistory()
	out := make([]LeadershipChange, len(h))
	for i, o := range h {
		out[i] = LeadershipChange{TimeMs: o.Time.UnixMilli(), Term: o.Term, Leader: string(o.Leader),
			PreviousLeader: string(o.PreviousLeader), Cause: string(o.Cause), Detail: o.Detail}
	}
	return out
}

func (r *nodeReplica) TransferLeadership(ctx context.Context, toID string) error {
	return mapNodeError(r.n.TransferLeadership(ctx, raft.ServerID(toID)))
}
