package node

import (
	"context"
	"fmt"

	"github.com/hashicorp/raft"
)

// Status is what the broker needs to register with the nameserver and to
// forward writes: role, term (the nameserver's stateVersion), the leader, and
// how far this node has got.
type Status struct {
	ID         raft.ServerID
	Role       Role
	Term       uint64
	LeaderID   raft.ServerID
	LeaderAddr raft.ServerAddress
	// AppliedIndex is the last raft index applied to this node's FSM. raft's
	// no-op and barrier entries never reach the FSM, so a caught-up node may
	// trail CommitIndex by those; compare AppliedIndex between nodes.
	AppliedIndex uint64
	// CommitIndex is the last raft index this node knows to be committed.
	CommitIndex uint64
	// LastIndex is the last index in this node's raft log (or snapshot).
	LastIndex uint64
}

// State reports the node's current status.
func (n *Node) State() Status {
	ev := n.roles.current()
	return Status{
		ID:           n.cfg.ID,
		Role:         ev.Role,
		Term:         ev.Term,
		LeaderID:     ev.LeaderID,
		LeaderAddr:   ev.LeaderAddr,
		AppliedIndex: n.fsm.AppliedIndex(),
		CommitIndex:  n.raft.CommitIndex(),
		LastIndex:    n.raft.LastIndex(),
	}
}

// Subscribe returns a channel that always holds the newest RoleEvent (it starts
// with the current one) and a cancel function. RoleLeader is published only
// after the leader barrier; the broker registers as brokerId 0 on it. The
// channel holds one event: a subscriber that falls behind sees only the latest.
func (n *Node) Subscribe() (<-chan RoleEvent, func()) { return n.roles.subscribe() }

// LeadershipHistory returns the leader changes this node observed since it
// started (the newest LeadershipRing), oldest first, each with its cause.
func (n *Node) LeadershipHistory() []LeadershipObservation { return n.leadership.history() }

// TransferLeadership hands leadership to toID, or to the most up-to-date
// follower when toID is empty. It must be called on the leader.
func (n *Node) TransferLeadership(ctx context.Context, toID raft.ServerID) error {
	n.leadership.noteTransfer(n.cfg.Now(), 0)
	var f raft.Future
	if toID == "" {
		f = n.raft.LeadershipTransfer()
	} else {
		addr, err := n.serverAddress(toID)
		if err != nil {
			return err
		}
		f = n.raft.LeadershipTransferToServer(toID, addr)
	}
	if err := n.waitFuture(ctx, f); err != nil {
		return fmt.Errorf("node id=%s transfer leadership to=%q: %w", n.cfg.ID, toID, mapMembershipError(err))
	}
	return nil
}

// AddVoter adds (or re-addresses) a voting member. On a leader only.
func (n *Node) AddVoter(ctx context.Context, id raft.ServerID, addr raft.ServerAddress) error {
	return n.membership(ctx, "add voter", id, n.raft.AddVoter(id, addr, 0, timeoutOf(ctx)))
}

// AddNonvoter adds a member that receives the log but does not vote (a
// learner); Promote makes it a voter once it has caught up.
func (n *Node) AddNonvoter(ctx context.Context, id raft.ServerID, addr raft.ServerAddress) error {
	return n.membership(ctx, "add nonvoter", id, n.raft.AddNonvoter(id, addr, 0, timeoutOf(ctx)))
}

// Promote turns an existing non-voter into a voter.
func (n *Node) Promote(ctx context.Context, id raft.ServerID) error {
	addr, err := n.serverAddress(id)
	if err != nil {
		return err
	}
	return n.membership(ctx, "promote", id, n.raft.AddVoter(id, addr, 0, timeoutOf(ctx)))
}

// RemoveServer removes a member (voter or not).
func (n *Node) RemoveServer(ctx context.Context, id raft.ServerID) error {
	return n.membership(ctx, "remove", id, n.raft.RemoveServer(id, 0, timeoutOf(ctx)))
}

// Configuration returns the group's current membership.
func (n *Node) Configuration() ([]raft.Server, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("node id=%s configuration: %w", n.cfg.ID, err)
	}
	return f.Configuration().Servers, nil
}

func (n *Node) membership(ctx context.Context, op string, id raft.ServerID, f raft.IndexFuture) error {
	if err := n.waitFuture(ctx, f); err != nil {
		return fmt.Errorf("node id=%s %s server=%s: %w", n.cfg.ID, op, id, mapMembershipError(err))
	}
	return nil
}

func (n *Node) serverAddress(id raft.ServerID) (raft.ServerAddress, error) {
	servers, err := n.Configuration()
	if err != nil {
		return "", err
	}
	for _, s := range servers {
		if s.ID == id {
			return s.Address, nil
		}
	}
	return "", fmt.Errorf("node id=%s: server %s is not a member: %w", n.cfg.ID, id, ErrUnknownServer)
}

// mapMembershipError adds ErrNotLeader to raft's not-leader answer so callers
// match one sentinel.
func mapMembershipError(err error) error {
	if errIsNotLeader(err) {
		return fmt.Errorf("%w: %w", ErrNotLeader, err)
	}
	return err
}
