package node

import "github.com/hashicorp/raft"

// onDiskFull is the FSM's OnDiskFull: this node cannot apply a committed entry
// until disk space returns, so as leader it would acknowledge nothing and, once
// raft's apply queue filled, stop running its leader loop while its heartbeats
// kept the followers from electing anyone else. It hands leadership to a
// follower instead (chaos scenario D9). Called from the FSM goroutine: it must
// not block, and raft.LeadershipTransfer waits for the transfer.
func (n *Node) onDiskFull(err error) {
	r := n.raftForFSM.Load() // n.raft is set after raft's FSM goroutine starts
	if r == nil || r.State() != raft.Leader {
		n.log.Error("disk full: applying waits for space", "error", err)
		return
	}
	n.log.Error("disk full: applying waits for space; transferring leadership", "error", err)
	n.bg.Add(1)
	go func() {
		defer n.bg.Done()
		if err := r.LeadershipTransfer().Error(); err != nil {
			n.log.Warn("leadership transfer after disk full failed", "error", err)
		}
	}()
}
