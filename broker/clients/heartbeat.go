package clients

import (
	"encoding/json"
	"fmt"

	"github.com/rocketraft/rocketraft/broker/route"
)

// Heartbeat is HEART_BEAT's JSON body (rocketmq-protocol.md §3.2).
type Heartbeat struct {
	ClientID        string `json:"clientID"`
	ProducerDataSet []struct {
		GroupName string `json:"groupName"`
	} `json:"producerDataSet"`
	ConsumerDataSet []ConsumerData `json:"consumerDataSet"`
}

// ConsumerData is one consumer group of a heartbeat.
type ConsumerData struct {
	GroupName           string         `json:"groupName"`
	ConsumeType         string         `json:"consumeType"`
	MessageModel        string         `json:"messageModel"`
	ConsumeFromWhere    string         `json:"consumeFromWhere"`
	SubscriptionDataSet []Subscription `json:"subscriptionDataSet"`
	UnitMode            bool           `json:"unitMode"`
}

// Subscription is one (group, topic) subscription. codeSet is ignored: the Go
// client sends it as strings, Java as numbers, and we match on tag strings.
type Subscription struct {
	Topic          string   `json:"topic"`
	SubString      string   `json:"subString"`
	TagsSet        []string `json:"tagsSet"`
	SubVersion     int64    `json:"subVersion"`
	ExpressionType string   `json:"expressionType"`
}

// ParseHeartbeat decodes a HEART_BEAT body.
func ParseHeartbeat(body []byte) (Heartbeat, error) {
	var hb Heartbeat
	if err := json.Unmarshal(body, &hb); err != nil {
		return hb, fmt.Errorf("%w: heartbeat body: %v", route.ErrBadHeader, err)
	}
	if hb.ClientID == "" {
		return hb, fmt.Errorf("%w: heartbeat clientID is empty", route.ErrBadHeader)
	}
	return hb, nil
}
