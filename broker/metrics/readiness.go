package metrics

import (
	"fmt"

	"github.com/rocketraft/rocketraft/broker/replica"
)

// DefaultReadyMaxLag is how far (raft entries) this node's applied index may
// trail its commit index for /readyz to say ready. One group-commit entry holds
// up to a batch of messages, so 100 entries is well under a second of catch-up
// at the rates docs/performance.md measures.
const DefaultReadyMaxLag = 100

// Readiness decides /readyz from a status: the group has a leader and this node
// has applied all but maxLag of what it knows committed. It is pure so the rule
// is tested without a cluster.
func Readiness(st replica.Status, maxLag uint64) (bool, string) {
	switch {
	case st.Role == replica.RoleShutdown:
		return false, "node is shut down"
	case st.LeaderID == "":
		return false, "group has no leader"
	case st.CommitIndex > st.AppliedIndex+maxLag:
		return false, fmt.Sprintf("applied index %d trails commit index %d by more than %d",
			st.AppliedIndex, st.CommitIndex, maxLag)
	}
	return true, fmt.Sprintf("ready: role=%s leader=%s applied=%d commit=%d", st.Role, st.LeaderID, st.AppliedIndex, st.CommitIndex)
}
