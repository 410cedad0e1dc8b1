package transport

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// binaryFixedLen is the fixed part of a ROCKETMQ header: code(2) language(1) version(2)
// opaque(4) flag(4) remarkLen(4) extLen(4).
const binaryFixedLen = 21

// decodeBinaryHeader decodes a ROCKETMQ (RocketMQSerializable) header. Every length is
// checked against the bytes that remain before it is used, so hostile lengths cost nothing.
// Trailing bytes after the ext table are rejected: the format has nothing there.
// The remark, keys and values are substrings of one copy of the header: one
// allocation for all of them instead of one per string.
func decodeBinaryHeader(h []byte) (*Command, error) {
	if len(h) < binaryFixedLen {
		return nil, fmt.Errorf("ROCKETMQ header %d bytes, fixed part is %d: %w", len(h), binaryFixedLen, ErrMalformedFrame)
	}
	be := binary.BigEndian
	cmd := newDecoded()
	cmd.Code = int16(be.Uint16(h[0:2]))
	cmd.Language = languageName(h[2])
	cmd.Version = int16(be.Uint16(h[3:5]))
	cmd.Opaque = int32(be.Uint32(h[5:9]))
	cmd.Flag = int32(be.Uint32(h[9:13]))
	cmd.Serialize = SerializeRocketMQ
	p := h[13:]
	str := string(p) // p[i:j] is str[off+i:off+j], off = len(str)-len(p)
	sub := func(p []byte, n int) string { off := len(str) - len(p); return str[off : off+n] }

	remarkLen := int32(be.Uint32(p))
	p = p[4:]
	if remarkLen < 0 || int64(remarkLen) > int64(len(p)) {
		return nil, fmt.Errorf("ROCKETMQ header remark length %d, %d bytes left: %w", remarkLen, len(p), ErrMalformedFrame)
	}
	cmd.Remark = sub(p, int(remarkLen))
	p = p[remarkLen:]

	if len(p) < 4 {
		return nil, fmt.Errorf("ROCKETMQ header truncated before ext length: %w", ErrMalformedFrame)
	}
	extLen := int32(be.Uint32(p))
	p = p[4:]
	if extLen < 0 || int64(extLen) != int64(len(p)) {
		return nil, fmt.Errorf("ROCKETMQ header ext length %d, %d bytes left: %w", extLen, len(p), ErrMalformedFrame)
	}
	pairs, err := decodeBinaryExt(p, cmd.pairs, sub)
	if err != nil {
		return nil, err
	}
	cmd.pairs = pairs
	return cmd, nil
}

// decodeBinaryExt appends the entries of repeated {keyLen int16, key, valLen
// int32, val} to pairs. An entry with an empty value is left out: Java's
// RocketMQSerializable.readStr reads length 0 as null, and every header
// decoder takes a null for an absent field (a required one then fails as
// missing, not as ""). An empty key is Java's null key, which no header field
// reads; it goes too. A repeated key keeps the last value, as HashMap.put
// does, and a null after a value removes it. An empty table gives nil.
// sub(p, n) is the string of p[:n].
func decodeBinaryExt(p []byte, pairs []ExtField, sub func(p []byte, n int) string) ([]ExtField, error) {
	if len(p) == 0 {
		return nil, nil
	}
	be := binary.BigEndian
	if n := countBinaryExt(p); n > cap(pairs)-len(pairs) {
		pairs = slices.Grow(pairs, n)
	}
	var seen keySet
	for len(p) > 0 {
		if len(p) < 2 {
			return nil, fmt.Errorf("ROCKETMQ ext truncated key length: %w", ErrMalformedFrame)
		}
		keyLen := int16(be.Uint16(p))
		p = p[2:]
		if keyLen < 0 || int(keyLen) > len(p) {
			return nil, fmt.Errorf("ROCKETMQ ext key length %d, %d bytes left: %w", keyLen, len(p), ErrMalformedFrame)
		}
		key := sub(p, int(keyLen))
		p = p[keyLen:]
		if len(p) < 4 {
			return nil, fmt.Errorf("ROCKETMQ ext key %q: truncated value length: %w", key, ErrMalformedFrame)
		}
		valLen := int32(be.Uint32(p))
		p = p[4:]
		if valLen < 0 || int64(valLen) > int64(len(p)) {
			return nil, fmt.Errorf("ROCKETMQ ext key %q: value length %d, %d bytes left: %w", key, valLen, len(p), ErrMalformedFrame)
		}
		if keyLen > 0 {
			i := -1
			if seen.mayHave(key) {
				i = indexPair(pairs, key)
			}
			switch {
			case valLen > 0 && i >= 0:
				pairs[i].Value = sub(p, int(valLen))
			case valLen > 0:
				seen.add(key)
				pairs = append(pairs, ExtField{key, sub(p, int(valLen))})
			case i >= 0: // null replaces an earlier value
				pairs = slices.Delete(pairs, i, i+1)
			}
		}
		p = p[valLen:]
	}
	return pairs, nil
}

// appendBinaryHeader appends c's ROCKETMQ header (RocketMQSerializable's
// layout, the fixed part above, then the remark and the extFields table).
// Empty values are written too: the receiver's decoder leaves them out.
// A key longer than a Java short can count is refused (ErrFrameTooLarge).
func appendBinaryHeader(dst []byte, c *Command) ([]byte, error) {
	be := binary.BigEndian
	dst = be.AppendUint16(dst, uint16(c.Code))
	dst = append(dst, languageCode(c.Language))
	dst = be.AppendUint16(dst, uint16(c.Version))
	dst = be.AppendUint32(dst, uint32(c.Opaque))
	dst = be.AppendUint32(dst, uint32(c.Flag))
	dst = be.AppendUint32(dst, uint32(len(c.Remark)))
	dst = append(dst, c.Remark...)
	if c.Ext.Data != nil {
		dst = be.AppendUint32(dst, uint32(len(c.Ext.Data)))
		return append(dst, c.Ext.Data...), nil
	}
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var small [16]string
	ext := c.Fields()
	for _, k := range sortedKeys(ext, small[:0]) {
		if len(k) > math.MaxInt16 {
			return dst, fmt.Errorf("ROCKETMQ header: extFields key of %d bytes, the format's limit is %d: %w", len(k), math.MaxInt16, ErrFrameTooLarge)
		}
		dst = appendBinaryPair(dst, k, ext[k])
	}
	be.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst, nil
}

// appendBinaryPair appends one extFields entry of the ROCKETMQ table:
// key length (int16), key, value length (int32), value.
func appendBinaryPair(dst []byte, key, value string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(key)))
	dst = append(dst, key...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(value)))
	return append(dst, value...)
}

// languageCode is the LanguageCode.java ordinal of a language name; an empty
// name is this side's own (GO), an unknown one OTHER.
func languageCode(name string) byte {
	if name == "" {
		name = LanguageGo
	}
	for i, n := range languageNames {
		if n == name {
			return byte(i)
		}
	}
	return 7 // OTHER
}

// countBinaryExt is the number of entries a well-formed table holds (it stops
// at the first bad length; the decoder reports it): a table larger than a
// decoded command's inline room gets its pairs allocated once, at its size.
func countBinaryExt(p []byte) int {
	be := binary.BigEndian
	n := 0
	for len(p) >= 2 {
		keyLen := int(int16(be.Uint16(p)))
		if keyLen < 0 || 2+keyLen+4 > len(p) {
			break
		}
		valLen := int64(int32(be.Uint32(p[2+keyLen:])))
		if valLen < 0 || int64(6+keyLen)+valLen > int64(len(p)) {
			break
		}
		p = p[6+keyLen+int(valLen):]
		n++
	}
	return n
}
