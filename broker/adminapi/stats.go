package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// messageQueueKey is a MessageQueue as a JSON object key: the queue object in
// fastjson's (alphabetical) field order, as a string. marshalBeanKeyed turns it
// into the bare object key Apache writes; fastjson 1 also reads the string
// form (its MapDeserializer re-parses a string key whose type is a bean).
func messageQueueKey(topic, brokerName string, queueID int32) string {
	b, err := json.Marshal(struct {
		BrokerName string `json:"brokerName"`
		QueueID    int32  `json:"queueId"`
		Topic      string `json:"topic"`
	}{brokerName, queueID, topic})
	if err != nil {
		panic("adminapi: marshal message queue: " + err.Error()) // strings and an int: cannot fail
	}
	return string(b)
}

// marshalBeanKeyed marshals v as Apache's broker writes it with fastjson: a
// map keyed by a bean (Map<MessageQueue,…>) has the bean object itself as its
// key, {"offsetTable":{{"brokerName":…}:{…}}}. That is not JSON, but it is the
// only form the 5.5 Java tools decode such a map from (their fastjson2 fails on
// a string key holding the object: "illegal fieldName input 26"), and fastjson 1
// (Java 4.9 to 5.3, the dashboard, the exporter) reads it too. So v is
// marshalled with encoding/json and every object key whose text is itself a
// JSON object (messageQueueKey) is written bare (transport.BareObjectKeys).
func marshalBeanKeyed(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return transport.BareObjectKeys(b), nil
}

// storeTimestampAt is the store time (ms) of the message at offset of a queue,
// 0 when there is none (Apache's getMessageStoreTimeStamp).
func (a *API) storeTimestampAt(topic string, queueID int32, offset store.QueueOffset) int64 {
	res, err := a.d.Store.GetMessages(topic, queueID, offset, 1, 1, nil)
	if err != nil {
		return 0
	}
	defer res.Release()
	if res.Status != store.Found || len(res.Messages) == 0 || res.QueueOffsets[0] != offset {
		return 0
	}
	return store.StoreTimestampOf(res.Messages[0])
}

// TopicOffset is one queue of a TopicStatsTable (TopicOffset.java).
type TopicOffset struct {
	MinOffset           store.QueueOffset `json:"minOffset"`
	MaxOffset           store.QueueOffset `json:"maxOffset"`
	LastUpdateTimestamp int64             `json:"lastUpdateTimestamp"`
}

// TopicStatsTable is GET_TOPIC_STATS_INFO's body; OffsetTable is keyed by
// messageQueueKey.
type TopicStatsTable struct {
	OffsetTable map[string]TopicOffset `json:"offsetTable"`
	TopicPutTps float64                `json:"topicPutTps"`
}

// topicStats serves GET_TOPIC_STATS_INFO (202, mqadmin topicStatus, the
// dashboard's topic pages, the exporter): every queue (the larger of the read
// and write counts) with its min and max offset and the store time of its
// newest message, from what this node applied. A missing topic is
// TOPIC_NOT_EXIST. Put TPS is not measured here and reads 0.
func (a *API) topicStats(_ context.Context, req *route.Request) (*transport.Command, error) {
	f := route.FieldsOf(req.Command)
	topic := f.Str("topic", true)
	if f.Err != nil {
		return nil, f.Err
	}
	if err := route.ValidateTopic(topic); err != nil {
		return nil, err
	}
	tc, ok := a.d.Replica.Topic(topic)
	if !ok {
		return nil, fmt.Errorf("topic[%s] on broker %s: %w", topic, a.d.BrokerName, fsm.ErrTopicNotFound)
	}
	table := TopicStatsTable{OffsetTable: make(map[string]TopicOffset)}
	for q := range max(tc.ReadQueueNums, tc.WriteQueueNums) {
		o := TopicOffset{MinOffset: max(a.d.Store.MinQueueOffset(topic, q), 0), MaxOffset: max(a.d.Store.MaxQueueOffset(topic, q), 0)}
		if o.MaxOffset > 0 {
			o.LastUpdateTimestamp = a.storeTimestampAt(topic, q, o.MaxOffset-1)
		}
		table.OffsetTable[messageQueueKey(topic, a.d.BrokerName, q)] = o
	}
	body, err := marshalBeanKeyed(table)
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}

// OffsetWrapper is one queue of ConsumeStats (OffsetWrapper.java).
type OffsetWrapper struct {
	BrokerOffset   store.QueueOffset `json:"brokerOffset"`
	ConsumerOffset store.QueueOffset `json:"consumerOffset"`
	PullOffset     store.QueueOffset `json:"pullOffset"`
	LastTimestamp  int64             `json:"lastTimestamp"`
}

// ConsumeStats is GET_CONSUME_STATS's body; OffsetTable is keyed by
// messageQueueKey.
type ConsumeStats struct {
	OffsetTable map[string]OffsetWrapper `json:"offsetTable"`
	ConsumeTps  float64                  `json:"consumeTps"`
}

// consumeStatsTopics picks the topics of a GET_CONSUME_STATS request as Apache
// does (AdminBrokerProcessor.getTopicsForCollectingConsumeStats): the topicList
// as given; else the topic given, or every topic the group committed an offset
// on, minus those its connected members do not subscribe to (when they
// subscribe to anything).
func (a *API) consumeStatsTopics(group, topic string, topicList []string) []string {
	if len(topicList) > 0 {
		return topicList
	}
	var topics []string
	if topic != "" {
		topics = []string{topic}
	} else {
		for _, t := range a.d.Replica.Topics() {
			for q := range max(t.ReadQueueNums, t.WriteQueueNums) {
				if _, ok := a.consumerOffset(group, t.Name, q); ok {
					topics = append(topics, t.Name)
					break
				}
			}
		}
	}
	subscribed := a.d.Clients.SubscribedTopics(group)
	if len(subscribed) == 0 {
		return topics
	}
	return slices.DeleteFunc(topics, func(t string) bool { return !slices.Contains(subscribed, t) })
}

// consumeStats serves GET_CONSUME_STATS (208, mqadmin consumerProgress, the
// dashboard's and the exporter's consumer pages) on the leader, which holds the
// offsets not yet replicated: per read queue of each topic, the max offset, the
// group's committed offset (0 when none, as Apache reports it), the next offset
// this node told the group to pull (never below the committed one: a queue it
// served no pull of, or one reset backwards since, shows the committed offset,
// as Apache 5.x does), and the store time of the last message it consumed.
// consumeTps is the messages per second the group pulled here over the last
// minute, summed over the topics (Apache's tpsGroupGetNums). Topics that do
// not exist are skipped.
func (a *API) consumeStats(_ context.Context, req *route.Request) (*transport.Command, error) {
	f := route.FieldsOf(req.Command)
	group, topic, list := f.Str("consumerGroup", true), f.Str("topic", false), f.Str("topicList", false)
	if f.Err != nil {
		return nil, f.Err
	}
	if err := route.ValidateGroup(group); err != nil {
		return nil, err
	}
	var topicList []string
	for _, t := range strings.Split(list, ";") {
		if t = strings.TrimSpace(t); t != "" {
			topicList = append(topicList, t)
		}
	}
	stats := ConsumeStats{OffsetTable: make(map[string]OffsetWrapper)}
	now := a.d.Replica.Now()
	for _, t := range a.consumeStatsTopics(group, topic, topicList) {
		tc, ok := a.d.Replica.Topic(t)
		if !ok {
			continue
		}
		for q := range tc.ReadQueueNums {
			w := OffsetWrapper{BrokerOffset: max(a.d.Store.MaxQueueOffset(t, q), 0)}
			if off, ok := a.consumerOffset(group, t, q); ok && off > 0 {
				w.ConsumerOffset = off
				w.LastTimestamp = a.storeTimestampAt(t, q, off-1)
			}
			w.PullOffset = w.ConsumerOffset
			if next, ok := a.d.Stats.PullOffset(group, t, q); ok {
				w.PullOffset = max(store.QueueOffset(next), w.ConsumerOffset)
			}
			stats.OffsetTable[messageQueueKey(t, a.d.BrokerName, q)] = w
		}
		stats.ConsumeTps += a.d.Stats.GroupGetTPS(group, t, now)
	}
	body, err := marshalBeanKeyed(stats)
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}
