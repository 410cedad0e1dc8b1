package nameserver

import (
	"maps"
	"slices"
	"strings"
)

// brokerSystemTopics are RocketMQ's TopicValidator system topics that a
// rocketraft broker creates or may register. Apache's nameserver answers 304
// with the cluster and broker names and the address of one broker, which the
// client then asks for these (305); rocketraft's nameserver lists the ones that
// are registered itself and names no broker, so the client stops at 304.
var brokerSystemTopics = map[string]bool{
	"TBW102":                      true,
	"SCHEDULE_TOPIC_XXXX":         true,
	"RMQ_SYS_TRANS_HALF_TOPIC":    true,
	"RMQ_SYS_TRANS_OP_HALF_TOPIC": true,
	"TRANS_CHECK_MAX_TIME_TOPIC":  true,
	"RMQ_SYS_TRACE_TOPIC":         true,
	"SELF_TEST_TOPIC":             true,
	"OFFSET_MOVED_EVENT":          true,
	"BenchmarkTest":               true,
}

// SystemTopicList is GET_SYSTEM_TOPIC_LIST_FROM_NS (304, the dashboard's topic
// pages): every cluster name and brokerName (Apache brokers create a topic of
// each name, clusterTopicEnable and brokerTopicEnable), the registered system
// topics above, rmq_sys_* topics and each cluster's <cluster>_REPLY_TOPIC;
// sorted, without duplicates.
func (r *Registry) SystemTopicList() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	set := make(map[string]bool)
	for cluster := range r.clusters {
		set[cluster] = true
		if _, ok := r.topics[cluster+"_REPLY_TOPIC"]; ok {
			set[cluster+"_REPLY_TOPIC"] = true
		}
	}
	for name := range r.brokers {
		set[name] = true
	}
	for topic := range r.topics {
		if brokerSystemTopics[topic] || strings.HasPrefix(topic, "rmq_sys_") {
			set[topic] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
