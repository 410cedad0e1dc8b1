package route

import "errors"

// The broker's own errors: request and validation failures, and the business
// outcomes of its handlers. Each has its response code in codes.go.
var (
	// ErrBadHeader reports a missing or malformed extFields value or body; the
	// message names the key, the value and the rule.
	ErrBadHeader       = errors.New("bad request header")
	ErrTopicInvalid    = errors.New("topic invalid")
	ErrTopicNotAllowed = errors.New("topic not allowed for clients")
	ErrGroupInvalid    = errors.New("group invalid")
	ErrBodyTooLarge    = errors.New("message body too large")
	ErrPropsTooLong    = errors.New("message properties too long")
	// ErrBatchMalformed reports a SEND_BATCH_MESSAGE body that does not split
	// into elements.
	ErrBatchMalformed = errors.New("batch body malformed")
	ErrNoPermission   = errors.New("no permission")
	ErrDiskFull       = errors.New("service not available: disk full")
	// ErrSubscriptionNotExist: a pull without an in-band subscription from a
	// group that has not heartbeated one.
	ErrSubscriptionNotExist = errors.New("subscription does not exist")
	// ErrSubscriptionParse reports a subscription expression that does not compile.
	ErrSubscriptionParse = errors.New("subscription expression does not parse")
	// ErrHalfMessage: END_TRANSACTION named a half message that is not there or
	// does not match (wrong offset, wrong producer group); SYSTEM_ERROR, like
	// Java's EndTransactionProcessor.checkPrepareMessage.
	ErrHalfMessage = errors.New("half message check failed")
	// ErrMessageLookup: CONSUMER_SEND_MSG_BACK named a physical offset that holds
	// no message here; SYSTEM_ERROR, like Java's "look message by offset failed",
	// and the client falls back to a plain SEND to %RETRY%<group>.
	ErrMessageLookup = errors.New("message lookup by offset failed")
	// ErrConsumerNotOnline: GET_CONSUMER_CONNECTION_LIST for a group with no
	// member connected; CONSUMER_NOT_ONLINE, as Apache answers it.
	ErrConsumerNotOnline = errors.New("consumer group not online")
	// ErrProducerNotExist: GET_PRODUCER_CONNECTION_LIST for a group this node
	// never saw; SYSTEM_ERROR, as Apache answers it.
	ErrProducerNotExist = errors.New("producer group does not exist")
)

// ACL administration failures: the handler of 50, 51 or 53 wraps the reason
// (a refused account, an unknown key, a bad pattern) in its code's sentinel,
// which the table answers with Apache's failure code.
var (
	ErrACLUpdate      = errors.New("update ACL config failed")
	ErrACLDelete      = errors.New("delete ACL config failed")
	ErrACLGlobalWhite = errors.New("update global white addrs failed")
	// ErrACLDisabled: an ACL code on a broker with aclEnable=false; answered
	// REQUEST_CODE_NOT_SUPPORTED, as brokers without ACL 1.0 do.
	ErrACLDisabled = errors.New("ACL is not enabled on this broker (aclEnable=false)")
)
