package transport

// Admin request codes. GetBrokerRuntimeInfo (28, mqadmin brokerStatus) and
// InvokeBrokerToResetOffset (222, mqadmin resetOffsetByTime) are RocketMQ's own;
// the rest are rocketraft's and live in 9100..9199, a range that
// RocketMQ's RequestCode.java does not use (its highest codes are in the 1000s and
// 2000s; 9999 is left alone because tests use it as "unknown"). Every code fits
// the int16 the Go client decodes.
//
// Our codes carry their arguments in extFields and answer with a JSON body:
//
//	code                 extFields              body of the answer
//	RaftPeers            —                      {"servers":[{"id","address","suffrage","leader"}]}
//	RaftTransferLeader   id ("" = any)          —
//	RaftAddVoter         id, address            —
//	RaftAddNonvoter      id, address            —
//	RaftRemoveServer     id                     —
//	RaftSnapshot         —                      {"id","lastIndex"}
//	ConsumerProgress     consumerGroup, topic?  {"group","brokerName","queues":[…]}
//	LeadershipHistory    —                      {"brokerName","node","events":[…]}
//
// The state-changing ones (transfer, add, remove) are executed by the group's
// leader; a follower forwards them. RaftSnapshot acts on the node addressed.
const (
	GetBrokerRuntimeInfo RequestCode = 28   // admin→broker: {"table":{k:v}}
	RaftPeers            RequestCode = 9100 // admin→broker
	RaftTransferLeader   RequestCode = 9101 // admin→broker (leader)
	RaftAddVoter         RequestCode = 9102 // admin→broker (leader)
	RaftAddNonvoter      RequestCode = 9103 // admin→broker (leader)
	RaftRemoveServer     RequestCode = 9104 // admin→broker (leader)
	RaftSnapshot         RequestCode = 9105 // admin→broker (the node addressed)
	ConsumerProgress     RequestCode = 9106 // admin→broker (leader)
	// InvokeBrokerToResetOffset is RocketMQ's own (222, mqadmin resetOffsetByTime):
	// ext topic, group, timestamp (ms, -1 = the end), isForce; the answer body is
	// ResetOffsetBody, {"offsetTable":{<MessageQueue>:offset}} with each key the
	// bare queue object (fastjson's form, BareObjectKeys).
	InvokeBrokerToResetOffset RequestCode = 222 // admin→broker (leader)
	// LeadershipHistory is this node's ring of observed leader changes:
	// no ext; body {"brokerName","node","events":[{"time","term","leader",
	// "previousLeader","cause","detail"}]}, oldest first (the web console's timeline).
	LeadershipHistory RequestCode = 9107 // admin→broker (the node addressed)
)

// RocketMQ's admin codes that mqadmin, the dashboard and the exporter send
// (RequestCode.java; headers and bodies as AdminBrokerProcessor reads and writes
// them). GetConsumeStats supersedes ConsumerProgress, which stays for older
// rocketraft CLIs.
const (
	UpdateAndCreateSubscriptionGroup RequestCode = 200 // admin→broker (leader): body SubscriptionGroupConfig
	GetTopicStatsInfo                RequestCode = 202 // admin→broker: ext topic → TopicStatsTable
	GetConsumerConnectionList        RequestCode = 203 // admin→broker: ext consumerGroup → ConsumerConnection
	GetProducerConnectionList        RequestCode = 204 // admin→broker: ext producerGroup → ProducerConnection
	DeleteSubscriptionGroup          RequestCode = 207 // admin→broker (leader): ext groupName, cleanOffset
	GetConsumeStats                  RequestCode = 208 // admin→broker (leader): ext consumerGroup, topic?, topicList? → ConsumeStats
)

// adminCodeNames extends requestCodeNames so logs name our codes too.
var adminCodeNames = map[RequestCode]string{
	GetBrokerRuntimeInfo:      "GET_BROKER_RUNTIME_INFO",
	RaftPeers:                 "ROCKETRAFT_RAFT_PEERS",
	RaftTransferLeader:        "ROCKETRAFT_RAFT_TRANSFER_LEADER",
	RaftAddVoter:              "ROCKETRAFT_RAFT_ADD_VOTER",
	RaftAddNonvoter:           "ROCKETRAFT_RAFT_ADD_NONVOTER",
	RaftRemoveServer:          "ROCKETRAFT_RAFT_REMOVE_SERVER",
	RaftSnapshot:              "ROCKETRAFT_RAFT_SNAPSHOT",
	ConsumerProgress:          "ROCKETRAFT_CONSUMER_PROGRESS",
	InvokeBrokerToResetOffset: "INVOKE_BROKER_TO_RESET_OFFSET",
	LeadershipHistory:         "ROCKETRAFT_LEADERSHIP_HISTORY",

	UpdateAndCreateSubscriptionGroup: "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP",
	GetTopicStatsInfo:                "GET_TOPIC_STATS_INFO",
	GetConsumerConnectionList:        "GET_CONSUMER_CONNECTION_LIST",
	GetProducerConnectionList:        "GET_PRODUCER_CONNECTION_LIST",
	DeleteSubscriptionGroup:          "DELETE_SUBSCRIPTIONGROUP",
	GetConsumeStats:                  "GET_CONSUME_STATS",
}

func init() {
	for c, n := range adminCodeNames {
		requestCodeNames[c] = n
	}
}

// RocketMQ's broker-configuration and statistics codes (mqadmin
// getBrokerConfig, updateBrokerConfig, statsAll; AdminBrokerProcessor):
//
//	code                   extFields               body of the request → of the answer
//	UpdateBrokerConfig     —                       "key=value\n…" (Java properties) → —
//	GetBrokerConfig        —                       — → "key=value\n…"; answer ext version (DataVersion JSON)
//	ViewBrokerStatsData    statsName, statsKey     — → {"statsMinute","statsHour","statsDay":{"sum","tps","avgpt"}}
//	QueryTopicConsumeByWho topic                   — → {"groupList":[…]}
//
// A configuration change acts on the node addressed, as Apache's does on the
// broker address it is sent to.
const (
	UpdateBrokerConfig  RequestCode = 25  // admin→broker (the node addressed)
	GetBrokerConfig     RequestCode = 26  // admin→broker (the node addressed)
	ViewBrokerStatsData RequestCode = 315 // admin→broker (the node addressed)
	// QueryTopicConsumeByWho names the consumer groups of a topic (mqadmin
	// statsAll and topicList -c ask it before their per-group numbers).
	QueryTopicConsumeByWho RequestCode = 300 // admin→broker (the node addressed)
)

// brokerConfigCodeNames extends requestCodeNames with the codes above.
var brokerConfigCodeNames = map[RequestCode]string{
	UpdateBrokerConfig:     "UPDATE_BROKER_CONFIG",
	GetBrokerConfig:        "GET_BROKER_CONFIG",
	ViewBrokerStatsData:    "VIEW_BROKER_STATS_DATA",
	QueryTopicConsumeByWho: "QUERY_TOPIC_CONSUME_BY_WHO",
}

func init() {
	for c, n := range brokerConfigCodeNames {
		requestCodeNames[c] = n
	}
}
