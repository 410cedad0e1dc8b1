package broker

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/replica"
)

// leaderService is a service that runs only while this node leads (after its
// barrier): the schedule service, the transaction check-back. Everything they
// change goes through raft, so a new leader's instance resumes from replicated
// state. Owned by the watchRoles goroutine.
type leaderService struct {
	name string
	// newRun builds the service for a new term and returns its loop; the loop
	// returns when ctx ends.
	newRun func(st replica.Status) func(ctx context.Context)

	cancel context.CancelFunc
	done   chan struct{}
}

// roleChanged starts the service when st is LEADER and stops it on any other role.
func (s *leaderService) roleChanged(parent context.Context, log hclog.Logger, st replica.Status) {
	if st.Role != replica.RoleLeader {
		s.stop(log)
		return
	}
	if s.done != nil {
		return
	}
	run := s.newRun(st)
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	s.cancel, s.done = cancel, done
	go func() {
		defer close(done)
		run(ctx)
	}()
	log.Info(s.name+" started", "term", st.Term)
}

// stop ends the service and waits for its last proposal to return.
func (s *leaderService) stop(log hclog.Logger) {
	if s.done == nil {
		return
	}
	s.cancel()
	<-s.done
	s.cancel, s.done = nil, nil
	log.Info(s.name + " stopped")
}
