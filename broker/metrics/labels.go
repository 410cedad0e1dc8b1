package metrics

import (
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketraft/rocketraft/store"
)

// Label names and values shared with RocketMQ 5's BrokerMetricsConstant, so a
// dashboard written for Apache's broker finds the same series here.
const (
	labelCluster       = "cluster"
	labelNodeType      = "node_type"
	labelNodeID        = "node_id"
	labelBrokerName    = "broker_name"
	labelTopic         = "topic"
	labelConsumerGroup = "consumer_group"
	labelMessageType   = "message_type"
	labelIsSystem      = "is_system"
	labelIsRetry       = "is_retry"

	nodeTypeBroker = "broker"
)

// Values of message_type (RocketMQ's TopicMessageType.getMetricsValue).
const (
	MessageNormal      = "normal"
	MessageFIFO        = "fifo"
	MessageDelay       = "delay"
	MessageTransaction = "transaction"
)

// Cardinality bounds. A series per topic and per consumer group is what makes
// these metrics useful, and also what lets one misbehaving client (a producer
// inventing topic names, a consumer a group per process) grow the scrape without
// bound. The first DefaultMaxTopics topics and DefaultMaxGroups groups this node
// sees keep their own label value; every later one is reported as OtherLabel,
// and rocketraft_metrics_label_overflow_total counts each time that happened.
// 1000 is well above what one broker group carries in practice (RocketMQ's own
// OpenTelemetry exporter defaults to a cardinality limit of 50 000 series per
// metric, which a thousand topics times a few labels stays under).
const (
	DefaultMaxTopics = 1000
	DefaultMaxGroups = 1000
	// OtherLabel replaces a topic or group beyond the cap.
	OtherLabel = "__other__"
)

// Options name this node in every rocketraft_ and rocketmq_ series and bound
// the label values it exports.
type Options struct {
	// Cluster is brokerClusterName: label cluster.
	Cluster string
	// BrokerName is the group's brokerName: label broker_name, and with SelfID
	// the label node_id ("broker-a-n0").
	BrokerName string
	// SelfID is this node's raft id (dLegerSelfId).
	SelfID string
	// MaxTopics and MaxGroups cap the distinct topic and consumer_group label
	// values (0: DefaultMaxTopics, DefaultMaxGroups).
	MaxTopics, MaxGroups int
}

// NodeID is the node_id label: brokerName and raft id, so every node of a group
// has its own series (RocketMQ uses the brokerName alone: one process per name).
func (o Options) NodeID() string {
	if o.SelfID == "" {
		return o.BrokerName
	}
	return o.BrokerName + "-" + o.SelfID
}

// constLabels are on every series of this node except the Go runtime and
// process collectors (go_goroutines stays unlabelled, as tools expect).
func (o Options) constLabels() prometheus.Labels {
	return prometheus.Labels{
		labelCluster:    o.Cluster,
		labelNodeType:   nodeTypeBroker,
		labelNodeID:     o.NodeID(),
		labelBrokerName: o.BrokerName,
	}
}

// labelCap admits the first max distinct values of one label and maps every
// later value to OtherLabel, counting each replacement.
type labelCap struct {
	max      int
	overflow prometheus.Counter

	mu sync.Mutex
	// Invariant: len(admitted) <= max.
	admitted map[string]struct{}
}

func newLabelCap(max int, overflow prometheus.Counter) *labelCap {
	return &labelCap{max: max, overflow: overflow, admitted: make(map[string]struct{})}
}

// admit returns v if it has (or now gets) its own series, else OtherLabel.
func (c *labelCap) admit(v string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.admitted[v]; ok {
		return v
	}
	if len(c.admitted) < c.max {
		c.admitted[v] = struct{}{}
		return v
	}
	c.overflow.Inc()
	return OtherLabel
}

// size is the number of admitted values.
func (c *labelCap) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.admitted)
}

// systemTopics are RocketMQ's TopicValidator.SYSTEM_TOPIC_SET (the topics the
// broker itself owns) that a broker of this project creates or refuses.
var systemTopics = map[string]bool{
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

// isSystemTopic is RocketMQ's TopicValidator.isSystemTopic.
func isSystemTopic(topic string) bool {
	return systemTopics[topic] || strings.HasPrefix(topic, "rmq_sys_")
}

// isSystemGroup is RocketMQ's MixAll.isSysConsumerGroup (CID_RMQ_SYS_ prefix).
func isSystemGroup(group string) bool {
	return strings.HasPrefix(strings.ToUpper(group), "CID_RMQ_SYS_")
}

// isRetryOrDLQ reports the consumers' own topics, which RocketMQ leaves out of
// messages_in: a send-back is not producer traffic.
func isRetryOrDLQ(topic string) bool {
	return strings.HasPrefix(topic, "%RETRY%") || strings.HasPrefix(topic, "%DLQ%")
}

// Properties that make a message delayed (BrokerMetricsManager.getMessageType):
// a delay level, or one of the timer properties of RocketMQ 5 clients.
var delayProperties = []string{store.PropertyDelayLevel, store.PropertyTimerDeliverMS, "TIMER_DELAY_SEC", "TIMER_DELAY_MS", "__STARTDELIVERTIME"}

// propertyShardingKey marks a FIFO message of RocketMQ 5 clients.
const propertyShardingKey = "__SHARDINGKEY"

// MessageType classifies a message the way RocketMQ's broker labels
// message_type: transaction (prepared), else fifo (a sharding key), else delay,
// else normal. props is the message's encoded properties as the producer sent
// them; prepared reports the transaction-prepared sysFlag.
func MessageType(props string, prepared bool) string {
	// One pass over the properties, where a lookup per property walked them
	// seven times for every message stored. Each name counts at its first
	// occurrence, as store.Property reads it.
	var seen uint8 // bit 0: the transaction flag; bit 1+i: delayProperties[i]
	fifo, delay := false, false
	for name, value := range store.PropertyPairs(props) {
		switch name {
		case store.PropertyTransaction:
			if seen&1 == 0 && strings.EqualFold(value, "true") {
				prepared = true
			}
			seen |= 1
		case propertyShardingKey:
			fifo = true
		default:
			if i := slices.Index(delayProperties, name); i >= 0 {
				if bit := uint8(2) << i; seen&bit == 0 {
					seen |= bit
					delay = delay || value != "" && value != "0"
				}
			}
		}
	}
	switch {
	case prepared:
		return MessageTransaction
	case fifo:
		return MessageFIFO
	case delay:
		return MessageDelay
	}
	return MessageNormal
}

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
