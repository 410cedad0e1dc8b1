package node

import (
	"github.com/hashicorp/raft"
)

// commitCapTransport lowers the commit index the leader sends in every
// AppendEntries to what its own raft log holds on stable storage.
//
// With the leader's fsync overlapping replication (raftlog's leadersync.go)
// hashicorp/raft commits an entry once one follower has fsynced it, counting
// the leader's copy, which may still be only in the page cache. The leader's
// own FSM waits for its fsync before applying; this cap makes the followers
// wait for it too, so no node applies an entry that only one node holds on
// disk: if the leader then lost power it could come back without the entry
// and win an election with the other follower, and the follower that applied
// it would hold a message the group no longer has. Followers learn the
// higher index from the next AppendEntries: the next batch, or raft's idle
// commit heartbeat every raftCommitTimeout.
type commitCapTransport struct {
	raft.Transport
	durable func() uint64
}

var (
	_ raft.WithPreVote = commitCapTransport{}
	_ raft.WithClose   = commitCapTransport{}
)

func (t commitCapTransport) capCommit(args *raft.AppendEntriesRequest) {
	// raft builds a fresh request for every send and never reads this field
	// back, so lowering it in place is safe.
	if d := t.durable(); args.LeaderCommitIndex > d {
		args.LeaderCommitIndex = d
	}
}

func (t commitCapTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	t.capCommit(args)
	return t.Transport.AppendEntries(id, target, args, resp)
}

func (t commitCapTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	p, err := t.Transport.AppendEntriesPipeline(id, target)
	if err != nil {
		return nil, err
	}
	return commitCapPipeline{AppendPipeline: p, t: t}, nil
}

// RequestPreVote forwards raft.WithPreVote (raft turns pre-vote off without it).
func (t commitCapTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return drainedTransport{Transport: t.Transport}.RequestPreVote(id, target, args, resp)
}

// Close forwards raft.WithClose.
func (t commitCapTransport) Close() error { return drainedTransport{Transport: t.Transport}.Close() }

type commitCapPipeline struct {
	raft.AppendPipeline
	t commitCapTransport
}

func (p commitCapPipeline) AppendEntries(args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	p.t.capCommit(args)
	return p.AppendPipeline.AppendEntries(args, resp)
}
