package broker

import (
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/internal/proctest"
)

// TestCachedTailFollowsTheRole: only a leader's CommitLog is read by consumers,
// so the store's cached tail is the leader's bound while the node leads and the
// follower's otherwise, and moves with every change of role (decision 0022).
func TestCachedTailFollowsTheRole(t *testing.T) {
	const leaderTail, followerTail = 3 << 30, 64 << 20
	st := openBrokerStore(t)
	rep := fakereplica.New(st, replica.RoleFollower)
	addr := proctest.TestAddr(t)
	b, err := New(Config{ClusterName: "c", BrokerName: "broker-a", ListenAddr: addr, ClientAddr: addr,
		SelfID: "n0", Peers: []Peer{{ID: "n0", ClientAddr: addr}},
		CacheTailLeader: leaderTail, CacheTailFollower: followerTail}, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.CachedTail(); got != followerTail {
		t.Fatalf("a follower's cached tail at start = %d, want %d", got, followerTail)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	steps := []struct {
		role replica.Role
		want int64
	}{
		{replica.RoleCandidate, followerTail},
		{replica.RoleLeader, leaderTail},
		{replica.RoleFollower, followerTail},
		{replica.RoleLeader, leaderTail},
	}
	for i, s := range steps {
		rep.SetStatus(replica.Status{Role: s.role, Term: uint64(i + 2), SelfID: "n0", LeaderID: "n0"})
		waitWithin(t, 5*time.Second, s.role.String()+"'s cached tail", func() bool { return st.CachedTail() == s.want })
	}
}
