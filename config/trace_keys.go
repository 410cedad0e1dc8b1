package config

import (
	"strings"
	"time"
)

// Apache keys whose meaning rocketraft implements beyond the core table:
// message trace (Apache BrokerConfig traceTopicEnable, msgTraceTopicName,
// traceOn), the region (regionId) and the registration period. They sit in brokerKeys through these rows so the
// 800-line table stays one concern per file.

// DefaultTraceTopic is Apache's TopicValidator.RMQ_SYS_TRACE_TOPIC, the topic
// the official clients' trace dispatchers write to unless told otherwise.
const DefaultTraceTopic = "RMQ_SYS_TRACE_TOPIC"

// DefaultRegionID is Apache's MixAll.DEFAULT_TRACE_REGION_ID, BrokerConfig's
// regionId default.
const DefaultRegionID = "DefaultRegion"

// Registration period bounds: Apache clamps registerNameServerPeriod to
// 10..60 s (BrokerController); rocketraft refuses a value outside instead of
// clamping it, so the running value is the one in the file.
const (
	minRegisterPeriod = 10 * time.Second
	maxRegisterPeriod = 60 * time.Second
)

func traceTopicEnableKey() keySpec[Broker] {
	return keySpec[Broker]{
		name: "traceTopicEnable", doc: "Create msgTraceTopicName (1 read and 1 write queue) when this node becomes leader, so message-trace producers (the clients' WithTrace / enableMsgTrace) have a route to it. Off by default, as in Apache.",
		set: func(b *Broker, s string) error {
			v, err := parseBool(s)
			if err != nil {
				return err
			}
			b.TraceTopicEnable = v
			return nil
		},
		get: func(b *Broker) string { return btoa(b.TraceTopicEnable) },
	}
}

func msgTraceTopicNameKey() keySpec[Broker] {
	return keySpec[Broker]{
		name: "msgTraceTopicName", doc: "Topic of trace records created with traceTopicEnable; clients must be given the same name when it is not the default.",
		set: func(b *Broker, s string) error { b.MsgTraceTopicName = s; return nil },
		get: func(b *Broker) string { return b.MsgTraceTopicName },
		check: func(b *Broker) string {
			return checkTopic(b.MsgTraceTopicName)
		},
	}
}

func registerNameServerPeriodKey() keySpec[Broker] {
	return keySpec[Broker]{
		name: "registerNameServerPeriod", doc: "How often this node re-registers with every nameserver, in ms (or a duration), 10s..60s; role changes register at once.",
		set: func(b *Broker, s string) error {
			d, err := parseDuration(s, true)
			if err != nil {
				return err
			}
			b.RegisterNameServerPeriod = d
			return nil
		},
		get: func(b *Broker) string { return formatMillis(b.RegisterNameServerPeriod) },
		check: func(b *Broker) string {
			if d := b.RegisterNameServerPeriod; d < minRegisterPeriod || d > maxRegisterPeriod {
				return "must be 10000..60000 ms (10s..60s)"
			}
			return ""
		},
	}
}

// checkTopic is RocketMQ's topic rule (TopicValidator): ^[%|a-zA-Z0-9_-]+$,
// at most 127 characters.
func checkTopic(s string) string {
	if s == "" {
		return "must not be empty"
	}
	if len(s) > 127 {
		return "must be at most 127 characters"
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '%' || c == '|' || c == '_' || c == '-') {
			return "must contain only letters, digits, '%', '|', '_' and '-'"
		}
	}
	return ""
}

// regionIDKey and traceOnKey: Apache's broker puts MSG_REGION=regionId and
// TRACE_ON=traceOn in every send answer and into the properties of what it
// stores (AbstractSendMessageProcessor). Java producers tag their trace records
// with the region and skip them when TRACE_ON=false; Java consumers skip
// tracing a message whose TRACE_ON is false.
func regionIDKey() keySpec[Broker] {
	return keySpec[Broker]{
		name: "regionId", doc: "Region of this broker: the MSG_REGION property of every message it stores (unless the producer set one) and of every send answer, which message-trace clients record.",
		set: func(b *Broker, s string) error { b.RegionID = s; return nil },
		get: func(b *Broker) string { return b.RegionID },
		check: func(b *Broker) string {
			if b.RegionID == "" {
				return "must not be empty"
			}
			if strings.ContainsAny(b.RegionID, "\x01\x02") {
				return "must not contain the property separators \\u0001 or \\u0002"
			}
			return ""
		},
	}
}

func traceOnKey() keySpec[Broker] {
	return keySpec[Broker]{
		name: "traceOn", doc: "TRACE_ON property of every message this broker stores (unless the producer set one) and of every send answer; false tells message-trace clients not to trace them.",
		set: func(b *Broker, s string) error {
			v, err := parseBool(s)
			if err != nil {
				return err
			}
			b.TraceOn = v
			return nil
		},
		get: func(b *Broker) string { return btoa(b.TraceOn) },
	}
}
