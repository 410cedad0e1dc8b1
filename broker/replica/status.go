package replica

// Role is a node's raft role as the broker sees it.
type Role int

const (
	RoleFollower Role = iota
	RoleCandidate
	// RoleLeader is reported only after the leader's barrier (applied == commit),
	// when writes may be accepted.
	RoleLeader
	RoleShutdown
)

func (r Role) String() string {
	return [...]string{"FOLLOWER", "CANDIDATE", "LEADER", "SHUTDOWN"}[r]
}

// Status is what registration, forwarding and the admin CLI need to know.
type Status struct {
	Role         Role
	Term         uint64
	SelfID       string
	LeaderID     string
	AppliedIndex uint64
	CommitIndex  uint64
	LastIndex    uint64
}

// LeadershipChange is one leader change as a node observed it, with its
// cause (node.Cause's values: restart, election_timeout, leadership_transfer,
// lost_contact, step_down). The admin code ROCKETRAFT_LEADERSHIP_HISTORY
// serves them.
type LeadershipChange struct {
	// TimeMs is when the node observed it, unix milliseconds.
	TimeMs         int64  `json:"time"`
	Term           uint64 `json:"term"`
	Leader         string `json:"leader"`
	PreviousLeader string `json:"previousLeader"`
	Cause          string `json:"cause"`
	Detail         string `json:"detail"`
}
