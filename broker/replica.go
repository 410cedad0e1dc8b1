package broker

import (
	"context"

	"github.com/rocketraft/rocketraft/store"
)

// Perm bits of a topic (PermName.java).
const (
	PermInherit = 1
	PermWrite   = 2
	PermRead    = 4
)

// TopicConfig is a topic as the broker serves it; it lives in the replicated
// metadata.
type TopicConfig struct {
	Name           string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32
	TopicSysFlag   int32
	Order          bool
}

// SubscriptionGroup is a consumer group's replicated config.
type SubscriptionGroup struct {
	GroupName              string
	ConsumeEnable          bool
	ConsumeBroadcastEnable bool
	RetryQueueNums         int32
	RetryMaxTimes          int32
}

// ConsumerOffset is one committed (group, topic, queue) → next offset.
type ConsumerOffset struct {
	Group   string
	Topic   string
	QueueID int32
	Offset  store.QueueOffset
}

// PutResult is the outcome of one replicated message.
type PutResult struct {
	QueueID        int32
	QueueOffset    store.QueueOffset
	PhysicalOffset store.PhysicalOffset
	OffsetMsgID    string
}

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

// ReplicaStatus is what registration, forwarding and the admin CLI need to know.
type ReplicaStatus struct {
	Role         Role
	Term         uint64
	SelfID       string
	LeaderID     string
	AppliedIndex uint64
	CommitIndex  uint64
	LastIndex    uint64
}

// Replica is what the broker needs from its raft node and replicated state
// machine. It is owned here (the consumer side); node_adapter.go implements it
// over broker/node and fsm.
type Replica interface {
	// PutMessages replicates encoded records (store.AppendMessage) and returns one
	// result per record, or ErrNotLeader / ErrBusy / ErrUnknownOutcome.
	PutMessages(ctx context.Context, recs [][]byte) ([]PutResult, error)
	UpsertTopic(ctx context.Context, t TopicConfig) error
	DeleteTopic(ctx context.Context, name string) error
	UpsertSubscriptionGroup(ctx context.Context, g SubscriptionGroup) error
	CommitOffsets(ctx context.Context, offsets []ConsumerOffset) error

	Topic(name string) (TopicConfig, bool)
	Topics() []TopicConfig
	SubscriptionGroups() []SubscriptionGroup
	ConsumerOffset(group, topic string, queueID int32) (store.QueueOffset, bool)
	// DataVersion increases with every topic or group change.
	DataVersion() int64

	Status() ReplicaStatus
	// RoleChanges delivers the status after every role change (leader only after
	// its barrier). The channel is closed on shutdown.
	RoleChanges() <-chan ReplicaStatus
	TransferLeadership(ctx context.Context, toID string) error

	// ScheduleProgress returns each delay level's delivered offset (schedule.go).
	ScheduleProgress() map[int32]store.QueueOffset
	// DeliverScheduled replicates re-puts of due delayed messages together with the
	// progress advances, as one entry applied only if every advance's From still
	// matches (else ErrScheduleConflict). dropped[i] is set for a record the FSM
	// refused alone (its real topic or queue is gone).
	DeliverScheduled(ctx context.Context, recs [][]byte, advances []ScheduleAdvance) (dropped []error, err error)

	// TransactionState reads the replicated transaction decisions (transaction.go).
	TransactionState() TransactionState
	// ApplyTransactionOps replicates transaction ops and the records they store as
	// one entry; an op on a half message already decided stores nothing
	// (result Decided).
	ApplyTransactionOps(ctx context.Context, ops []TransactionOp) ([]TransactionOpResult, error)
}
