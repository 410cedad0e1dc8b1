package store

import (
	"encoding/binary"
	"net/netip"
)

// RecordView is a checked view of one stored message (the v1 or v2 layout in doc.go,
// "CommitLog"): ViewRecord walks the layout once, checking every length, and keeps the
// record with the positions of TOPIC and PROPERTIES; the accessors read the fields
// from the record itself. Building one allocates nothing and its slices alias the
// record, which keeps the append, recovery, dispatch and apply paths free of
// per-message allocations (DecodeMessage allocates two strings).
//
// It is the only parser of the layout: the CommitLog (append, recovery scan), the reput
// and DecodeMessage in this package and the FSM above it all use it. A RecordView is a
// small value and may be copied; only one returned by ViewRecord (or parseRecord)
// without an error is valid.
type RecordView struct {
	rec []byte
	// Positions in rec of the first TOPIC and the first PROPERTIES byte; every other
	// position follows from SYSFLAG (host widths) and MAGIC (TOPICLEN width). Two int32s
	// keep the view at 32 bytes, which the compiler keeps in registers: a 56-byte view
	// holding every position was copied through the stack on each return and made
	// ViewRecord take ~48 ns instead of ~10 ns (measured while writing it, see
	// docs/performance.md, issue 10).
	// Invariant (parseRecord): BODY ends before TOPICLEN, topic <= props-2 (the topic
	// ends there), props <= len(rec) == TOTALSIZE.
	topic int32
	props int32
}

// ViewRecord checks the structure of one stored message that fills rec exactly
// (TOTALSIZE == len(rec), a v1 or v2 MAGIC, every length inside the record, a topic of
// at least one byte, the fields adding up to TOTALSIZE) and returns its view. It does
// not check BODYCRC. It never panics; a failure wraps ErrCorrupt, or is ErrShortBuffer
// when rec has fewer than 8 bytes.
func ViewRecord(rec []byte) (RecordView, error) {
	v, err := parseRecord(rec)
	if err != nil {
		return v, err
	}
	if v.topic == v.props-2 {
		// Every writer (ours, Java's) refuses an empty topic; only the reput's parse and
		// DecodeMessage still accept one, as they always did (parseRecord).
		return RecordView{}, corruptf("topic length 0")
	}
	return v, nil
}

// parseRecord is the walk over the layout behind ViewRecord, without the topic rule:
// it checks structure only (the reput and DecodeMessage accept an empty topic).
func parseRecord(r []byte) (RecordView, error) {
	var v RecordView
	size, magic, err := RecordSize(r)
	if err != nil {
		return v, err
	}
	if magic != MagicV1 && magic != MagicV2 {
		return v, corruptf("magic %#x is not a message", uint32(magic))
	}
	if int64(size) != int64(len(r)) || size < fixedV1Size {
		return v, corruptf("total size %d, record holds %d bytes (minimum %d)", size, len(r), fixedV1Size)
	}
	be := binary.BigEndian
	p := bodyLenPos(int32(be.Uint32(r[posSysFlag:])))
	if p+4 > len(r) {
		return RecordView{}, corruptf("header of %d bytes exceeds total size %d", p+4, size)
	}
	bodyLen := int(int32(be.Uint32(r[p:])))
	p += 4
	if bodyLen < 0 || bodyLen > len(r)-p {
		return RecordView{}, corruptf("body length %d exceeds record of %d bytes", bodyLen, size)
	}
	p += bodyLen
	var topicLen int
	if magic == MagicV1 {
		if p+1 > len(r) {
			return RecordView{}, corruptf("topic length beyond record end")
		}
		topicLen = int(r[p])
		p++
	} else {
		if p+2 > len(r) {
			return RecordView{}, corruptf("topic length beyond record end")
		}
		topicLen = int(be.Uint16(r[p:]))
		p += 2
	}
	if topicLen > len(r)-p {
		return RecordView{}, corruptf("topic length %d does not fit the record", topicLen)
	}
	v.topic = int32(p)
	p += topicLen
	if p+2 > len(r) {
		return RecordView{}, corruptf("properties length beyond record end")
	}
	propLen := int(be.Uint16(r[p:]))
	p += 2
	if p+propLen != len(r) {
		return RecordView{}, corruptf("fields end at %d, total size says %d", p+propLen, size)
	}
	v.props = int32(p)
	v.rec = r
	return v, nil
}

// Bytes returns the record the view was built on (TOTALSIZE bytes).
func (v RecordView) Bytes() []byte { return v.rec }

// Magic returns MAGIC: MagicV1 or MagicV2.
func (v RecordView) Magic() int32 { return int32(binary.BigEndian.Uint32(v.rec[posMagic:])) }

// QueueID returns QUEUEID. The layout does not forbid a negative one; callers that
// need a real queue check it.
func (v RecordView) QueueID() int32 { return int32(binary.BigEndian.Uint32(v.rec[posQueueID:])) }

// Topic returns TOPIC; it aliases the record.
func (v RecordView) Topic() []byte { return v.rec[v.topic : v.props-2 : v.props-2] }

// StoreHost returns STOREHOST (an IPv4 address, or a 16-byte one when the field is
// IPv6-wide).
func (v RecordView) StoreHost() netip.AddrPort {
	pos, v6 := v.storeHostField()
	return readHost(v.rec[pos:], v6)
}

// StoreHostIs reports whether STOREHOST holds host as a field of this width stores
// it: unmapped in an IPv4 field, as its 16-byte form (IPv4-mapped for an IPv4 host) in
// an IPv6 one; the port compares as StoreHost reads it. A record whose
// StoreHostIs(host) needs no patch for host.
func (v RecordView) StoreHostIs(host netip.AddrPort) bool {
	pos, v6 := v.storeHostField()
	if v6 {
		b := v.rec[pos : pos+hostV6Len]
		return [16]byte(b) == host.Addr().As16() && uint16(binary.BigEndian.Uint32(b[16:])) == host.Port()
	}
	a := host.Addr().Unmap()
	if !a.Is4() {
		return false
	}
	b := v.rec[pos : pos+hostV4Len]
	return [4]byte(b) == a.As4() && uint16(binary.BigEndian.Uint32(b[4:])) == host.Port()
}

// AppendWithStoreHost appends a copy of the record to dst with STOREHOST set to host
// (the record itself is not modified) and returns the extended dst. It reports false,
// leaving dst as it was, when host needs a field of the other width (AppendMessage
// writes IPv6-wide fields only for addresses that are not IPv4 or IPv4-mapped):
// changing the width moves every later field, so such a record must be re-encoded
// (DecodeMessage, set StoreHost, AppendMessage). An invalid host is written as
// 0.0.0.0 with its port, as AppendMessage does.
func (v RecordView) AppendWithStoreHost(dst []byte, host netip.AddrPort) ([]byte, bool) {
	pos, v6 := v.storeHostField()
	if isV6(host) != v6 {
		return dst, false
	}
	start := len(dst)
	dst = append(dst, v.rec...)
	putHost(dst[start+pos:], host, v6)
	return dst, true
}

// Positions that move with the host widths in SYSFLAG (doc.go's "+" rows).

// storeTimestampAt is where STORETIMESTAMP sits: after BORNHOST. STOREHOST follows it.
func storeTimestampAt(sysFlag int32) int {
	return posBornHost + hostLen(sysFlag&SysFlagBornHostV6 != 0)
}

// bodyLenPos is where BODYLEN sits: after STOREHOST, RECONSUMETIMES and PREPARED
// TRANSACTION OFFSET.
func bodyLenPos(sysFlag int32) int {
	return storeTimestampAt(sysFlag) + 8 + hostLen(sysFlag&SysFlagStoreHostV6 != 0) + 4 + 8
}

// The accessors below serve this package's own paths (append, recovery, reput,
// DecodeMessage); the FSM has no use for them.

func (v RecordView) sysFlag() int32 { return int32(binary.BigEndian.Uint32(v.rec[posSysFlag:])) }

func (v RecordView) storeHostV6() bool { return v.sysFlag()&SysFlagStoreHostV6 != 0 }

// storeHostField returns where STOREHOST sits and whether it is IPv6-wide.
func (v RecordView) storeHostField() (int, bool) {
	f := v.sysFlag()
	return storeTimestampAt(f) + 8, f&SysFlagStoreHostV6 != 0
}

func (v RecordView) queueOffset() QueueOffset {
	return QueueOffset(binary.BigEndian.Uint64(v.rec[posQueueOffset:]))
}

func (v RecordView) physicalOffset() PhysicalOffset {
	return PhysicalOffset(binary.BigEndian.Uint64(v.rec[posPhysicalOffset:]))
}

func (v RecordView) bodyCRC() int32 { return int32(binary.BigEndian.Uint32(v.rec[posBodyCRC:])) }

func (v RecordView) storeTimestamp() int64 { return StoreTimestampOf(v.rec) }

// bodyBytes returns BODY: it ends where TOPICLEN (1 byte in v1, 2 in v2) starts.
func (v RecordView) bodyBytes() []byte {
	end := int(v.topic) - 1
	if v.Magic() == MagicV2 {
		end--
	}
	return v.rec[bodyLenPos(v.sysFlag())+4 : end : end]
}

func (v RecordView) propsBytes() []byte { return v.rec[v.props:] }
