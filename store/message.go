package store

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/netip"
)

// SysFlag bits (rocketmq-protocol.md §4.2) that change the stored layout or meaning.
const (
	SysFlagCompressed      int32 = 0x1
	SysFlagMultiTags       int32 = 0x2
	SysFlagTxPrepared      int32 = 0x4
	SysFlagTxCommit        int32 = 0x8
	SysFlagTxRollback      int32 = 0xC
	SysFlagTxMask          int32 = 0xC
	SysFlagBornHostV6      int32 = 0x10
	SysFlagStoreHostV6     int32 = 0x20
	SysFlagNeedUnwrap      int32 = 0x40
	SysFlagInnerBatch      int32 = 0x80
	sysFlagHostV6Mask            = SysFlagBornHostV6 | SysFlagStoreHostV6
	sysFlagV6BitsClearMask       = ^sysFlagHostV6Mask
)

// Fixed field positions of the v1 layout. Everything up to BORNHOST is at a fixed
// position; later fields move by 12 bytes for each IPv6 host.
const (
	posTotalSize      = 0
	posMagic          = 4
	posBodyCRC        = 8
	posQueueID        = 12
	posFlag           = 16
	posQueueOffset    = 20
	posPhysicalOffset = 28
	posSysFlag        = 36
	posBornTimestamp  = 40
	posBornHost       = 48

	hostV4Len = 8  // 4-byte address + int32 port
	hostV6Len = 20 // 16-byte address + int32 port

	// fixedV1Size is the size of a v1 record with IPv4 hosts and empty body, topic and
	// properties (rocketmq-protocol.md §4.1: 91 + body + topic + props).
	fixedV1Size = 91
)

// Message is a decoded stored message. Body and Properties alias the bytes it was
// decoded from when it came from DecodeMessage; callers that keep them past the life of
// those bytes must copy.
type Message struct {
	Topic                     string
	QueueID                   int32
	Flag                      int32
	QueueOffset               QueueOffset
	PhysicalOffset            PhysicalOffset
	SysFlag                   int32
	BornTimestamp             int64
	BornHost                  netip.AddrPort
	StoreTimestamp            int64
	StoreHost                 netip.AddrPort
	ReconsumeTimes            int32
	PreparedTransactionOffset int64
	Body                      []byte
	// Properties is the encoded property string: name 0x01 value 0x02, repeated.
	Properties string
	// BodyCRC is the stored CRC (filled by DecodeMessage; computed by AppendMessage).
	BodyCRC int32
	// StoreSize is TOTALSIZE (filled by DecodeMessage).
	StoreSize int32
}

// BodyCRC is RocketMQ's body checksum: CRC32 (IEEE) masked to a non-negative int32
// (Java UtilAll.crc32).
func BodyCRC(body []byte) int32 {
	return int32(crc32.ChecksumIEEE(body) & 0x7FFFFFFF)
}

func hostLen(v6 bool) int {
	if v6 {
		return hostV6Len
	}
	return hostV4Len
}

func isV6(a netip.AddrPort) bool {
	addr := a.Addr()
	return addr.IsValid() && !addr.Is4() && !addr.Is4In6()
}

// EncodedSize is the number of bytes AppendMessage writes for m.
func (m *Message) EncodedSize() int {
	return fixedV1Size + len(m.Body) + len(m.Topic) + len(m.Properties) +
		hostLen(isV6(m.BornHost)) - hostV4Len + hostLen(isV6(m.StoreHost)) - hostV4Len
}

// Validate checks the limits the v1 layout imposes.
func (m *Message) Validate() error {
	switch {
	case len(m.Topic) == 0:
		return fmt.Errorf("%w: empty topic", ErrMessageIllegal)
	case len(m.Topic) > MaxTopicLength:
		return fmt.Errorf("%w: topic %d bytes, limit %d", ErrMessageIllegal, len(m.Topic), MaxTopicLength)
	case len(m.Properties) > MaxPropertiesLength:
		return fmt.Errorf("%w: properties %d bytes, limit %d", ErrMessageIllegal, len(m.Properties), MaxPropertiesLength)
	case m.QueueID < 0:
		return fmt.Errorf("%w: queueId %d is negative", ErrMessageIllegal, m.QueueID)
	}
	return nil
}

// AppendMessage appends m in the RocketMQ v1 stored layout to dst. It sets the IPv6
// sysflag bits from the host addresses and computes BODYCRC; all other fields are
// written as given (QUEUEOFFSET and PHYSICALOFFSET are patched at append time).
func AppendMessage(dst []byte, m *Message) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return dst, err
	}
	bornV6, storeV6 := isV6(m.BornHost), isV6(m.StoreHost)
	sysFlag := m.SysFlag & sysFlagV6BitsClearMask
	if bornV6 {
		sysFlag |= SysFlagBornHostV6
	}
	if storeV6 {
		sysFlag |= SysFlagStoreHostV6
	}
	size := m.EncodedSize()
	start := len(dst)
	dst = grow(dst, size)
	b := dst[start : start+size]
	be := binary.BigEndian
	be.PutUint32(b[posTotalSize:], uint32(size))
	magicV1 := MagicV1
	be.PutUint32(b[posMagic:], uint32(magicV1))
	be.PutUint32(b[posBodyCRC:], uint32(BodyCRC(m.Body)))
	be.PutUint32(b[posQueueID:], uint32(m.QueueID))
	be.PutUint32(b[posFlag:], uint32(m.Flag))
	be.PutUint64(b[posQueueOffset:], uint64(m.QueueOffset))
	be.PutUint64(b[posPhysicalOffset:], uint64(m.PhysicalOffset))
	be.PutUint32(b[posSysFlag:], uint32(sysFlag))
	be.PutUint64(b[posBornTimestamp:], uint64(m.BornTimestamp))
	p := posBornHost
	p += putHost(b[p:], m.BornHost, bornV6)
	be.PutUint64(b[p:], uint64(m.StoreTimestamp))
	p += 8
	p += putHost(b[p:], m.StoreHost, storeV6)
	be.PutUint32(b[p:], uint32(m.ReconsumeTimes))
	p += 4
	be.PutUint64(b[p:], uint64(m.PreparedTransactionOffset))
	p += 8
	be.PutUint32(b[p:], uint32(len(m.Body)))
	p += 4
	p += copy(b[p:], m.Body)
	b[p] = byte(len(m.Topic))
	p++
	p += copy(b[p:], m.Topic)
	be.PutUint16(b[p:], uint16(len(m.Properties)))
	p += 2
	p += copy(b[p:], m.Properties)
	if p != size {
		panic(fmt.Sprintf("store: encoded %d bytes, computed size %d (broken size formula)", p, size))
	}
	return dst, nil
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, 2*cap(b)+n)
	copy(nb, b)
	return nb
}

func putHost(b []byte, host netip.AddrPort, v6 bool) int {
	addr := host.Addr()
	if v6 {
		*(*[16]byte)(b) = addr.As16() // fixed-size stores, no memmove call
		binary.BigEndian.PutUint32(b[16:], uint32(host.Port()))
		return hostV6Len
	}
	var a [4]byte
	if addr.IsValid() {
		a = addr.Unmap().As4()
	}
	*(*[4]byte)(b) = a
	binary.BigEndian.PutUint32(b[4:], uint32(host.Port()))
	return hostV4Len
}

func readHost(b []byte, v6 bool) netip.AddrPort {
	if v6 {
		var a [16]byte
		copy(a[:], b[:16])
		return netip.AddrPortFrom(netip.AddrFrom16(a), uint16(binary.BigEndian.Uint32(b[16:])))
	}
	var a [4]byte
	copy(a[:], b[:4])
	return netip.AddrPortFrom(netip.AddrFrom4(a), uint16(binary.BigEndian.Uint32(b[4:])))
}

// RecordSize reads TOTALSIZE and MAGIC at the start of b without decoding the rest.
func RecordSize(b []byte) (size int32, magic int32, err error) {
	if len(b) < 8 {
		return 0, 0, ErrShortBuffer
	}
	return int32(binary.BigEndian.Uint32(b[posTotalSize:])), int32(binary.BigEndian.Uint32(b[posMagic:])), nil
}

// DecodeMessage decodes one stored message (v1 or v2) that starts at b[0]. It checks
// the structure as parseRecord does (every length inside TOTALSIZE, the fields adding
// up to it exactly; an empty topic is accepted) and, when checkCRC is set, that BODYCRC
// matches. Body aliases b.
func DecodeMessage(b []byte, checkCRC bool) (Message, error) {
	var m Message
	size, magic, err := RecordSize(b)
	if err != nil {
		return m, err
	}
	if magic != MagicV1 && magic != MagicV2 {
		return m, corruptf("magic %#x is not a message", uint32(magic))
	}
	if size < fixedV1Size || int(size) > len(b) {
		if size >= fixedV1Size {
			return m, fmt.Errorf("%w: record of %d bytes, %d available", ErrShortBuffer, size, len(b))
		}
		return m, corruptf("total size %d below minimum %d", size, fixedV1Size)
	}
	v, err := parseRecord(b[:size])
	if err != nil {
		return m, err
	}
	r := v.rec
	be := binary.BigEndian
	m.StoreSize = size
	m.BodyCRC = int32(be.Uint32(r[posBodyCRC:]))
	m.QueueID = int32(be.Uint32(r[posQueueID:]))
	m.Flag = int32(be.Uint32(r[posFlag:]))
	m.QueueOffset = QueueOffset(be.Uint64(r[posQueueOffset:]))
	m.PhysicalOffset = PhysicalOffset(be.Uint64(r[posPhysicalOffset:]))
	m.SysFlag = int32(be.Uint32(r[posSysFlag:]))
	m.BornTimestamp = int64(be.Uint64(r[posBornTimestamp:]))
	bornV6, storeV6 := m.SysFlag&SysFlagBornHostV6 != 0, m.SysFlag&SysFlagStoreHostV6 != 0
	// parseRecord checked that these fixed-width fields lie inside the record.
	p := posBornHost
	m.BornHost = readHost(r[p:], bornV6)
	p += hostLen(bornV6)
	m.StoreTimestamp = int64(be.Uint64(r[p:]))
	p += 8
	m.StoreHost = readHost(r[p:], storeV6)
	p += hostLen(storeV6)
	m.ReconsumeTimes = int32(be.Uint32(r[p:]))
	p += 4
	m.PreparedTransactionOffset = int64(be.Uint64(r[p:]))
	p += 8
	bodyLen := int(int32(be.Uint32(r[p:])))
	p += 4
	m.Body = r[p : p+bodyLen : p+bodyLen]
	m.Topic = string(v.Topic())
	m.Properties = string(v.propsBytes())
	if checkCRC && BodyCRC(m.Body) != m.BodyCRC {
		return m, corruptf("body CRC %d, stored %d", BodyCRC(m.Body), m.BodyCRC)
	}
	return m, nil
}

// PatchOffsets writes the queue offset and physical offset into an encoded record.
// The replicated path encodes once on the leader and patches these in Apply.
func PatchOffsets(rec []byte, qo QueueOffset, po PhysicalOffset) {
	binary.BigEndian.PutUint64(rec[posQueueOffset:], uint64(qo))
	binary.BigEndian.PutUint64(rec[posPhysicalOffset:], uint64(po))
}

// storeTimestampPos is where STORETIMESTAMP sits, which depends on the born host width.
func storeTimestampPos(rec []byte) int {
	return storeTimestampAt(int32(binary.BigEndian.Uint32(rec[posSysFlag:])))
}

// PatchStoreTimestamp writes STORETIMESTAMP into an encoded record.
func PatchStoreTimestamp(rec []byte, ts int64) {
	binary.BigEndian.PutUint64(rec[storeTimestampPos(rec):], uint64(ts))
}

// StoreTimestampOf reads STORETIMESTAMP from an encoded record.
func StoreTimestampOf(rec []byte) int64 {
	return int64(binary.BigEndian.Uint64(rec[storeTimestampPos(rec):]))
}

// QueueOffsetOf and PhysicalOffsetOf read the patched offsets of an encoded record.
func QueueOffsetOf(rec []byte) QueueOffset {
	return QueueOffset(binary.BigEndian.Uint64(rec[posQueueOffset:]))
}

// PhysicalOffsetOf reads PHYSICALOFFSET of an encoded record.
func PhysicalOffsetOf(rec []byte) PhysicalOffset {
	return PhysicalOffset(binary.BigEndian.Uint64(rec[posPhysicalOffset:]))
}
