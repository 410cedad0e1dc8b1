package transport

// RocketMQ's codes that only the dashboard and the exporter send (RequestCode.java):
//
//	code                        to          extFields  body of the answer
//	GetAllTopicConfig           broker      —          {"topicConfigTable":{name:TopicConfig},"dataVersion":{…}}
//	GetSystemTopicListFromNS    nameserver  —          {"topicList":[…]} (no brokerAddr: the client asks no broker)
//	GetAllProducerInfo          broker      —          {"data":{group:[{clientId,remoteIP,language,version,lastUpdateTimestamp}]}}
//
// The dashboard's topic page classifies every topic through 21 and 304 and shows
// nothing when either fails; the exporter's rocketmq_producer_count comes from 328.
const (
	GetAllTopicConfig        RequestCode = 21
	GetSystemTopicListFromNS RequestCode = 304
	GetAllProducerInfo       RequestCode = 328
)

var ecosystemCodeNames = map[RequestCode]string{
	GetAllTopicConfig:        "GET_ALL_TOPIC_CONFIG",
	GetSystemTopicListFromNS: "GET_SYSTEM_TOPIC_LIST_FROM_NS",
	GetAllProducerInfo:       "GET_ALL_PRODUCER_INFO",
}

func init() {
	for c, n := range ecosystemCodeNames {
		requestCodeNames[c] = n
	}
}
