package fsm

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"

	"github.com/rocketraft/rocketraft/store"
)

// CommandType is the first byte of every raft command this FSM applies. The values
// are part of the replicated log format: they are append-only, never renumbered or
// reused, and pinned by TestGoldenCommands (testdata/*.golden).
type CommandType uint8

// Command codes. Adding one: take the next free number, add a golden file, never
// change an existing line.
const (
	CmdPutMessages             CommandType = 1
	CmdTopicUpsert             CommandType = 2
	CmdTopicDelete             CommandType = 3
	CmdSubscriptionGroupUpsert CommandType = 4
	CmdSubscriptionGroupDelete CommandType = 5
	CmdConsumerOffsets         CommandType = 6
	CmdScheduleProgress        CommandType = 7
	CmdPinSegmentSize          CommandType = 8
	// Reserved: 9..15 transactions (half/op/commit bookkeeping), 16..23 ACL
	// (16 is CmdACLSet, acl.go).
)

// commandVersion is the only payload version of every command so far. The byte after
// the type lets a command's payload evolve without a new type: a decoder that meets a
// version it does not know treats it as undecodable (the node is too old to apply it).
const commandVersion byte = 1

// headerLen is type + version.
const headerLen = 2

func (t CommandType) String() string {
	switch t {
	case CmdPutMessages:
		return "PutMessages"
	case CmdTopicUpsert:
		return "TopicUpsert"
	case CmdTopicDelete:
		return "TopicDelete"
	case CmdSubscriptionGroupUpsert:
		return "SubscriptionGroupUpsert"
	case CmdSubscriptionGroupDelete:
		return "SubscriptionGroupDelete"
	case CmdConsumerOffsets:
		return "ConsumerOffsets"
	case CmdScheduleProgress:
		return "ScheduleProgress"
	case CmdPinSegmentSize:
		return "PinSegmentSize"
	case CmdDeliverScheduled:
		return "DeliverScheduled"
	case CmdTransactionOps:
		return "TransactionOps"
	case CmdACLSet:
		return "ACLSet"
	case CmdMemberUpsert:
		return "MemberUpsert"
	case CmdOffsetReset:
		return "OffsetReset"
	}
	return fmt.Sprintf("CommandType(%d)", uint8(t))
}

// Codec errors. A command that fails to decode inside Apply is corruption (see
// FSM.Apply); these errors are what the fuzz target and callers that validate a
// command before proposing it see.
var (
	ErrUnknownCommand = errors.New("fsm: unknown command type")
	ErrBadCommand     = errors.New("fsm: undecodable command")
)

func badf(t CommandType, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrBadCommand, t, fmt.Sprintf(format, args...))
}

// PutMessages stores a batch of messages. The leader encodes every message once with
// store.AppendMessage; Apply patches STORETIMESTAMP and STOREHOST from this command
// (and the offsets the store assigns) into every record, so every replica writes the
// same bytes.
type PutMessages struct {
	StoreTimestamp int64
	StoreHost      netip.AddrPort
	// Messages are encoded stored messages. After DecodeCommand they alias the command bytes.
	Messages [][]byte
}

// TopicUpsert creates or replaces a topic's configuration.
type TopicUpsert struct{ Topic TopicConfig }

// TopicDelete removes a topic and the consumer offsets recorded for it.
type TopicDelete struct{ Topic string }

// SubscriptionGroupUpsert creates or replaces a subscription group's configuration.
type SubscriptionGroupUpsert struct{ Group SubscriptionGroupConfig }

// SubscriptionGroupDelete removes a subscription group; with CleanOffsets its consumer
// offsets go too (RocketMQ's deleteSubscriptionGroup cleanOffset).
type SubscriptionGroupDelete struct {
	Group        string
	CleanOffsets bool
}

// ConsumerOffsets commits a batch of consumer offsets (the leader coalesces commits,
// about once a second). Each entry sets, it does not max: a reset may move an offset back.
type ConsumerOffsets struct{ Offsets []OffsetEntry }

// ScheduleProgress records how far the delay-level queues of SCHEDULE_TOPIC_XXXX have
// been delivered (the leader's schedule service proposes it after each tick's re-puts).
type ScheduleProgress struct{ Levels []ScheduleEntry }

// PinSegmentSize pins the CommitLog segment size of the group. The segment size shapes
// the bytes (where blank padding goes), so a node configured differently would diverge;
// Apply compares the pinned value with the node's and stops the node on a mismatch.
type PinSegmentSize struct{ SegmentSize int64 }

// Command is one of the command structs above (pointer or value accepted by Encode;
// DecodeCommand returns pointers).
type Command interface{ commandType() CommandType }

func (PutMessages) commandType() CommandType             { return CmdPutMessages }
func (TopicUpsert) commandType() CommandType             { return CmdTopicUpsert }
func (TopicDelete) commandType() CommandType             { return CmdTopicDelete }
func (SubscriptionGroupUpsert) commandType() CommandType { return CmdSubscriptionGroupUpsert }
func (SubscriptionGroupDelete) commandType() CommandType { return CmdSubscriptionGroupDelete }
func (ConsumerOffsets) commandType() CommandType         { return CmdConsumerOffsets }
func (ScheduleProgress) commandType() CommandType        { return CmdScheduleProgress }
func (PinSegmentSize) commandType() CommandType          { return CmdPinSegmentSize }

// Type returns the command type of an encoded command (0 for an empty buffer).
func Type(b []byte) CommandType {
	if len(b) == 0 {
		return 0
	}
	return CommandType(b[0])
}

// Encode returns the raft command bytes for c, appended to dst.
func Encode(dst []byte, c Command) ([]byte, error) {
	switch c := c.(type) {
	case PutMessages:
		return AppendPutMessages(dst, c.StoreTimestamp, c.StoreHost, c.Messages)
	case *PutMessages:
		return AppendPutMessages(dst, c.StoreTimestamp, c.StoreHost, c.Messages)
	case TopicUpsert:
		return appendJSON(dst, CmdTopicUpsert, c.Topic)
	case *TopicUpsert:
		return appendJSON(dst, CmdTopicUpsert, c.Topic)
	case TopicDelete:
		return appendName(dst, CmdTopicDelete, c.Topic, 0)
	case *TopicDelete:
		return appendName(dst, CmdTopicDelete, c.Topic, 0)
	case SubscriptionGroupUpsert:
		return appendJSON(dst, CmdSubscriptionGroupUpsert, c.Group)
	case *SubscriptionGroupUpsert:
		return appendJSON(dst, CmdSubscriptionGroupUpsert, c.Group)
	case SubscriptionGroupDelete:
		return appendName(dst, CmdSubscriptionGroupDelete, c.Group, boolByte(c.CleanOffsets))
	case *SubscriptionGroupDelete:
		return appendName(dst, CmdSubscriptionGroupDelete, c.Group, boolByte(c.CleanOffsets))
	case ConsumerOffsets:
		return appendOffsets(dst, c.Offsets)
	case *ConsumerOffsets:
		return appendOffsets(dst, c.Offsets)
	case ScheduleProgress:
		return appendSchedule(dst, c.Levels), nil
	case *ScheduleProgress:
		return appendSchedule(dst, c.Levels), nil
	case PinSegmentSize:
		return appendPin(dst, c.SegmentSize), nil
	case *PinSegmentSize:
		return appendPin(dst, c.SegmentSize), nil
	case DeliverScheduled:
		return AppendDeliverScheduled(dst, &c)
	case *DeliverScheduled:
		return AppendDeliverScheduled(dst, c)
	case TransactionOps:
		return AppendTransactionOps(dst, &c)
	case *TransactionOps:
		return AppendTransactionOps(dst, c)
	case ACLSet:
		return appendACLSet(dst, &c)
	case *ACLSet:
		return appendACLSet(dst, c)
	case MemberUpsert:
		return appendJSON(dst, CmdMemberUpsert, c.Member)
	case *MemberUpsert:
		return appendJSON(dst, CmdMemberUpsert, c.Member)
	case OffsetReset:
		return appendOffsetReset(dst, &c)
	case *OffsetReset:
		return appendOffsetReset(dst, c)
	}
	return dst, fmt.Errorf("%w: %T", ErrUnknownCommand, c)
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// PutMessages payload, big-endian:
//
//	int64   storeTimestamp
//	uint8   hostAddrLen (0, 4 or 16) | addr | uint16 port
//	uint32  count
//	count × (uint32 len | len bytes)
//
// maxPutMessages bounds count so a corrupt count cannot make the decoder allocate
// gigabytes before it notices the bytes are not there (each message needs ≥ 4 bytes).
const maxPutMessages = 1 << 24

// PutMessagesSize is the encoded size of a PutMessages command; proposers use it to
// bound a batch by bytes before encoding.
func PutMessagesSize(host netip.AddrPort, msgs [][]byte) int {
	n := headerLen + 8 + 1 + hostAddrLen(host) + 2 + 4
	for _, m := range msgs {
		n += 4 + len(m)
	}
	return n
}

func hostAddrLen(h netip.AddrPort) int {
	a := h.Addr()
	switch {
	case !a.IsValid():
		return 0
	case a.Is4() || a.Is4In6():
		return 4
	}
	return 16
}

// AppendPutMessages appends an encoded PutMessages command to dst without building
// the struct (the proposer's hot path).
func AppendPutMessages(dst []byte, storeTimestamp int64, storeHost netip.AddrPort, msgs [][]byte) ([]byte, error) {
	if len(msgs) > maxPutMessages {
		return dst, fmt.Errorf("%w: %d messages in one command, limit %d", ErrBadCommand, len(msgs), maxPutMessages)
	}
	for _, m := range msgs {
		if uint64(len(m)) > math.MaxUint32 {
			return dst, fmt.Errorf("%w: message of %d bytes", ErrBadCommand, len(m))
		}
	}
	if cap(dst)-len(dst) < PutMessagesSize(storeHost, msgs) {
		nb := make([]byte, len(dst), len(dst)+PutMessagesSize(storeHost, msgs))
		copy(nb, dst)
		dst = nb
	}
	be := binary.BigEndian
	dst = append(dst, byte(CmdPutMessages), commandVersion)
	dst = be.AppendUint64(dst, uint64(storeTimestamp))
	a := storeHost.Addr()
	switch hostAddrLen(storeHost) {
	case 0:
		dst = append(dst, 0)
	case 4:
		a4 := a.Unmap().As4()
		dst = append(dst, 4)
		dst = append(dst, a4[:]...)
	default:
		a16 := a.As16()
		dst = append(dst, 16)
		dst = append(dst, a16[:]...)
	}
	dst = be.AppendUint16(dst, storeHost.Port())
	return appendMessageList(dst, msgs), nil
}

// appendMessageList appends the end of a PutMessages payload: uint32 count, then each
// message with its uint32 length. Lengths were checked by the caller.
func appendMessageList(dst []byte, msgs [][]byte) []byte {
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(len(msgs)))
	for _, m := range msgs {
		dst = be.AppendUint32(dst, uint32(len(m)))
		dst = append(dst, m...)
	}
	return dst
}

// DecodeCommand decodes one command. It never panics on bad input; every failure wraps
// ErrBadCommand or ErrUnknownCommand. Byte slices in the result alias b.
func DecodeCommand(b []byte) (Command, error) {
	if len(b) < headerLen {
		return nil, fmt.Errorf("%w: %d bytes, need at least %d", ErrBadCommand, len(b), headerLen)
	}
	t := CommandType(b[0])
	if t == 0 || (t > CmdPinSegmentSize && t != CmdDeliverScheduled && t != CmdTransactionOps && t != CmdACLSet && t != CmdMemberUpsert && t != CmdOffsetReset) {
		return nil, fmt.Errorf("%w: %d", ErrUnknownCommand, uint8(t))
	}
	if b[1] != commandVersion {
		return nil, badf(t, "version %d, this node knows %d", b[1], commandVersion)
	}
	p := b[headerLen:]
	switch t {
	case CmdPutMessages:
		var c PutMessages
		if err := decodePutMessages(p, &c); err != nil {
			return nil, err
		}
		return &c, nil
	case CmdTopicUpsert:
		var c TopicUpsert
		if err := decodeJSON(t, p, &c.Topic); err != nil {
			return nil, err
		}
		if c.Topic.Name == "" {
			return nil, badf(t, "empty topic name")
		}
		if len(c.Topic.Attributes) == 0 {
			c.Topic.Attributes = nil // "{}" and absent mean the same; keep one form
		}
		return &c, nil
	case CmdTopicDelete:
		name, _, err := decodeName(t, p)
		if err != nil {
			return nil, err
		}
		return &TopicDelete{Topic: name}, nil
	case CmdSubscriptionGroupUpsert:
		var c SubscriptionGroupUpsert
		if err := decodeJSON(t, p, &c.Group); err != nil {
			return nil, err
		}
		if c.Group.GroupName == "" {
			return nil, badf(t, "empty group name")
		}
		if len(c.Group.Attributes) == 0 {
			c.Group.Attributes = nil
		}
		return &c, nil
	case CmdSubscriptionGroupDelete:
		name, flag, err := decodeName(t, p)
		if err != nil {
			return nil, err
		}
		return &SubscriptionGroupDelete{Group: name, CleanOffsets: flag == 1}, nil
	case CmdConsumerOffsets:
		return decodeOffsets(p)
	case CmdScheduleProgress:
		return decodeSchedule(p)
	case CmdDeliverScheduled:
		return decodeDeliverScheduled(p)
	case CmdTransactionOps:
		return decodeTransactionOps(p)
	case CmdACLSet:
		return decodeACLSet(p)
	case CmdMemberUpsert:
		return decodeMemberUpsert(p)
	case CmdOffsetReset:
		return decodeOffsetReset(p)
	default: // CmdPinSegmentSize
		if len(p) != 8 {
			return nil, badf(t, "payload of %d bytes, want 8", len(p))
		}
		v := int64(binary.BigEndian.Uint64(p))
		if v <= 0 {
			return nil, badf(t, "segment size %d", v)
		}
		return &PinSegmentSize{SegmentSize: v}, nil
	}
}

func decodePutMessages(p []byte, c *PutMessages) error {
	const t = CmdPutMessages
	be := binary.BigEndian
	if len(p) < 9 {
		return badf(t, "short header")
	}
	c.StoreTimestamp = int64(be.Uint64(p))
	alen := int(p[8])
	p = p[9:]
	if alen != 0 && alen != 4 && alen != 16 {
		return badf(t, "store host address of %d bytes", alen)
	}
	if len(p) < alen+2+4 {
		return badf(t, "short store host")
	}
	var addr netip.Addr
	switch alen {
	case 4:
		addr = netip.AddrFrom4([4]byte(p[:4]))
	case 16:
		addr = netip.AddrFrom16([16]byte(p[:16]))
	}
	port := be.Uint16(p[alen:])
	if alen == 0 && port != 0 {
		return badf(t, "port %d without an address", port)
	}
	if alen != 0 {
		c.StoreHost = netip.AddrPortFrom(addr, port)
	}
	p = p[alen+2:]
	n := be.Uint32(p)
	p = p[4:]
	// Each message takes at least 4 bytes, so a count beyond len(p)/4 is a lie; check
	// before allocating.
	if n > maxPutMessages || uint64(n)*4 > uint64(len(p)) {
		return badf(t, "count %d does not fit in %d bytes", n, len(p))
	}
	c.Messages = make([][]byte, n)
	for i := range c.Messages {
		if len(p) < 4 {
			return badf(t, "message %d: short length", i)
		}
		l := be.Uint32(p)
		p = p[4:]
		if uint64(l) > uint64(len(p)) {
			return badf(t, "message %d: length %d exceeds remaining %d bytes", i, l, len(p))
		}
		c.Messages[i] = p[:l:l]
		p = p[l:]
	}
	if len(p) != 0 {
		return badf(t, "%d trailing bytes", len(p))
	}
	return nil
}

// appendJSON encodes a config as JSON: config commands are rare, and JSON keeps them
// readable and lets fields be added with zero values (encoding/json is deterministic
// for structs and sorts map keys).
func appendJSON(dst []byte, t CommandType, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return dst, fmt.Errorf("encode %s: %w", t, err)
	}
	dst = append(dst, byte(t), commandVersion)
	return append(dst, j...), nil
}

func decodeJSON(t CommandType, p []byte, v any) error {
	if err := json.Unmarshal(p, v); err != nil {
		return badf(t, "json: %v", err)
	}
	return nil
}

// name payload: uint16 len | name | uint8 flag.
func appendName(dst []byte, t CommandType, name string, flag byte) ([]byte, error) {
	if name == "" || len(name) > math.MaxUint16 {
		return dst, fmt.Errorf("%w: %s: name of %d bytes", ErrBadCommand, t, len(name))
	}
	dst = append(dst, byte(t), commandVersion)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(name)))
	dst = append(dst, name...)
	return append(dst, flag), nil
}

func decodeName(t CommandType, p []byte) (string, byte, error) {
	if len(p) < 2 {
		return "", 0, badf(t, "short name")
	}
	l := int(binary.BigEndian.Uint16(p))
	if l == 0 || len(p) != 2+l+1 {
		return "", 0, badf(t, "name length %d in %d bytes", l, len(p))
	}
	flag := p[2+l]
	if flag > 1 {
		return "", 0, badf(t, "flag %d", flag)
	}
	return string(p[2 : 2+l]), flag, nil
}

// ConsumerOffsets payload: uint32 count, then count × (uint16 len | group | uint16 len
// | topic | int32 queueId | int64 offset). Binary because it is proposed every second
// with one entry per (group, queue) that moved.
func appendOffsets(dst []byte, es []OffsetEntry) ([]byte, error) {
	dst = append(dst, byte(CmdConsumerOffsets), commandVersion)
	return appendOffsetEntries(dst, es)
}

// appendOffsetEntries is ConsumerOffsets' payload (OffsetReset's too).
func appendOffsetEntries(dst []byte, es []OffsetEntry) ([]byte, error) {
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(len(es)))
	for _, e := range es {
		if e.Group == "" || e.Topic == "" || len(e.Group) > math.MaxUint16 || len(e.Topic) > math.MaxUint16 {
			return dst, fmt.Errorf("%w: offset entry group=%q topic=%q", ErrBadCommand, e.Group, e.Topic)
		}
		dst = be.AppendUint16(dst, uint16(len(e.Group)))
		dst = append(dst, e.Group...)
		dst = be.AppendUint16(dst, uint16(len(e.Topic)))
		dst = append(dst, e.Topic...)
		dst = be.AppendUint32(dst, uint32(e.QueueID))
		dst = be.AppendUint64(dst, uint64(e.Offset))
	}
	return dst, nil
}

func decodeOffsets(p []byte) (*ConsumerOffsets, error) {
	es, err := decodeOffsetEntries(CmdConsumerOffsets, p)
	if err != nil {
		return nil, err
	}
	return &ConsumerOffsets{Offsets: es}, nil
}

// decodeOffsetEntries reads appendOffsetEntries' payload of a command of type t.
func decodeOffsetEntries(t CommandType, p []byte) ([]OffsetEntry, error) {
	be := binary.BigEndian
	if len(p) < 4 {
		return nil, badf(t, "short count")
	}
	n := be.Uint32(p)
	p = p[4:]
	const minEntry = 2 + 1 + 2 + 1 + 4 + 8
	if uint64(n)*minEntry > uint64(len(p)) {
		return nil, badf(t, "count %d does not fit in %d bytes", n, len(p))
	}
	es := make([]OffsetEntry, n)
	for i := range es {
		var g, tp string
		var ok bool
		if g, p, ok = readString16(p); !ok {
			return nil, badf(t, "entry %d: bad group", i)
		}
		if tp, p, ok = readString16(p); !ok {
			return nil, badf(t, "entry %d: bad topic", i)
		}
		if len(p) < 12 {
			return nil, badf(t, "entry %d: short", i)
		}
		es[i] = OffsetEntry{Group: g, Topic: tp, QueueID: int32(be.Uint32(p)), Offset: store.QueueOffset(be.Uint64(p[4:]))}
		p = p[12:]
	}
	if len(p) != 0 {
		return nil, badf(t, "%d trailing bytes", len(p))
	}
	return es, nil
}

func readString16(p []byte) (string, []byte, bool) {
	if len(p) < 2 {
		return "", p, false
	}
	l := int(binary.BigEndian.Uint16(p))
	if l == 0 || len(p) < 2+l {
		return "", p, false
	}
	return string(p[2 : 2+l]), p[2+l:], true
}

// ScheduleProgress payload: uint32 count, then count × (int32 level | int64 offset).
func appendSchedule(dst []byte, es []ScheduleEntry) []byte {
	be := binary.BigEndian
	dst = append(dst, byte(CmdScheduleProgress), commandVersion)
	dst = be.AppendUint32(dst, uint32(len(es)))
	for _, e := range es {
		dst = be.AppendUint32(dst, uint32(e.Level))
		dst = be.AppendUint64(dst, uint64(e.Offset))
	}
	return dst
}

func decodeSchedule(p []byte) (*ScheduleProgress, error) {
	const t = CmdScheduleProgress
	be := binary.BigEndian
	if len(p) < 4 {
		return nil, badf(t, "short count")
	}
	n := be.Uint32(p)
	p = p[4:]
	if uint64(n)*12 != uint64(len(p)) {
		return nil, badf(t, "count %d in %d bytes", n, len(p))
	}
	c := &ScheduleProgress{Levels: make([]ScheduleEntry, n)}
	for i := range c.Levels {
		c.Levels[i] = ScheduleEntry{Level: int32(be.Uint32(p)), Offset: store.QueueOffset(be.Uint64(p[4:]))}
		p = p[12:]
	}
	return c, nil
}

func appendPin(dst []byte, size int64) []byte {
	dst = append(dst, byte(CmdPinSegmentSize), commandVersion)
	return binary.BigEndian.AppendUint64(dst, uint64(size))
}
