package broker

import (
	"errors"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// ErrTopicNotExist and ErrNoPermission are business outcomes of processors.
var (
	ErrTopicNotExist  = errors.New("topic does not exist")
	ErrNoPermission   = errors.New("no permission")
	ErrQueueIDInvalid = errors.New("queueId out of range")
	ErrNotLeader      = errors.New("not the leader")
	ErrBusy           = errors.New("system busy")
	ErrUnknownOutcome = errors.New("outcome unknown")
	ErrNoLeader       = errors.New("no leader")
	ErrDiskFull       = errors.New("service not available: disk full")
)

// responseCode is the one table that maps errors to RocketMQ response codes.
// Choices that differ from Java are recorded in docs/decisions/0002-error-codes.md.
func responseCode(err error) transport.ResponseCode {
	switch {
	case err == nil:
		return transport.Success
	case errors.Is(err, ErrBadHeader), errors.Is(err, ErrQueueIDInvalid), errors.Is(err, ErrTopicInvalid),
		errors.Is(err, ErrGroupInvalid), errors.Is(err, ErrBatchMalformed):
		return transport.InvalidParameter
	case errors.Is(err, ErrBodyTooLarge), errors.Is(err, ErrPropsTooLong), errors.Is(err, store.ErrMessageIllegal):
		return transport.MessageIllegal
	case errors.Is(err, ErrTopicNotAllowed), errors.Is(err, ErrNoPermission):
		return transport.NoPermission
	case errors.Is(err, ErrTopicNotExist):
		return transport.TopicNotExist
	case errors.Is(err, ErrBusy):
		return transport.SystemBusy
	case errors.Is(err, ErrNoLeader), errors.Is(err, ErrNotLeader), errors.Is(err, ErrDiskFull):
		// Retried by the Go client; the route refresh or our forwarding will find the leader.
		return transport.ServiceNotAvailable
	default:
		// Includes ErrUnknownOutcome: the client retries, it is never told "ok".
		return transport.SystemError
	}
}
