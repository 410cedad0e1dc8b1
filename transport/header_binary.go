package transport

import (
	"encoding/binary"
	"fmt"
)

// binaryFixedLen is the fixed part of a ROCKETMQ header: code(2) language(1) version(2)
// opaque(4) flag(4) remarkLen(4) extLen(4).
const binaryFixedLen = 21

// decodeBinaryHeader decodes a ROCKETMQ (RocketMQSerializable) header. Every length is
// checked against the bytes that remain before it is used, so hostile lengths cost nothing.
// Trailing bytes after the ext table are rejected: the format has nothing there.
func decodeBinaryHeader(h []byte) (*Command, error) {
	if len(h) < binaryFixedLen {
		return nil, fmt.Errorf("ROCKETMQ header %d bytes, fixed part is %d: %w", len(h), binaryFixedLen, ErrMalformedFrame)
	}
	be := binary.BigEndian
	cmd := &Command{
		Code:     int16(be.Uint16(h[0:2])),
		Language: languageName(h[2]),
		Version:  int16(be.Uint16(h[3:5])),
		Opaque:   int32(be.Uint32(h[5:9])),
		Flag:     int32(be.Uint32(h[9:13])),
	}
	p := h[13:]

	remarkLen := int32(be.Uint32(p))
	p = p[4:]
	if remarkLen < 0 || int64(remarkLen) > int64(len(p)) {
		return nil, fmt.Errorf("ROCKETMQ header remark length %d, %d bytes left: %w", remarkLen, len(p), ErrMalformedFrame)
	}
	cmd.Remark = string(p[:remarkLen])
	p = p[remarkLen:]

	if len(p) < 4 {
		return nil, fmt.Errorf("ROCKETMQ header truncated before ext length: %w", ErrMalformedFrame)
	}
	extLen := int32(be.Uint32(p))
	p = p[4:]
	if extLen < 0 || int64(extLen) != int64(len(p)) {
		return nil, fmt.Errorf("ROCKETMQ header ext length %d, %d bytes left: %w", extLen, len(p), ErrMalformedFrame)
	}
	ext, err := decodeBinaryExt(p)
	if err != nil {
		return nil, err
	}
	cmd.ExtFields = ext
	return cmd, nil
}

// decodeBinaryExt decodes repeated {keyLen int16, key, valLen int32, val}. An
// entry with an empty value is left out: Java's RocketMQSerializable.readStr
// reads length 0 as null, and every header decoder takes a null for an absent
// field (a required one then fails as missing, not as ""). An empty key is
// Java's null key, which no header field reads; it goes too. A repeated key
// keeps the last value, as HashMap.put does.
func decodeBinaryExt(p []byte) (map[string]string, error) {
	if len(p) == 0 {
		return nil, nil
	}
	be := binary.BigEndian
	// Each entry takes at least 6 bytes, which bounds the map hint.
	ext := make(map[string]string, min(len(p)/6, 64))
	for len(p) > 0 {
		if len(p) < 2 {
			return nil, fmt.Errorf("ROCKETMQ ext truncated key length: %w", ErrMalformedFrame)
		}
		keyLen := int16(be.Uint16(p))
		p = p[2:]
		if keyLen < 0 || int(keyLen) > len(p) {
			return nil, fmt.Errorf("ROCKETMQ ext key length %d, %d bytes left: %w", keyLen, len(p), ErrMalformedFrame)
		}
		key := string(p[:keyLen])
		p = p[keyLen:]
		if len(p) < 4 {
			return nil, fmt.Errorf("ROCKETMQ ext key %q: truncated value length: %w", key, ErrMalformedFrame)
		}
		valLen := int32(be.Uint32(p))
		p = p[4:]
		if valLen < 0 || int64(valLen) > int64(len(p)) {
			return nil, fmt.Errorf("ROCKETMQ ext key %q: value length %d, %d bytes left: %w", key, valLen, len(p), ErrMalformedFrame)
		}
		if keyLen > 0 && valLen > 0 {
			ext[key] = string(p[:valLen])
		} else {
			delete(ext, key) // null replaces an earlier value
		}
		p = p[valLen:]
	}
	return ext, nil
}
