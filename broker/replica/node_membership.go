package replica

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/fsm"
)

func (r *nodeReplica) Peers() ([]Peer, error) {
	servers, err := r.n.Configuration()
	if err != nil {
		return nil, mapNodeError(err)
	}
	out := make([]Peer, len(servers))
	for i, s := range servers {
		out[i] = Peer{ID: string(s.ID), Address: string(s.Address), Suffrage: s.Suffrage.String()}
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

// mapMembershipError sends an unknown server id to ErrUnknownMember (the
// operator named a member that is not there) and everything else through
// mapNodeError.
func mapMembershipError(err error) error {
	if errors.Is(err, node.ErrUnknownServer) {
		return fmt.Errorf("%w: %w", ErrUnknownMember, err)
	}
	return mapNodeError(err)
}

func (r *nodeReplica) RaftStats() map[string]string {
	st := r.n.Raft().Stats()
	ws := r.n.LogWriteStats()
	st["log_store_writes"] = strconv.FormatUint(ws.Writes, 10)
	st["log_store_write_ns"] = strconv.FormatInt(int64(ws.Total), 10)
	fs := r.n.LogFsyncStats()
	st["log_deferred_fsyncs"] = strconv.FormatUint(fs.Writes, 10)
	st["log_deferred_fsync_ns"] = strconv.FormatInt(int64(fs.Total), 10)
	ps := r.n.ProposerStats()
	st["group_commit_entries"] = strconv.FormatUint(ps.Entries, 10)
	st["group_commit_messages"] = strconv.FormatUint(ps.Messages, 10)
	return st
}

func (r *nodeReplica) Member(id string) (fsm.MemberInfo, bool) { return r.meta.Member(id) }

func (r *nodeReplica) AnnounceMember(ctx context.Context, info fsm.MemberInfo) error {
	return r.applyConfig(ctx, fsm.MemberUpsert{Member: info})
}
