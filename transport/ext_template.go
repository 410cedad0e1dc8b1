package transport

import "encoding/binary"

// ExtTemplate is an extFields encoding whose fields are fixed but for a few
// slots, for a sender that repeats one request shape many times (the bench's
// producer sends the same topic, group and flags with every message). The
// fixed fields are encoded once; Fill copies them and encodes only the slots'
// values. Fill's output is byte for byte what an ExtWriter given the same
// pairs in the same order writes.
//
// Build it with Add and Slot in the order the pairs go on the wire; it must
// not be changed after the first Fill, which may run on many goroutines.
type ExtTemplate struct {
	st SerializeType
	// parts[i] is the encoding before slot i, up to and including the slot's
	// key (and, in JSON, the value's opening quote); the last part is the
	// encoding after the last slot, to the end of the object.
	parts [][]byte
	keys  []string
}

// NewExtTemplate starts a template in st's layout.
func NewExtTemplate(st SerializeType) *ExtTemplate {
	t := &ExtTemplate{st: st, parts: [][]byte{nil}}
	if st != SerializeRocketMQ {
		t.parts[0] = append(t.parts[0], '{')
	}
	return t
}

// Add appends the fixed pair key = value.
func (t *ExtTemplate) Add(key, value string) {
	last := &t.parts[len(t.parts)-1]
	if t.st == SerializeRocketMQ {
		*last = appendBinaryPair(*last, key, value)
		return
	}
	*last = appendJSONString(t.jsonKey(*last, key), value)
}

// Slot appends a pair whose value each Fill gives, in the order of the slots.
func (t *ExtTemplate) Slot(key string) {
	last := &t.parts[len(t.parts)-1]
	if t.st == SerializeRocketMQ {
		*last = binary.BigEndian.AppendUint16(*last, uint16(len(key)))
		*last = append(*last, key...)
	} else {
		*last = append(t.jsonKey(*last, key), '"')
	}
	t.keys = append(t.keys, key)
	t.parts = append(t.parts, nil)
}

// jsonKey appends key and its colon to dst, the last part, after a comma
// unless this is the object's first pair.
func (t *ExtTemplate) jsonKey(dst []byte, key string) []byte {
	if len(t.parts) > 1 || len(dst) > 1 {
		dst = append(dst, ',')
	}
	return append(appendJSONString(dst, key), ':')
}

// Fill encodes the template with values for its slots, in order; it panics
// when their number differs from the slots', a programming error.
func (t *ExtTemplate) Fill(values ...string) EncodedExt {
	if len(values) != len(t.keys) {
		panic("transport: ExtTemplate.Fill: wrong number of values")
	}
	n := 0
	for _, p := range t.parts {
		n += len(p)
	}
	for _, v := range values {
		n += 6 + len(v) + len(v)/4
	}
	b := make([]byte, 0, n+1)
	for i, v := range values {
		b = append(b, t.parts[i]...)
		if t.st == SerializeRocketMQ {
			b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
			b = append(b, v...)
		} else {
			b = append(appendJSONStringBody(b, v), '"')
		}
	}
	b = append(b, t.parts[len(t.parts)-1]...)
	if t.st == SerializeRocketMQ {
		return EncodedExt{Type: SerializeRocketMQ, Data: b}
	}
	return EncodedExt{Type: SerializeJSON, Data: append(b, '}')}
}
