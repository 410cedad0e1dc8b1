package metrics

import (
	"testing"

	"github.com/rocketraft/rocketraft/broker/replica"
)

func TestReadiness(t *testing.T) {
	cases := []struct {
		st   replica.Status
		want bool
	}{
		{replica.Status{Role: replica.RoleFollower, LeaderID: "n0", AppliedIndex: 10, CommitIndex: 110}, true},
		{replica.Status{Role: replica.RoleFollower, LeaderID: "n0", AppliedIndex: 10, CommitIndex: 111}, false},
		{replica.Status{Role: replica.RoleCandidate, AppliedIndex: 10, CommitIndex: 10}, false},
		{replica.Status{Role: replica.RoleShutdown, LeaderID: "n0"}, false},
	}
	for _, c := range cases {
		if got, why := Readiness(c.st, 100); got != c.want {
			t.Errorf("%+v: ready=%v (%s)", c.st, got, why)
		}
	}
}
