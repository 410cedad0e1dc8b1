package replica

import (
	"context"
	"time"

	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

// Messages replicates encoded records (store.AppendMessage).
type Messages interface {
	// PutMessages returns one result per record once a quorum has it and this
	// node applied it, or ErrNotLeader / ErrBusy / ErrNoLeader / ErrUnknownOutcome.
	// A record the FSM refused alone fails the call with the FSM's error.
	PutMessages(ctx context.Context, recs [][]byte) ([]fsm.MessageResult, error)
	// Now is the leader's clock: the one that stamps every replicated entry.
	Now() time.Time
}

// AsyncMessages is implemented by a replica that can answer PutMessages
// through a callback, so that no goroutine waits for each send's entry.
type AsyncMessages interface {
	// PutMessagesAsync is PutMessages answered through done, exactly once.
	// done may run before PutMessagesAsync returns (a refusal), else on the
	// replica's completion goroutine, where it must not block: the answers
	// to later entries wait behind it.
	PutMessagesAsync(ctx context.Context, recs [][]byte, done func([]fsm.MessageResult, error))
}

// Metadata reads and changes the replicated topic, group and offset tables.
type Metadata interface {
	UpsertTopic(ctx context.Context, t fsm.TopicConfig) error
	DeleteTopic(ctx context.Context, name string) error
	UpsertSubscriptionGroup(ctx context.Context, g fsm.SubscriptionGroupConfig) error
	// DeleteSubscriptionGroup removes a group's config and, with cleanOffsets,
	// its committed offsets; a missing group fails with ErrConfigRefused
	// wrapping fsm.ErrGroupNotFound.
	DeleteSubscriptionGroup(ctx context.Context, name string, cleanOffsets bool) error
	CommitOffsets(ctx context.Context, offsets []fsm.OffsetEntry) error
	// ResetOffsets sets offsets as an operator's reset made at at, which every
	// node then reports through LastReset (fsm.OffsetReset).
	ResetOffsets(ctx context.Context, at time.Time, offsets []fsm.OffsetEntry) error

	Topic(name string) (fsm.TopicConfig, bool)
	Topics() []fsm.TopicConfig
	SubscriptionGroups() []fsm.SubscriptionGroupConfig
	ConsumerOffset(group, topic string, queueID int32) (store.QueueOffset, bool)
	// LastReset is the last reset of the offset this node applied.
	LastReset(group, topic string, queueID int32) (fsm.ResetMark, bool)
	// DataVersion increases with every topic or group change.
	DataVersion() int64
}

// ACLs is the replicated ACL document (RocketMQ's plain_acl.yml, parsed by
// broker/auth; the FSM only stores it).
type ACLs interface {
	// ACLDocument returns the document in force on this node and its version;
	// ok is false while none was ever set. The bytes are shared: do not modify.
	// It takes no lock, so the authorisation stage may call it per request.
	ACLDocument() (doc []byte, version uint64, ok bool)
	// SetACL replicates doc as the next version. It fails with ErrConfigRefused
	// wrapping fsm.ErrACLTooLarge or fsm.ErrACLVersionConflict (another change
	// applied in between: read again and retry), or with the write outcomes of
	// Messages.PutMessages.
	SetACL(ctx context.Context, doc []byte) error
}

// Roles reports and moves leadership.
type Roles interface {
	Status() Status
	// RoleChanges delivers the status after every role change (leader only after
	// its barrier). The channel holds only the newest status and is closed on
	// shutdown.
	RoleChanges() <-chan Status
	// TransferLeadership hands leadership to toID, or to the most up-to-date
	// follower when toID is empty.
	TransferLeadership(ctx context.Context, toID string) error
	// LeadershipHistory is this node's last leader changes, oldest first.
	LeadershipHistory() []LeadershipChange
}

// Schedule is the replicated delay-level progress (broker/schedule).
type Schedule interface {
	// ScheduleProgress returns each delay level's delivered offset.
	ScheduleProgress() map[int32]store.QueueOffset
	// DeliverScheduled replicates re-puts of due delayed messages together with
	// the progress advances, as one entry applied only if every advance's From
	// still matches (else fsm.ErrScheduleConflict). dropped[i] is set for a
	// record the FSM refused alone (its real topic or queue is gone).
	DeliverScheduled(ctx context.Context, recs [][]byte, advances []fsm.ScheduleAdvance) (dropped []error, err error)
}

// Transactions is the replicated transaction state (broker/transaction).
type Transactions interface {
	TransactionState() TransactionState
	// ApplyTransactionOps replicates transaction ops and the records they store
	// as one entry; an op on a half message already decided stores nothing
	// (result Decided).
	ApplyTransactionOps(ctx context.Context, ops []TransactionOp) ([]TransactionOpResult, error)
}

// Membership is raft administration: members, snapshots and raft's counters.
type Membership interface {
	Peers() ([]Peer, error)
	AddVoter(ctx context.Context, id, addr string) error
	AddNonvoter(ctx context.Context, id, addr string) error
	RemoveServer(ctx context.Context, id string) error
	// Snapshot snapshots this node (not the group) and compacts its log;
	// ErrNothingToSnapshot when nothing was applied since the last one.
	Snapshot() error
	// RaftStats is hashicorp/raft's Stats() map (last_contact, num_peers, …)
	// plus log_store_writes and log_store_write_ns: the raft log's fsynced
	// writes since the node opened and their total time (on a leader the write
	// only: its fsync is deferred); log_deferred_fsyncs and
	// log_deferred_fsync_ns: the leader's deferred fsync rounds and their
	// total time; and
	// group_commit_entries and group_commit_messages: the send entries this
	// node proposed as leader and the messages in them.
	RaftStats() map[string]string
}

// Members is the replicated directory of what each member said about itself
// (fsm.MemberInfo): its client address and dLegerGroup. Followers relay writes
// to the leader's client address found here (docs/decisions/0008).
type Members interface {
	// Member returns what the member with raft id last announced, if anything.
	Member(id string) (fsm.MemberInfo, bool)
	// AnnounceMember replicates info (leader only: ErrNotLeader otherwise, and
	// the write outcomes of Messages.PutMessages).
	AnnounceMember(ctx context.Context, info fsm.MemberInfo) error
}

// Replica is everything a broker node needs from its raft node and replicated
// state machine. NewNode implements it over broker/node.
type Replica interface {
	Messages
	Metadata
	ACLs
	Roles
	Schedule
	Transactions
	Membership
	Members
}

// TransactionState reads the replicated transaction decisions, keyed by half
// queue offset (fsm's transaction view implements it).
type TransactionState interface {
	// Decided reports whether the half message at o is decided and, if so, the
	// first offset after its decided run.
	Decided(o store.QueueOffset) (next store.QueueOffset, ok bool)
	// NextDecided returns the first decided offset ≥ o, if any.
	NextDecided(o store.QueueOffset) (store.QueueOffset, bool)
	FirstUndecided() store.QueueOffset
	// Checks is how many check-backs the undecided half message at o has had.
	Checks(o store.QueueOffset) int32
}

// TransactionOp is one decision or check on the half message at HalfOffset.
// Record is the message the op stores (commit: the real message; discard: the
// copy for TRANS_CHECK_MAX_TIME_TOPIC), nil for none.
type TransactionOp struct {
	Kind       fsm.TransactionOpKind
	HalfOffset store.QueueOffset
	Record     []byte
}

// TransactionOpResult is the outcome of one op. Decided: the half message was
// decided before (a duplicate); nothing was stored. Err: the op's record was
// refused on its own (its topic or queue is gone) although the decision stands.
type TransactionOpResult struct {
	Decided bool
	Put     fsm.MessageResult
	Err     error
}

// Peer is one member of the group's raft configuration.
type Peer struct {
	ID      string `json:"id"`
	Address string `json:"address"`
	// Suffrage is raft's name for it: Voter, Nonvoter or Staging.
	Suffrage string `json:"suffrage"`
	Leader   bool   `json:"leader"`
}
