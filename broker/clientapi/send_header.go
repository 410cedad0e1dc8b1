package clientapi

import (
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// sendKey is the slot of one SendHeader field in sendFields.
type sendKey uint8

const (
	keyProducerGroup sendKey = iota
	keyTopic
	keyDefaultTopic
	keyDefaultTopicQueueNums
	keyQueueID
	keySysFlag
	keyBornTimestamp
	keyFlag
	keyProperties
	keyReconsumeTimes
	keyUnitMode
	keyBatch
	keyMaxReconsumeTimes
	keyBname      // "bname", which V2 does not shorten
	keyBrokerName // "brokerName", V2's "n"
	numSendKeys
	noSendKey = numSendKeys
)

// v1SendKey is the slot of a V1 (long) key, noSendKey for any other key.
func v1SendKey(k string) sendKey {
	switch k {
	case "producerGroup":
		return keyProducerGroup
	case "topic":
		return keyTopic
	case "defaultTopic":
		return keyDefaultTopic
	case "defaultTopicQueueNums":
		return keyDefaultTopicQueueNums
	case "queueId":
		return keyQueueID
	case "sysFlag":
		return keySysFlag
	case "bornTimestamp":
		return keyBornTimestamp
	case "flag":
		return keyFlag
	case "properties":
		return keyProperties
	case "reconsumeTimes":
		return keyReconsumeTimes
	case "unitMode":
		return keyUnitMode
	case "batch":
		return keyBatch
	case "maxReconsumeTimes":
		return keyMaxReconsumeTimes
	case "bname":
		return keyBname
	case "brokerName":
		return keyBrokerName
	}
	return noSendKey
}

// v2SendKey is the slot of SendMessageRequestHeaderV2's single-letter key,
// noSendKey for any other key.
func v2SendKey(k string) sendKey {
	if len(k) != 1 {
		return noSendKey
	}
	switch k[0] {
	case 'a':
		return keyProducerGroup
	case 'b':
		return keyTopic
	case 'c':
		return keyDefaultTopic
	case 'd':
		return keyDefaultTopicQueueNums
	case 'e':
		return keyQueueID
	case 'f':
		return keySysFlag
	case 'g':
		return keyBornTimestamp
	case 'h':
		return keyFlag
	case 'i':
		return keyProperties
	case 'j':
		return keyReconsumeTimes
	case 'k':
		return keyUnitMode
	case 'l':
		return keyMaxReconsumeTimes
	case 'm':
		return keyBatch
	case 'n':
		return keyBrokerName
	}
	return noSendKey
}

// sendFields holds a send header's values, found in one pass over the
// request's extFields: fifteen lookups, each a scan of fourteen pairs (and of
// them again through a V2 alias), cost the leader ~5 % of its CPU per send.
type sendFields struct {
	long, short     [numSendKeys]string
	hasLong, hasV2s uint32 // bit per sendKey
}

// fill reads req's extFields once. V2 keys count only when "b" (V2's topic) is
// among them, and then a V2 key wins over its V1 name, as Apache's
// SendMessageRequestHeaderV2 decoding has it.
func (f *sendFields) fill(req *transport.Command) (v2 bool) {
	for _, p := range req.FieldPairs() {
		if k := v1SendKey(p.Key); k != noSendKey {
			f.long[k], f.hasLong = p.Value, f.hasLong|1<<k
		} else if k := v2SendKey(p.Key); k != noSendKey {
			f.short[k], f.hasV2s = p.Value, f.hasV2s|1<<k
		}
	}
	return f.hasV2s&(1<<keyTopic) != 0
}

// get returns the value of slot k, through its V2 alias when v2.
func (f *sendFields) get(k sendKey, v2 bool) (string, bool) {
	if v2 && f.hasV2s&(1<<k) != 0 {
		return f.short[k], true
	}
	return f.long[k], f.hasLong&(1<<k) != 0
}

// parseSendHeader decodes the header of codes 10, 310 and 320. V2
// (single-letter) keys are recognised by the presence of "b" (topic) and read
// as their V1 names (problems name those).
func parseSendHeader(req *transport.Command) (SendHeader, error) {
	var sf sendFields
	v2 := sf.fill(req)
	var e route.Fields
	str := func(k sendKey, name string, required bool) string {
		v, ok := sf.get(k, v2)
		return e.StrOf(name, v, ok, required)
	}
	i32 := func(k sendKey, name string, required bool, def int32) int32 {
		v, ok := sf.get(k, v2)
		return e.Int32Of(name, v, ok, required, def)
	}
	boolean := func(k sendKey, name string) bool {
		v, _ := sf.get(k, v2)
		return e.BoolOf(name, v, false)
	}
	born, bornOK := sf.get(keyBornTimestamp, v2)
	h := SendHeader{
		ProducerGroup:         str(keyProducerGroup, "producerGroup", false),
		Topic:                 str(keyTopic, "topic", true),
		DefaultTopic:          str(keyDefaultTopic, "defaultTopic", false),
		DefaultTopicQueueNums: i32(keyDefaultTopicQueueNums, "defaultTopicQueueNums", false, 4),
		QueueID:               i32(keyQueueID, "queueId", true, 0),
		SysFlag:               i32(keySysFlag, "sysFlag", false, 0),
		BornTimestamp:         e.Int64Of("bornTimestamp", born, bornOK, false, 0),
		Flag:                  i32(keyFlag, "flag", false, 0),
		Properties:            str(keyProperties, "properties", false),
		ReconsumeTimes:        i32(keyReconsumeTimes, "reconsumeTimes", false, 0),
		UnitMode:              boolean(keyUnitMode, "unitMode"),
		Batch:                 boolean(keyBatch, "batch"),
		MaxReconsumeTimes:     i32(keyMaxReconsumeTimes, "maxReconsumeTimes", false, 0),
		BrokerName:            sf.long[keyBname], // "bname": V2 has no alias for it
	}
	if h.BrokerName == "" {
		h.BrokerName, _ = sf.get(keyBrokerName, v2)
	}
	return h, e.Err
}
