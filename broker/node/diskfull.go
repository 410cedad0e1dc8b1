package node

import (
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// diskFullHandler is the FSM's OnDiskFull. A node that cannot apply a
// committed entry until disk space returns acknowledges nothing as leader and,
// once raft's apply queue filled, would stop running its leader loop while its
// heartbeats kept the followers from electing anyone else. So a leader hands
// leadership to a follower (chaos scenario D9). load returns the raft node (nil
// before Open assigned it: the FSM goroutine starts first). The handler runs on
// the FSM goroutine and must not block, and raft.LeadershipTransfer waits for
// the transfer, so it runs in bg.
func diskFullHandler(load func() *raft.Raft, log hclog.Logger, bg *sync.WaitGroup) func(error) {
	return func(err error) {
		r := load()
		if r == nil || r.State() != raft.Leader {
			log.Error("disk full: applying waits for space", "error", err)
			return
		}
		log.Error("disk full: applying waits for space; transferring leadership", "error", err)
		bg.Add(1)
		go func() {
			defer bg.Done()
			if err := r.LeadershipTransfer().Error(); err != nil {
				log.Warn("leadership transfer after disk full failed", "error", err)
			}
		}()
	}
}
