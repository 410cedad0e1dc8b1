package nameserver

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
)

// TopicConfig is one entry of the broker's topicConfigTable as sent in
// REGISTER_BROKER. Only the queue-shaping fields reach the route; the rest are kept
// so the broker and the admin CLI can round-trip Java's shape.
type TopicConfig struct {
	TopicName       string            `json:"topicName"`
	ReadQueueNums   int32             `json:"readQueueNums"`
	WriteQueueNums  int32             `json:"writeQueueNums"`
	Perm            Perm              `json:"perm"`
	TopicFilterType string            `json:"topicFilterType,omitempty"`
	TopicSysFlag    int32             `json:"topicSysFlag"`
	Order           bool              `json:"order"`
	Attributes      map[string]string `json:"attributes,omitempty"`
}

// TopicConfigSerializeWrapper is Java's wrapper of the topic table plus its version.
type TopicConfigSerializeWrapper struct {
	TopicConfigTable map[string]TopicConfig `json:"topicConfigTable"`
	DataVersion      DataVersion            `json:"dataVersion"`
}

// RegisterBrokerBody is the uncompressed REGISTER_BROKER (103) body.
type RegisterBrokerBody struct {
	TopicConfigSerializeWrapper TopicConfigSerializeWrapper `json:"topicConfigSerializeWrapper"`
	FilterServerList            []string                    `json:"filterServerList"`
}

// encodeRegisterBody builds the body for req. Empty tables are written as {} / []
// because Java's nameserver, like ours, treats null and absent alike but some
// tools do not.
func encodeRegisterBody(topics map[string]TopicConfig, dv DataVersion) ([]byte, error) {
	if topics == nil {
		topics = map[string]TopicConfig{}
	}
	body := RegisterBrokerBody{
		TopicConfigSerializeWrapper: TopicConfigSerializeWrapper{TopicConfigTable: topics, DataVersion: dv},
		FilterServerList:            []string{},
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode register body: %w", err)
	}
	return b, nil
}

// decodeRegisterBody parses a REGISTER_BROKER body. An empty body is allowed (Java
// treats it as an empty topic table with a zero version).
func decodeRegisterBody(body []byte) (map[string]TopicConfig, DataVersion, error) {
	if len(body) == 0 {
		return map[string]TopicConfig{}, DataVersion{}, nil
	}
	var rb RegisterBrokerBody
	if err := json.Unmarshal(body, &rb); err != nil {
		return nil, DataVersion{}, fmt.Errorf("register body: %v: %w", err, ErrInvalidRequest)
	}
	w := rb.TopicConfigSerializeWrapper
	if w.TopicConfigTable == nil {
		w.TopicConfigTable = map[string]TopicConfig{}
	}
	for name, tc := range w.TopicConfigTable {
		if tc.ReadQueueNums < 0 || tc.WriteQueueNums < 0 {
			return nil, DataVersion{}, fmt.Errorf("register body topic=%s negative queue count: %w", name, ErrInvalidRequest)
		}
	}
	return w.TopicConfigTable, w.DataVersion, nil
}

// BodyCRC32 is the checksum REGISTER_BROKER carries in ext bodyCrc32: IEEE CRC32
// masked to 31 bits, because Java sends it as a non-negative int. 0 means "not
// checked", so a body whose checksum happens to be 0 is simply not verified.
func BodyCRC32(body []byte) int32 {
	return int32(crc32.ChecksumIEEE(body) & 0x7FFFFFFF)
}
