package broker

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrBadHeader reports a missing or malformed extFields value; the message names
// the key, the value and the rule.
var ErrBadHeader = errors.New("bad request header")

// ext reads typed values out of a request's extFields and remembers the first problem.
type ext struct {
	fields map[string]string
	err    error
}

func (e *ext) fail(key, value, rule string) {
	if e.err == nil {
		e.err = fmt.Errorf("%w: %s=%q: %s", ErrBadHeader, key, value, rule)
	}
}

func (e *ext) str(key string, required bool) string {
	v, ok := e.fields[key]
	if !ok && required {
		e.fail(key, "", "required")
	}
	return v
}

func (e *ext) int64(key string, required bool, def int64) int64 {
	v, ok := e.fields[key]
	if !ok || v == "" {
		if required {
			e.fail(key, v, "required")
		}
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		e.fail(key, v, "must be a decimal integer")
		return def
	}
	return n
}

func (e *ext) int32(key string, required bool, def int32) int32 {
	n := e.int64(key, required, int64(def))
	if n < -1<<31 || n > 1<<31-1 {
		e.fail(key, e.fields[key], "must fit in 32 bits")
		return def
	}
	return int32(n)
}

func (e *ext) bool(key string, def bool) bool {
	switch v := e.fields[key]; v {
	case "":
		return def
	case "true":
		return true
	case "false":
		return false
	default:
		e.fail(key, v, "must be true or false")
		return def
	}
}

// SendHeader is SEND_MESSAGE's header (V1 keys), also decoded from SEND_MESSAGE_V2
// and SEND_BATCH_MESSAGE's single-letter keys.
type SendHeader struct {
	ProducerGroup         string
	Topic                 string
	DefaultTopic          string
	DefaultTopicQueueNums int32
	QueueID               int32
	SysFlag               int32
	BornTimestamp         int64
	Flag                  int32
	Properties            string
	ReconsumeTimes        int32
	UnitMode              bool
	Batch                 bool
	MaxReconsumeTimes     int32
	BrokerName            string
}

// v2Keys maps SendMessageRequestHeaderV2's single letters to the V1 names.
var v2Keys = map[string]string{
	"a": "producerGroup", "b": "topic", "c": "defaultTopic", "d": "defaultTopicQueueNums",
	"e": "queueId", "f": "sysFlag", "g": "bornTimestamp", "h": "flag", "i": "properties",
	"j": "reconsumeTimes", "k": "unitMode", "l": "maxReconsumeTimes", "m": "batch", "n": "brokerName",
}

// parseSendHeader decodes the header of codes 10, 310 and 320. V2 (single-letter)
// keys are recognised by the presence of "b" (topic).
func parseSendHeader(fields map[string]string) (SendHeader, error) {
	if _, v2 := fields["b"]; v2 {
		v1 := make(map[string]string, len(fields))
		for k, v := range fields {
			if name, ok := v2Keys[k]; ok {
				v1[name] = v
			} else {
				v1[k] = v
			}
		}
		fields = v1
	}
	e := &ext{fields: fields}
	h := SendHeader{
		ProducerGroup:         e.str("producerGroup", false),
		Topic:                 e.str("topic", true),
		DefaultTopic:          e.str("defaultTopic", false),
		DefaultTopicQueueNums: e.int32("defaultTopicQueueNums", false, 4),
		QueueID:               e.int32("queueId", true, 0),
		SysFlag:               e.int32("sysFlag", false, 0),
		BornTimestamp:         e.int64("bornTimestamp", false, 0),
		Flag:                  e.int32("flag", false, 0),
		Properties:            e.str("properties", false),
		ReconsumeTimes:        e.int32("reconsumeTimes", false, 0),
		UnitMode:              e.bool("unitMode", false),
		Batch:                 e.bool("batch", false),
		MaxReconsumeTimes:     e.int32("maxReconsumeTimes", false, 0),
		BrokerName:            e.str("bname", false),
	}
	if h.BrokerName == "" {
		h.BrokerName = fields["brokerName"]
	}
	return h, e.err
}

// PullHeader is PULL_MESSAGE's header.
type PullHeader struct {
	ConsumerGroup        string
	Topic                string
	QueueID              int32
	QueueOffset          int64
	MaxMsgNums           int32
	SysFlag              int32
	CommitOffset         int64
	SuspendTimeoutMillis int64
	Subscription         string
	SubVersion           int64
	ExpressionType       string
}

// Pull sysFlag bits (PullSysFlag.java).
const (
	pullFlagCommitOffset = 0x1
	pullFlagSuspend      = 0x2
	pullFlagSubscription = 0x4
)

func parsePullHeader(fields map[string]string) (PullHeader, error) {
	e := &ext{fields: fields}
	h := PullHeader{
		ConsumerGroup:        e.str("consumerGroup", true),
		Topic:                e.str("topic", true),
		QueueID:              e.int32("queueId", true, 0),
		QueueOffset:          e.int64("queueOffset", true, 0),
		MaxMsgNums:           e.int32("maxMsgNums", false, 32),
		SysFlag:              e.int32("sysFlag", false, 0),
		CommitOffset:         e.int64("commitOffset", false, 0),
		SuspendTimeoutMillis: e.int64("suspendTimeoutMillis", false, 0),
		Subscription:         e.str("subscription", false),
		SubVersion:           e.int64("subVersion", false, 0),
		ExpressionType:       e.str("expressionType", false),
	}
	return h, e.err
}
