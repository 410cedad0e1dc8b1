package broker

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrBatchMalformed reports a SEND_BATCH_MESSAGE body that does not split into
// elements.
var ErrBatchMalformed = errors.New("batch body malformed")

// batchElement is one inner message of a SEND_BATCH_MESSAGE body.
type batchElement struct {
	Flag       int32
	Body       []byte
	Properties string
}

// decodeBatch splits a SEND_BATCH_MESSAGE body (Java MessageDecoder.encodeMessage
// layout): TOTALSIZE int32, MAGIC int32, BODYCRC int32, FLAG int32, BODYLEN int32 +
// body, PROPLEN int16 + properties. Every length is checked against what remains.
func decodeBatch(b []byte) ([]batchElement, error) {
	var out []batchElement
	for pos := 0; pos < len(b); {
		if len(b)-pos < 20 {
			return nil, fmt.Errorf("%w: %d trailing bytes at %d", ErrBatchMalformed, len(b)-pos, pos)
		}
		total := int(int32(binary.BigEndian.Uint32(b[pos:])))
		if total < 22 || total > len(b)-pos {
			return nil, fmt.Errorf("%w: element at %d claims %d bytes, %d remain", ErrBatchMalformed, pos, total, len(b)-pos)
		}
		el := b[pos : pos+total]
		flag := int32(binary.BigEndian.Uint32(el[12:]))
		bodyLen := int(int32(binary.BigEndian.Uint32(el[16:])))
		if bodyLen < 0 || 20+bodyLen+2 > total {
			return nil, fmt.Errorf("%w: element at %d body length %d exceeds element", ErrBatchMalformed, pos, bodyLen)
		}
		body := el[20 : 20+bodyLen]
		propLen := int(binary.BigEndian.Uint16(el[20+bodyLen:]))
		if 22+bodyLen+propLen != total {
			return nil, fmt.Errorf("%w: element at %d lengths add to %d, total says %d", ErrBatchMalformed, pos, 22+bodyLen+propLen, total)
		}
		props := string(el[22+bodyLen:])
		out = append(out, batchElement{Flag: flag, Body: body, Properties: props})
		pos += total
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty batch", ErrBatchMalformed)
	}
	return out, nil
}

// encodeBatch is the inverse of decodeBatch (used by our own client and tests).
func encodeBatch(elems []batchElement) []byte {
	var b []byte
	for _, e := range elems {
		total := 22 + len(e.Body) + len(e.Properties)
		var hdr [20]byte
		binary.BigEndian.PutUint32(hdr[0:], uint32(total))
		binary.BigEndian.PutUint32(hdr[12:], uint32(e.Flag))
		binary.BigEndian.PutUint32(hdr[16:], uint32(len(e.Body)))
		b = append(b, hdr[:]...)
		b = append(b, e.Body...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(e.Properties)))
		b = append(b, e.Properties...)
	}
	return b
}
