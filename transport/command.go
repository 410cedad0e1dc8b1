package transport

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers match them with errors.Is; messages carry identifiers.
var (
	// ErrFrameTooLarge: a frame's declared length exceeds the configured limit (or an
	// encoded frame cannot be represented on the wire).
	ErrFrameTooLarge = errors.New("transport: frame too large")
	// ErrMalformedFrame: bytes that are not a valid remoting frame or header. The
	// connection they came from must be closed: framing is lost.
	ErrMalformedFrame = errors.New("transport: malformed frame")
	// ErrConnClosed: the connection closed before the request was written or answered.
	ErrConnClosed = errors.New("transport: connection closed")
	// ErrClientClosed: the Client was closed.
	ErrClientClosed = errors.New("transport: client closed")
	// ErrServerClosed: the Server was closed (or Start was called twice).
	ErrServerClosed = errors.New("transport: server closed")
)

// Flag bits (RemotingCommand.java RPC_TYPE / RPC_ONEWAY).
const (
	flagResponse int32 = 1 << 0
	flagOneway   int32 = 1 << 1
)

// ProtocolVersion is the version this side puts in every command it creates:
// MQVersion.Version ordinal 401 = V4_9_4. The Go client only compares a broker's version
// with V4_1_0 (which it defines as 0); Java clients gate a few 4.x features on it. It must
// fit int16 (the Go client fails to decode 40000).
const ProtocolVersion int16 = 401

// LanguageGo is the language name this side announces.
const LanguageGo = "GO"

// Command is one RocketMQ remoting command: a request or a response.
type Command struct {
	Code     int16 // request code for requests, response code for responses
	Language string
	Version  int16
	Opaque   int32
	Flag     int32 // bit0 response, bit1 oneway
	Remark   string
	// ExtFields are the extFields of a command being built. A decoded command
	// usually has none here: the fast decoders keep its fields as pairs (see
	// Field, LookupField, FieldPairs and Fields, which read either). When ExtFields
	// is non-nil it is the command's extFields and the pairs are ignored.
	ExtFields map[string]string
	// Ext, when set on a command being sent, is written as its extFields in
	// place of ExtFields: a sender whose commands repeat the same fields (the
	// bench's producer, the broker's send answers) appends them with an
	// ExtWriter instead of building, sorting and encoding a map per command.
	// Its Type must be the command's Serialize. Decoded commands never have it.
	Ext EncodedExt
	// Serialize is the header encoding: the one a decoded command arrived in,
	// the one a command being sent is written in (zero: JSON). A server answers
	// in its request's encoding, as Apache's NettyRemotingAbstract does.
	Serialize SerializeType
	Body      []byte
	// BodyParts is appended after Body when writing (zero-copy responses, e.g. mmap slices of stored messages).
	BodyParts [][]byte
	// OnWritten, if set, is called once after the frame was written or failed to be written (releases BodyParts).
	OnWritten func()
	// pairs are a decoded command's extFields in the order they arrived, without
	// a map: building a map of a SEND header's fourteen fields, then looking each
	// up again, cost more than the rest of the header's decode
	// (docs/performance.md, eighteenth pass).
	pairs []ExtField
}

// ExtField is one extFields entry.
type ExtField struct{ Key, Value string }

// inlinePairs is how many extFields a decoded command holds without a second
// allocation: a SEND_MESSAGE_V2 header has 14, with ACL's fields 16.
const inlinePairs = 16

// decodedCommand is a Command allocated together with room for its pairs.
type decodedCommand struct {
	Command
	room [inlinePairs]ExtField
}

// newDecoded returns an empty decoded command whose pairs slice has room for
// inlinePairs fields in the same allocation.
func newDecoded() *Command {
	d := &decodedCommand{}
	d.pairs = d.room[:0:inlinePairs]
	return &d.Command
}

// LookupField returns the value of extFields key and whether the command has it.
func (c *Command) LookupField(key string) (string, bool) {
	if c.ExtFields != nil {
		v, ok := c.ExtFields[key]
		return v, ok
	}
	if i := indexPair(c.pairs, key); i >= 0 {
		return c.pairs[i].Value, true
	}
	return "", false
}

// Field returns the value of extFields key, "" when absent.
func (c *Command) Field(key string) string {
	v, _ := c.LookupField(key)
	return v
}

// FieldCount is the number of extFields.
func (c *Command) FieldCount() int {
	if c.ExtFields != nil {
		return len(c.ExtFields)
	}
	return len(c.pairs)
}

// FieldPairs returns the extFields as pairs: a decoded command's in the order
// they arrived (the slice is the command's; do not modify it), a built one's
// sorted by key (a new slice).
func (c *Command) FieldPairs() []ExtField {
	if c.ExtFields == nil {
		return c.pairs
	}
	out := make([]ExtField, 0, len(c.ExtFields))
	var small [16]string
	for _, k := range sortedKeys(c.ExtFields, small[:0]) {
		out = append(out, ExtField{k, c.ExtFields[k]})
	}
	return out
}

// Fields returns the extFields as a map: ExtFields itself when it is set, else
// a new map of the decoded pairs, the caller's to keep or change (nil when the
// command has no extFields at all). Hot paths read single fields with Field.
func (c *Command) Fields() map[string]string {
	if c.ExtFields != nil || c.pairs == nil {
		return c.ExtFields
	}
	m := make(map[string]string, len(c.pairs))
	for _, f := range c.pairs {
		m[f.Key] = f.Value
	}
	return m
}

// NewRequest builds a request. The opaque is assigned when the request is sent
// (Client.Invoke, Conn.Invoke and their oneway variants overwrite it).
func NewRequest(code RequestCode, ext map[string]string, body []byte) *Command {
	return &Command{
		Code:      int16(code),
		Language:  LanguageGo,
		Version:   ProtocolVersion,
		ExtFields: ext,
		Body:      body,
	}
}

// NewResponse builds a response. The server fills in the opaque of the request it answers.
func NewResponse(code ResponseCode, remark string) *Command {
	return &Command{
		Code:     int16(code),
		Language: LanguageGo,
		Version:  ProtocolVersion,
		Flag:     flagResponse,
		Remark:   remark,
	}
}

// IsResponse reports whether flag bit0 is set.
func (c *Command) IsResponse() bool { return c.Flag&flagResponse != 0 }

// IsOneway reports whether flag bit1 is set. The Go client never sets it, even for
// oneway sends; Java clients do.
func (c *Command) IsOneway() bool { return c.Flag&flagOneway != 0 }

// RequestCode returns Code as a request code.
func (c *Command) RequestCode() RequestCode { return RequestCode(c.Code) }

// ResponseCode returns Code as a response code.
func (c *Command) ResponseCode() ResponseCode { return ResponseCode(c.Code) }

// BodyLen is the number of body bytes the frame carries: Body plus every BodyParts slice.
func (c *Command) BodyLen() int {
	n := len(c.Body)
	for _, p := range c.BodyParts {
		n += len(p)
	}
	return n
}

// String describes the command for logs (no body bytes).
func (c *Command) String() string {
	var code string
	if c.IsResponse() {
		code = c.ResponseCode().String()
	} else {
		code = c.RequestCode().String()
	}
	return fmt.Sprintf("code=%s opaque=%d flag=%d remark=%q ext=%v body=%dB",
		code, c.Opaque, c.Flag, c.Remark, c.Fields(), c.BodyLen())
}

// written runs OnWritten at most once.
func (c *Command) written() {
	if f := c.OnWritten; f != nil {
		c.OnWritten = nil
		f()
	}
}
