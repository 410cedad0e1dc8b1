package route

import (
	"errors"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// errorCode is one row of the error table.
type errorCode struct {
	err  error
	code transport.ResponseCode
}

// errorTable is the one table that maps errors to RocketMQ response codes, in
// the order they are tested (an error wrapping two sentinels gets the first
// row's code). Choices that differ from Java are recorded in
// docs/decisions/0002-error-codes.md. codes_test.go fails when an exported error
// of store, fsm, replica or this package is neither here nor in
// internalErrors.
var errorTable = []errorCode{
	// ACL administration (50, 51, 53): first, since their handlers wrap the
	// reason (an ErrBadHeader, a refused change) in them.
	{ErrACLUpdate, transport.UpdateAndCreateACLConfigFailed},
	{ErrACLDelete, transport.DeleteACLConfigFailed},
	{ErrACLGlobalWhite, transport.UpdateGlobalWhiteAddrsConfigFailed},
	{ErrACLDisabled, transport.RequestCodeNotSupported},
	// Refused requests: the client sent something we will not take.
	{ErrBadHeader, transport.InvalidParameter},
	{replica.ErrUnknownMember, transport.InvalidParameter},
	{replica.ErrConfigRefused, transport.InvalidParameter},
	{fsm.ErrInvalidConfig, transport.InvalidParameter},
	{fsm.ErrSegmentSizeConflict, transport.InvalidParameter},
	{ErrTopicInvalid, transport.InvalidParameter},
	{ErrGroupInvalid, transport.InvalidParameter},
	{ErrBatchMalformed, transport.InvalidParameter},
	{fsm.ErrQueueIDInvalid, transport.InvalidParameter},
	{ErrBodyTooLarge, transport.MessageIllegal},
	{ErrPropsTooLong, transport.MessageIllegal},
	{store.ErrMessageIllegal, transport.MessageIllegal},
	{store.ErrEntryNotSplit, transport.MessageIllegal}, // always wrapped in ErrMessageIllegal by the FSM
	{ErrTopicNotAllowed, transport.NoPermission},
	{ErrNoPermission, transport.NoPermission},
	{fsm.ErrTopicNotFound, transport.TopicNotExist},
	{fsm.ErrGroupNotFound, transport.SubscriptionGroupNotExist},
	{ErrSubscriptionNotExist, transport.SubscriptionNotExist},
	{ErrSubscriptionParse, transport.SubscriptionParseFailed},
	{ErrConsumerNotOnline, transport.ConsumerNotOnline},
	// The group cannot take it now; the Go client retries these, and the route
	// refresh or our forwarding finds the leader.
	{replica.ErrBusy, transport.SystemBusy},
	{replica.ErrNoLeader, transport.ServiceNotAvailable},
	{replica.ErrNotLeader, transport.ServiceNotAvailable},
	{ErrDiskFull, transport.ServiceNotAvailable},
	// Failures the client can only retry or report.
	{replica.ErrUnknownOutcome, transport.SystemError}, // never told "ok"
	{fsm.ErrScheduleConflict, transport.SystemError},
	{fsm.ErrACLVersionConflict, transport.SystemError}, // a concurrent change; retry
	{fsm.ErrACLTooLarge, transport.InvalidParameter},
	{fsm.ErrTransactionDecided, transport.SystemError},
	{ErrHalfMessage, transport.SystemError},
	{ErrMessageLookup, transport.SystemError},
	{ErrProducerNotExist, transport.SystemError},
	{store.ErrOffsetOutOfRange, transport.SystemError},
	{store.ErrNoMessage, transport.SystemError}, // Java's "can not find message by the offset"
	{store.ErrCorrupt, transport.SystemError},
	{store.ErrClosed, transport.SystemError}, // the node is shutting down
	{fsm.ErrStopped, transport.SystemError},  // shut down while waiting for disk space: not applied here
	// Answered as success by its handler (the state asked for holds); listed so
	// a handler that passes it on still gets a defined code.
	{replica.ErrNothingToSnapshot, transport.SystemError},
}

// internalErrors are exported errors that cannot reach a client: they stop a
// node or fail its start-up, or stay inside the package that returns them. The
// test of the error table requires every exported error to be in errorTable or
// here, so a new sentinel is a decision, not an accident.
var internalErrors = []error{
	fsm.ErrConfig,            // FSM construction
	fsm.ErrCheckpointAhead,   // start-up: the node refuses to start
	fsm.ErrCheckpointCorrupt, // start-up
	fsm.ErrSnapshotFormat,    // raft snapshot restore
	fsm.ErrUnknownCommand,    // a committed entry that does not decode: the node stops
	fsm.ErrBadCommand,        // encoding a command the broker built; a programming error
	store.ErrQueueInvariant,  // a broken ConsumeQueue invariant stops the node
	store.ErrShortBuffer,     // store-internal decoding
	store.ErrEntryNotFound,   // the raft entry log: raftlog maps it to raft.ErrLogNotFound
	store.ErrEntryGap,        // the raft entry log: a StoreLogs error raft sees, never a client
	store.ErrNotEntryLog,     // a store call that does not match its raft log mode: a programming error
}

// ResponseCode maps err through the error table; nil is SUCCESS and an error
// in no row is SYSTEM_ERROR (the client retries; it is never told "ok").
func ResponseCode(err error) transport.ResponseCode {
	if err == nil {
		return transport.Success
	}
	for _, row := range errorTable {
		if errors.Is(err, row.err) {
			return row.code
		}
	}
	return transport.SystemError
}

// ErrorResponse answers err with its code and err's text as the remark.
func ErrorResponse(err error) *transport.Command {
	return transport.NewResponse(ResponseCode(err), err.Error())
}

// OK is a SUCCESS response with ext and body.
func OK(ext map[string]string, body []byte) *transport.Command {
	r := transport.NewResponse(transport.Success, "")
	r.ExtFields = ext
	r.Body = body
	return r
}

// Respond is a handler's outcome as the response to write: err mapped through
// the table, else resp (nil: no answer).
func Respond(resp *transport.Command, err error) *transport.Command {
	if err != nil {
		return ErrorResponse(err)
	}
	return resp
}
