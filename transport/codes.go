package transport

import "strconv"

// RequestCode is the code of a request command (RocketMQ RequestCode.java). The Go client
// decodes the header field as int16, so every code must stay ≤ 32767.
type RequestCode int16

// Request codes. Numbers come from RocketMQ remoting/protocol/RequestCode.java; the Go
// client's copy is internal/request.go. The comment says who sends it.
const (
	SendMessage                   RequestCode = 10  // client→broker
	PullMessage                   RequestCode = 11  // client→broker
	QueryMessage                  RequestCode = 12  // Java tooling→broker (query by key)
	QueryConsumerOffset           RequestCode = 14  // client→broker
	UpdateConsumerOffset          RequestCode = 15  // client→broker, oneway in practice
	UpdateAndCreateTopic          RequestCode = 17  // admin→broker
	SearchOffsetByTimestamp       RequestCode = 29  // client→broker
	GetMaxOffset                  RequestCode = 30  // client→broker
	GetMinOffset                  RequestCode = 31  // client→broker
	ViewMessageByID               RequestCode = 33  // Java tooling→broker
	HeartBeat                     RequestCode = 34  // client→every broker
	UnregisterClient              RequestCode = 35  // Java client→broker (Go never sends it)
	ConsumerSendMsgBack           RequestCode = 36  // client→broker
	EndTransaction                RequestCode = 37  // client→broker, oneway in practice
	GetConsumerListByGroup        RequestCode = 38  // client→broker
	CheckTransactionState         RequestCode = 39  // broker→client, no reply
	NotifyConsumerIDsChanged      RequestCode = 40  // broker→client, no reply
	LockBatchMQ                   RequestCode = 41  // client→broker
	UnlockBatchMQ                 RequestCode = 42  // client→broker
	CheckClientConfig             RequestCode = 46  // Java client→broker
	RegisterBroker                RequestCode = 103 // broker→nameserver
	UnregisterBroker              RequestCode = 104 // broker→nameserver
	GetRouteInfoByTopic           RequestCode = 105 // client→nameserver
	GetBrokerClusterInfo          RequestCode = 106 // admin→nameserver
	GetAllSubscriptionGroupConfig RequestCode = 201 // admin→broker
	GetAllTopicListFromNameServer RequestCode = 206 // admin→nameserver
	DeleteTopicInBroker           RequestCode = 215 // admin→broker
	DeleteTopicInNameSrv          RequestCode = 216 // admin→nameserver
	ResetConsumerClientOffset     RequestCode = 220 // broker→client, no reply
	GetConsumerStatusFromClient   RequestCode = 221 // broker→client, replied
	GetConsumerRunningInfo        RequestCode = 307 // broker→client, replied
	ConsumeMessageDirectly        RequestCode = 309 // broker→client, replied
	SendMessageV2                 RequestCode = 310 // Java client→broker (short header names)
	SendBatchMessage              RequestCode = 320 // client→broker
	GetTopicConfig                RequestCode = 351 // admin→broker (RocketMQ 5.x; admin topic update reads before it writes)
	QueryDataVersion              RequestCode = 322 // Java 5.x broker→nameserver
	SendReplyMessage              RequestCode = 324 // client→broker (request/reply)
	SendReplyMessageV2            RequestCode = 325 // defined by Go, never sent
	PushReplyMessageToClient      RequestCode = 326 // broker→client, replied
	LitePullMessage               RequestCode = 361 // Java lite pull consumer→broker
	QueryAssignment               RequestCode = 400 // Java 5.x client→broker
	BrokerHeartbeat               RequestCode = 904 // Java 5.x broker→nameserver
)

var requestCodeNames = map[RequestCode]string{
	SendMessage:                   "SEND_MESSAGE",
	PullMessage:                   "PULL_MESSAGE",
	QueryMessage:                  "QUERY_MESSAGE",
	QueryConsumerOffset:           "QUERY_CONSUMER_OFFSET",
	UpdateConsumerOffset:          "UPDATE_CONSUMER_OFFSET",
	UpdateAndCreateTopic:          "UPDATE_AND_CREATE_TOPIC",
	SearchOffsetByTimestamp:       "SEARCH_OFFSET_BY_TIMESTAMP",
	GetMaxOffset:                  "GET_MAX_OFFSET",
	GetMinOffset:                  "GET_MIN_OFFSET",
	ViewMessageByID:               "VIEW_MESSAGE_BY_ID",
	HeartBeat:                     "HEART_BEAT",
	UnregisterClient:              "UNREGISTER_CLIENT",
	ConsumerSendMsgBack:           "CONSUMER_SEND_MSG_BACK",
	EndTransaction:                "END_TRANSACTION",
	GetConsumerListByGroup:        "GET_CONSUMER_LIST_BY_GROUP",
	CheckTransactionState:         "CHECK_TRANSACTION_STATE",
	NotifyConsumerIDsChanged:      "NOTIFY_CONSUMER_IDS_CHANGED",
	LockBatchMQ:                   "LOCK_BATCH_MQ",
	UnlockBatchMQ:                 "UNLOCK_BATCH_MQ",
	CheckClientConfig:             "CHECK_CLIENT_CONFIG",
	RegisterBroker:                "REGISTER_BROKER",
	UnregisterBroker:              "UNREGISTER_BROKER",
	GetRouteInfoByTopic:           "GET_ROUTEINFO_BY_TOPIC",
	GetBrokerClusterInfo:          "GET_BROKER_CLUSTER_INFO",
	GetAllSubscriptionGroupConfig: "GET_ALL_SUBSCRIPTIONGROUP_CONFIG",
	GetAllTopicListFromNameServer: "GET_ALL_TOPIC_LIST_FROM_NAMESERVER",
	DeleteTopicInBroker:           "DELETE_TOPIC_IN_BROKER",
	GetTopicConfig:                "GET_TOPIC_CONFIG",
	DeleteTopicInNameSrv:          "DELETE_TOPIC_IN_NAMESRV",
	ResetConsumerClientOffset:     "RESET_CONSUMER_CLIENT_OFFSET",
	GetConsumerStatusFromClient:   "GET_CONSUMER_STATUS_FROM_CLIENT",
	GetConsumerRunningInfo:        "GET_CONSUMER_RUNNING_INFO",
	ConsumeMessageDirectly:        "CONSUME_MESSAGE_DIRECTLY",
	SendMessageV2:                 "SEND_MESSAGE_V2",
	SendBatchMessage:              "SEND_BATCH_MESSAGE",
	QueryDataVersion:              "QUERY_DATA_VERSION",
	SendReplyMessage:              "SEND_REPLY_MESSAGE",
	SendReplyMessageV2:            "SEND_REPLY_MESSAGE_V2",
	PushReplyMessageToClient:      "PUSH_REPLY_MESSAGE_TO_CLIENT",
	LitePullMessage:               "LITE_PULL_MESSAGE",
	QueryAssignment:               "QUERY_ASSIGNMENT",
	BrokerHeartbeat:               "BROKER_HEARTBEAT",
}

// String returns the Java name and number, e.g. "SEND_MESSAGE(10)", for logs.
func (c RequestCode) String() string {
	return codeString(requestCodeNames[c], int16(c))
}

// ResponseCode is the code of a response command (RocketMQ ResponseCode.java and
// RemotingSysResponseCode.java). Decoded as int16 by the Go client.
type ResponseCode int16

// Response codes. The client-local negative codes (RPC_TIME_OUT and friends) never travel
// on the wire and are left out.
const (
	Success                    ResponseCode = 0
	SystemError                ResponseCode = 1
	SystemBusy                 ResponseCode = 2
	RequestCodeNotSupported    ResponseCode = 3
	TransactionFailed          ResponseCode = 4
	FlushDiskTimeout           ResponseCode = 10
	SlaveNotAvailable          ResponseCode = 11
	FlushSlaveTimeout          ResponseCode = 12
	MessageIllegal             ResponseCode = 13
	ServiceNotAvailable        ResponseCode = 14
	VersionNotSupported        ResponseCode = 15
	NoPermission               ResponseCode = 16
	TopicNotExist              ResponseCode = 17
	TopicExistAlready          ResponseCode = 18
	PullNotFound               ResponseCode = 19
	PullRetryImmediately       ResponseCode = 20
	PullOffsetMoved            ResponseCode = 21
	QueryNotFound              ResponseCode = 22
	SubscriptionParseFailed    ResponseCode = 23
	SubscriptionNotExist       ResponseCode = 24
	SubscriptionNotLatest      ResponseCode = 25
	SubscriptionGroupNotExist  ResponseCode = 26
	FilterDataNotExist         ResponseCode = 27
	FilterDataNotLatest        ResponseCode = 28
	InvalidParameter           ResponseCode = 29
	TransactionShouldCommit    ResponseCode = 200
	TransactionShouldRollback  ResponseCode = 201
	TransactionStateUnknown    ResponseCode = 202 // Java spells it TRANSACTION_STATE_UNKNOW
	TransactionStateGroupWrong ResponseCode = 203
	NoBuyerID                  ResponseCode = 204
	NotInCurrentUnit           ResponseCode = 205
	ConsumerNotOnline          ResponseCode = 206
	ConsumeMsgTimeout          ResponseCode = 207
	NoMessage                  ResponseCode = 208 // POP only
	PollingFull                ResponseCode = 209 // POP only
	PollingTimeout             ResponseCode = 210 // POP only
	BrokerNotExist             ResponseCode = 211
	BrokerDispatchNotComplete  ResponseCode = 212
	BroadcastConsumption       ResponseCode = 213
	FlowControl                ResponseCode = 215
	NotLeaderForQueue          ResponseCode = 501
	IllegalOperation           ResponseCode = 604
	GoAway                     ResponseCode = 1500
)

var responseCodeNames = map[ResponseCode]string{
	Success:                    "SUCCESS",
	SystemError:                "SYSTEM_ERROR",
	SystemBusy:                 "SYSTEM_BUSY",
	RequestCodeNotSupported:    "REQUEST_CODE_NOT_SUPPORTED",
	TransactionFailed:          "TRANSACTION_FAILED",
	FlushDiskTimeout:           "FLUSH_DISK_TIMEOUT",
	SlaveNotAvailable:          "SLAVE_NOT_AVAILABLE",
	FlushSlaveTimeout:          "FLUSH_SLAVE_TIMEOUT",
	MessageIllegal:             "MESSAGE_ILLEGAL",
	ServiceNotAvailable:        "SERVICE_NOT_AVAILABLE",
	VersionNotSupported:        "VERSION_NOT_SUPPORTED",
	NoPermission:               "NO_PERMISSION",
	TopicNotExist:              "TOPIC_NOT_EXIST",
	TopicExistAlready:          "TOPIC_EXIST_ALREADY",
	PullNotFound:               "PULL_NOT_FOUND",
	PullRetryImmediately:       "PULL_RETRY_IMMEDIATELY",
	PullOffsetMoved:            "PULL_OFFSET_MOVED",
	QueryNotFound:              "QUERY_NOT_FOUND",
	SubscriptionParseFailed:    "SUBSCRIPTION_PARSE_FAILED",
	SubscriptionNotExist:       "SUBSCRIPTION_NOT_EXIST",
	SubscriptionNotLatest:      "SUBSCRIPTION_NOT_LATEST",
	SubscriptionGroupNotExist:  "SUBSCRIPTION_GROUP_NOT_EXIST",
	FilterDataNotExist:         "FILTER_DATA_NOT_EXIST",
	FilterDataNotLatest:        "FILTER_DATA_NOT_LATEST",
	InvalidParameter:           "INVALID_PARAMETER",
	TransactionShouldCommit:    "TRANSACTION_SHOULD_COMMIT",
	TransactionShouldRollback:  "TRANSACTION_SHOULD_ROLLBACK",
	TransactionStateUnknown:    "TRANSACTION_STATE_UNKNOW",
	TransactionStateGroupWrong: "TRANSACTION_STATE_GROUP_WRONG",
	NoBuyerID:                  "NO_BUYER_ID",
	NotInCurrentUnit:           "NOT_IN_CURRENT_UNIT",
	ConsumerNotOnline:          "CONSUMER_NOT_ONLINE",
	ConsumeMsgTimeout:          "CONSUME_MSG_TIMEOUT",
	NoMessage:                  "NO_MESSAGE",
	PollingFull:                "POLLING_FULL",
	PollingTimeout:             "POLLING_TIMEOUT",
	BrokerNotExist:             "BROKER_NOT_EXIST",
	BrokerDispatchNotComplete:  "BROKER_DISPATCH_NOT_COMPLETE",
	BroadcastConsumption:       "BROADCAST_CONSUMPTION",
	FlowControl:                "FLOW_CONTROL",
	NotLeaderForQueue:          "NOT_LEADER_FOR_QUEUE",
	IllegalOperation:           "ILLEGAL_OPERATION",
	GoAway:                     "GO_AWAY",
}

// String returns the Java name and number, e.g. "TOPIC_NOT_EXIST(17)", for logs.
func (c ResponseCode) String() string {
	return codeString(responseCodeNames[c], int16(c))
}

func codeString(name string, n int16) string {
	if name == "" {
		name = "UNKNOWN"
	}
	return name + "(" + strconv.Itoa(int(n)) + ")"
}
