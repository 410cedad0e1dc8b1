package broker

import (
	"context"
	"errors"
	"time"

	"github.com/rocketraft/rocketraft/broker/clientapi"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/fsm"
)

// Bounds on the leader's start-up work: each is one raft entry, and a new leader
// that cannot commit one in this time retries on its next role event.
const (
	systemTopicTimeout = 5 * time.Second
	// handOffTimeout bounds the leadership transfer before a clean shutdown;
	// raft's own transfer timeout is an election timeout.
	handOffTimeout = 3 * time.Second
	// preferredTransferTimeout bounds one attempt to move leadership to the
	// preferred leader.
	preferredTransferTimeout = 5 * time.Second
)

// templateQueues is TBW102's queue count (Java's default for the auto-create
// template).
const templateQueues = 8

// leaderServicesRoleChanged starts or stops every leader-only service.
func (b *Broker) leaderServicesRoleChanged(st replica.Status) {
	for _, s := range b.leaderServices {
		s.roleChanged(b.ctx, b.log, st)
	}
}

// watchRoles follows the replica's role events: it keeps the broker's status,
// starts and stops the leader-only services, and re-registers with every
// nameserver at once on every change of role or term.
func (b *Broker) watchRoles() {
	ch := b.replica.RoleChanges()
	defer func() {
		for _, s := range b.leaderServices {
			s.stop(b.log)
		}
	}()
	b.leaderServicesRoleChanged(b.Status())
	for {
		select {
		case <-b.ctx.Done():
			return
		case st, ok := <-ch:
			if !ok {
				return
			}
			b.mu.Lock()
			prev := b.status
			// Before the new status shows: no caller sees a follower that
			// still reports pending offsets as committed. And a node that
			// starts leading starts with none: anything there is left from
			// an earlier term, e.g. a commit whose handler checked
			// leadership just before this Drop and buffered it just after
			// (chaos N1 and P1 found the other way in, a failed flush's
			// restore, which offsets.Buffer now refuses itself).
			dropped := 0
			kept := prev.Role == replica.RoleLeader && st.Role == replica.RoleLeader && st.Term == prev.Term
			if !kept && (prev.Role == replica.RoleLeader || st.Role == replica.RoleLeader) {
				dropped = b.offsets.Drop()
			}
			b.status = st
			b.mu.Unlock()
			b.setCacheTail(st.Role)
			switch {
			case dropped > 0 && prev.Role == replica.RoleLeader:
				b.log.Warn("leadership lost before consumer offsets were replicated; their consumers commit them again",
					"offsets", dropped, "term", prev.Term)
			case dropped > 0:
				b.log.Warn("dropped consumer offsets left pending from an earlier term", "offsets", dropped, "term", st.Term)
			}
			if b.cfg.Metrics != nil {
				b.cfg.Metrics.ObserveRoleChange(prev.Term, st)
			}
			b.leaderServicesRoleChanged(st)
			if prev.Role != st.Role || prev.Term != st.Term {
				b.log.Info("role changed", "role", st.Role, "term", st.Term, "leader", st.LeaderID)
				if st.Role == replica.RoleLeader {
					b.clients.LeaderSince(st.Term, b.cfg.Monotonic())
					b.announceSelf()
					b.ensureTopicExists(clientapi.AutoCreateTopic, templateQueues, fsm.PermInherit, b.cfg.AutoCreateTopicEnable)
					b.ensureTopicExists(clientapi.ReplyTopic(b.cfg.ClusterName), 1, 0, b.cfg.ClusterName != "")
					b.ensureTopicExists(b.cfg.TraceTopic, 1, 0, b.cfg.TraceTopicEnable)
				}
				b.requestRegister()
			}
		}
	}
}

// setCacheTail bounds the store's cached CommitLog tail for role: consumers read
// only a leader's (decision 0022).
func (b *Broker) setCacheTail(role replica.Role) {
	if role == replica.RoleLeader {
		b.store.SetCachedTail(b.cfg.CacheTailLeader)
		return
	}
	b.store.SetCachedTail(b.cfg.CacheTailFollower)
}

// ensureTopicExists creates a topic a new leader needs when wanted and missing:
// TBW102 (the auto-create template), <cluster>_REPLY_TOPIC and, with
// traceTopicEnable, the trace topic (Java's TopicConfigManager creates them at
// start-up, so responders and trace producers have a route; the Go client sends
// no trace record while the trace topic has none).
func (b *Broker) ensureTopicExists(name string, queues, extraPerm int32, wanted bool) {
	if !wanted || route.ValidateTopic(name) != nil {
		return
	}
	if _, ok := b.replica.Topic(name); ok {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, systemTopicTimeout)
	defer cancel()
	t := fsm.NewTopic(name, queues, fsm.PermRead|fsm.PermWrite|extraPerm)
	if err := b.replica.UpsertTopic(ctx, t); err != nil && !errors.Is(err, context.Canceled) {
		b.log.Warn("create system topic failed", "topic", name, "error", err)
	}
}

// transferLeadership replicates the pending consumer offsets, then hands
// leadership to toID (or the most up-to-date follower): a planned move loses no
// commit, where an unplanned one drops them (watchRoles).
func (b *Broker) transferLeadership(ctx context.Context, toID string) error {
	if err := b.offsets.Flush(ctx); err != nil {
		b.log.Warn("consumer offset flush before leadership transfer failed", "error", err)
	}
	return b.replica.TransferLeadership(ctx, toID)
}

// handOffLeadership transfers leadership before a clean shutdown, so the group
// has a new leader in milliseconds instead of after an election timeout.
func (b *Broker) handOffLeadership() {
	if !b.isLeader() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), handOffTimeout)
	defer cancel()
	if err := b.transferLeadership(ctx, ""); err != nil {
		b.log.Warn("leadership hand-off before shutdown failed; the group will elect after the election timeout", "error", err)
		return
	}
	b.log.Info("leadership handed off before shutdown")
}
