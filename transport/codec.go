package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
)

// DefaultMaxFrameSize is Java's default frame limit (com.rocketmq.remoting.frameMaxLength,
// NettyDecoder.java): 16 MiB, counted like frameLen (without the 4-byte length itself).
const DefaultMaxFrameSize = 16 << 20

// SerializeType is the header encoding named by byte 4 of a frame.
type SerializeType byte

// Header encodings. This side decodes both and writes the one a command names
// (Command.Serialize): JSON unless a request came in ROCKETMQ, whose response
// goes back in it, as Apache's servers answer.
const (
	SerializeJSON     SerializeType = 0
	SerializeRocketMQ SerializeType = 1
)

func (t SerializeType) String() string {
	switch t {
	case SerializeJSON:
		return "JSON"
	case SerializeRocketMQ:
		return "ROCKETMQ"
	}
	return fmt.Sprintf("SerializeType(%d)", byte(t))
}

const (
	frameLenSize    = 4
	framePrefixSize = 8 // frameLen + serialize type + 24-bit header length
	maxHeaderLen    = 1<<24 - 1
	// eagerAllocLimit bounds what DecodeFrame allocates before the bytes have arrived.
	// Larger frames grow their buffer as data comes in, so a peer that announces 16 MiB
	// and sends nothing costs at most this much per connection.
	eagerAllocLimit = 1 << 20
)

// AppendFrame appends the encoded frame of c (JSON header) to dst. Body and BodyParts are
// copied; EncodeFrame avoids that copy.
func AppendFrame(dst []byte, c *Command) ([]byte, error) {
	prefix, err := encodePrefix(c)
	if err != nil {
		return dst, err
	}
	dst = append(dst, prefix...)
	dst = append(dst, c.Body...)
	for _, p := range c.BodyParts {
		dst = append(dst, p...)
	}
	return dst, nil
}

// EncodeFrame writes the frame of c to w with one vectored write (net.Buffers), without
// copying Body or BodyParts. It does not call c.OnWritten.
func EncodeFrame(w io.Writer, c *Command) error {
	prefix, err := encodePrefix(c)
	if err != nil {
		return err
	}
	bufs := frameBuffers(make(net.Buffers, 0, 2+len(c.BodyParts)), prefix, c)
	_, err = bufs.WriteTo(w)
	return err
}

// frameBuffers appends the prefix and the non-empty body slices of c to bufs.
func frameBuffers(bufs net.Buffers, prefix []byte, c *Command) net.Buffers {
	bufs = append(bufs, prefix)
	if len(c.Body) > 0 {
		bufs = append(bufs, c.Body)
	}
	for _, p := range c.BodyParts {
		if len(p) > 0 {
			bufs = append(bufs, p)
		}
	}
	return bufs
}

// encodePrefix returns frameLen, type+headerLen and the header in c.Serialize's
// layout, in one slice.
func encodePrefix(c *Command) (buf []byte, err error) {
	if c.Ext.Data != nil && c.Ext.Type != c.Serialize {
		return nil, fmt.Errorf("encode code=%d opaque=%d: extFields encoded as %s in a %s header",
			c.Code, c.Opaque, c.Ext.Type, c.Serialize)
	}
	buf = make([]byte, framePrefixSize, framePrefixSize+128+32*c.FieldCount()+len(c.Ext.Data))
	switch c.Serialize {
	case SerializeJSON:
		buf = appendJSONHeader(buf, c)
	case SerializeRocketMQ:
		if buf, err = appendBinaryHeader(buf, c); err != nil {
			return nil, fmt.Errorf("encode code=%d opaque=%d: %w", c.Code, c.Opaque, err)
		}
	default:
		return nil, fmt.Errorf("encode code=%d opaque=%d: serialize type %d", c.Code, c.Opaque, byte(c.Serialize))
	}
	headerLen := len(buf) - framePrefixSize
	if headerLen > maxHeaderLen {
		return nil, fmt.Errorf("encode code=%d opaque=%d: header %d bytes exceeds 24 bits: %w",
			c.Code, c.Opaque, headerLen, ErrFrameTooLarge)
	}
	frameLen := int64(4) + int64(headerLen) + int64(c.BodyLen())
	if frameLen > math.MaxInt32 {
		return nil, fmt.Errorf("encode code=%d opaque=%d: frame %d bytes: %w",
			c.Code, c.Opaque, frameLen, ErrFrameTooLarge)
	}
	binary.BigEndian.PutUint32(buf[0:4], uint32(frameLen))
	binary.BigEndian.PutUint32(buf[4:8], uint32(c.Serialize)<<24|uint32(headerLen))
	return buf, nil
}

// DecodeFrame reads one frame from r. maxFrame ≤ 0 means DefaultMaxFrameSize. The
// declared length is checked against maxFrame before anything is allocated.
//
// It returns io.EOF if r ends cleanly before the first byte of a frame,
// io.ErrUnexpectedEOF (wrapped) if it ends inside one, ErrFrameTooLarge or
// ErrMalformedFrame (wrapped) for bad frames, or r's own error. After any error the
// stream position is undefined: close the connection.
func DecodeFrame(r io.Reader, maxFrame int) (*Command, error) {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrameSize
	}
	var prefix [framePrefixSize]byte
	if _, err := io.ReadFull(r, prefix[:frameLenSize]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("read frame length: %w", err)
		}
		return nil, err // io.EOF: clean end between frames
	}
	frameLen := binary.BigEndian.Uint32(prefix[0:4])
	if frameLen > math.MaxInt32 || int64(frameLen) > int64(maxFrame) {
		return nil, fmt.Errorf("frame length %d, limit %d: %w", frameLen, maxFrame, ErrFrameTooLarge)
	}
	if frameLen < 4 {
		return nil, fmt.Errorf("frame length %d shorter than its header length field: %w", frameLen, ErrMalformedFrame)
	}
	if _, err := io.ReadFull(r, prefix[frameLenSize:]); err != nil {
		return nil, fmt.Errorf("read header length: %w", unexpectedEOF(err))
	}
	word := binary.BigEndian.Uint32(prefix[4:8])
	st := SerializeType(word >> 24)
	headerLen := word & maxHeaderLen
	rest := frameLen - 4 // header + body
	if headerLen > rest {
		return nil, fmt.Errorf("header length %d exceeds frame remainder %d: %w", headerLen, rest, ErrMalformedFrame)
	}
	if st != SerializeJSON && st != SerializeRocketMQ {
		return nil, fmt.Errorf("serialize type %d: %w", byte(st), ErrMalformedFrame)
	}
	data, err := readN(r, int(rest))
	if err != nil {
		return nil, fmt.Errorf("read frame of %d bytes: %w", frameLen, err)
	}
	cmd, err := DecodeHeader(st, data[:headerLen])
	if err != nil {
		return nil, err
	}
	if int(headerLen) < len(data) {
		// The body shares the frame allocation; cap it so appends cannot touch the header.
		cmd.Body = data[headerLen:len(data):len(data)]
	}
	return cmd, nil
}

// readN reads exactly n bytes, growing the buffer as bytes arrive once n is above
// eagerAllocLimit.
func readN(r io.Reader, n int) ([]byte, error) {
	if n <= eagerAllocLimit {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, unexpectedEOF(err)
		}
		return buf, nil
	}
	buf := make([]byte, 0, eagerAllocLimit)
	for len(buf) < n {
		if len(buf) == cap(buf) {
			next := min(2*cap(buf), n)
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
		}
		m, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return nil, unexpectedEOF(err)
		}
	}
	return buf, nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// DecodeHeader decodes a header of the given serialize type into a Command without body.
// Malformed input returns an error wrapping ErrMalformedFrame; it never panics.
func DecodeHeader(st SerializeType, header []byte) (*Command, error) {
	switch st {
	case SerializeJSON:
		return decodeJSONHeader(header)
	case SerializeRocketMQ:
		return decodeBinaryHeader(header)
	}
	return nil, fmt.Errorf("serialize type %d: %w", byte(st), ErrMalformedFrame)
}
