package transaction

import "github.com/rocketraft/rocketraft/store"

// Transaction topics (Java TopicValidator): prepared messages wait in the half
// queue (queue 0); those that never get an answer after CheckMax check-backs are
// moved to the check-max topic.
const (
	HalfTopic     = "RMQ_SYS_TRANS_HALF_TOPIC"
	CheckMaxTopic = "TRANS_CHECK_MAX_TIME_TOPIC"
)

// END_TRANSACTION commitOrRollback values (Java MessageSysFlag TRANSACTION_*_TYPE).
const (
	// NotType is "unknown": the producer does not know yet; the check-back asks again.
	NotType      = int32(0)
	CommitType   = int32(store.SysFlagTxCommit)
	RollbackType = int32(store.SysFlagTxRollback)
)
