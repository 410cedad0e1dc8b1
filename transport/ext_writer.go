package transport

import (
	"encoding/binary"
	"strconv"
)

// EncodedExt is a command's extFields already encoded in one header layout:
// a JSON object for SerializeJSON, RocketMQSerializable's key/value table for
// SerializeRocketMQ. A nil Data means unset.
type EncodedExt struct {
	Type SerializeType
	Data []byte
}

// ExtWriter appends extFields pairs in one header layout, for a sender whose
// commands repeat the same fields (the bench's producer, the broker's send
// answers): no map, no hashing, no key sort per command. JSON keys are written
// in the order they are added; a caller that wants the bytes a map would give
// adds them sorted. Values are strings, as every RocketMQ header field is on
// the wire.
type ExtWriter struct {
	st SerializeType
	b  []byte
}

// NewExtWriter starts an extFields encoding in st's layout with room for
// about size bytes.
func NewExtWriter(st SerializeType, size int) ExtWriter {
	w := ExtWriter{st: st, b: make([]byte, 0, size)}
	if st != SerializeRocketMQ {
		w.b = append(w.b, '{')
	}
	return w
}

// Add appends key = value. Keys are the caller's header field names, a few
// bytes each (the ROCKETMQ layout counts a key's length in an int16).
func (w *ExtWriter) Add(key, value string) {
	if w.st == SerializeRocketMQ {
		w.b = appendBinaryPair(w.b, key, value)
		return
	}
	w.jsonKey(key)
	w.b = appendJSONString(w.b, value)
}

// AddInt appends key = the decimal string of v.
func (w *ExtWriter) AddInt(key string, v int64) {
	if w.st == SerializeRocketMQ {
		w.b = binary.BigEndian.AppendUint16(w.b, uint16(len(key)))
		w.b = append(w.b, key...)
		at := len(w.b)
		w.b = append(w.b, 0, 0, 0, 0)
		w.b = strconv.AppendInt(w.b, v, 10)
		binary.BigEndian.PutUint32(w.b[at:], uint32(len(w.b)-at-4))
		return
	}
	w.jsonKey(key)
	w.b = append(w.b, '"')
	w.b = strconv.AppendInt(w.b, v, 10)
	w.b = append(w.b, '"')
}

func (w *ExtWriter) jsonKey(key string) {
	if len(w.b) > 1 {
		w.b = append(w.b, ',')
	}
	w.b = appendJSONString(w.b, key)
	w.b = append(w.b, ':')
}

// Ext returns the encoding; the writer must not be used after.
func (w *ExtWriter) Ext() EncodedExt {
	if w.st == SerializeRocketMQ {
		return EncodedExt{Type: SerializeRocketMQ, Data: w.b}
	}
	return EncodedExt{Type: SerializeJSON, Data: append(w.b, '}')}
}
