package fsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/rocketraft/rocketraft/store"
)

// errRecord reports an encoded message that is not a well-formed v1 stored message.
var errRecord = errors.New("malformed record")

// Positions of the RocketMQ v1 stored layout (rocketmq-protocol.md §4.1) that Apply
// needs. store keeps its own parser unexported; this is the minimal, allocation-free
// view Apply takes of each message (topic for the metadata check, STOREHOST to patch).
// TestRecordViewMatchesStore ties it to store.AppendMessage/DecodeMessage.
const (
	recPosMagic   = 4
	recPosQueueID = 12
	recPosSysFlag = 36
	recPosBorn    = 48
	recMinSize    = 91
	recHostV4     = 8  // 4-byte address + int32 port
	recHostV6     = 20 // 16-byte address + int32 port
)

type recordView struct {
	topic        []byte // aliases the record
	queueID      int32
	storeHostPos int
	storeHostV6  bool
}

func hostFieldLen(v6 bool) int {
	if v6 {
		return recHostV6
	}
	return recHostV4
}

// viewRecord checks the structure of one encoded message (v1 magic, lengths that add up
// to TOTALSIZE == len(rec)) and returns the fields Apply needs. It never panics.
func viewRecord(rec []byte) (recordView, error) {
	var v recordView
	be := binary.BigEndian
	if len(rec) < recMinSize {
		return v, fmt.Errorf("%w: %d bytes, minimum %d", errRecord, len(rec), recMinSize)
	}
	if size := int64(int32(be.Uint32(rec))); size != int64(len(rec)) {
		return v, fmt.Errorf("%w: total size %d, record has %d bytes", errRecord, size, len(rec))
	}
	if magic := int32(be.Uint32(rec[recPosMagic:])); magic != store.MagicV1 {
		return v, fmt.Errorf("%w: magic %#x is not v1", errRecord, uint32(magic))
	}
	v.queueID = int32(be.Uint32(rec[recPosQueueID:]))
	if v.queueID < 0 {
		return v, fmt.Errorf("%w: queue id %d", errRecord, v.queueID)
	}
	sysFlag := int32(be.Uint32(rec[recPosSysFlag:]))
	bornV6 := sysFlag&store.SysFlagBornHostV6 != 0
	v.storeHostV6 = sysFlag&store.SysFlagStoreHostV6 != 0
	v.storeHostPos = recPosBorn + hostFieldLen(bornV6) + 8 // + STORETIMESTAMP
	p := v.storeHostPos + hostFieldLen(v.storeHostV6) + 4 + 8
	if p+4 > len(rec) {
		return v, fmt.Errorf("%w: header exceeds %d bytes", errRecord, len(rec))
	}
	bodyLen := int64(int32(be.Uint32(rec[p:])))
	p += 4
	if bodyLen < 0 || bodyLen > int64(len(rec)-p) {
		return v, fmt.Errorf("%w: body length %d", errRecord, bodyLen)
	}
	p += int(bodyLen)
	if p+1 > len(rec) {
		return v, fmt.Errorf("%w: no topic length", errRecord)
	}
	topicLen := int(rec[p])
	p++
	if topicLen == 0 || topicLen > len(rec)-p {
		return v, fmt.Errorf("%w: topic length %d", errRecord, topicLen)
	}
	v.topic = rec[p : p+topicLen]
	p += topicLen
	if p+2 > len(rec) {
		return v, fmt.Errorf("%w: no properties length", errRecord)
	}
	p += 2 + int(be.Uint16(rec[p:]))
	if p != len(rec) {
		return v, fmt.Errorf("%w: fields end at %d, total size %d", errRecord, p, len(rec))
	}
	return v, nil
}

// storeHostOf reads STOREHOST of a viewed record.
func storeHostOf(rec []byte, v recordView) netip.AddrPort {
	b := rec[v.storeHostPos:]
	if v.storeHostV6 {
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[:16])), uint16(binary.BigEndian.Uint32(b[16:])))
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[:4])), uint16(binary.BigEndian.Uint32(b[4:])))
}

// putStoreHost writes host into a record whose STOREHOST field has the matching width.
func putStoreHost(rec []byte, v recordView, host netip.AddrPort) {
	b := rec[v.storeHostPos:]
	if v.storeHostV6 {
		a := host.Addr().As16()
		copy(b, a[:])
		binary.BigEndian.PutUint32(b[16:], uint32(host.Port()))
		return
	}
	a := host.Addr().Unmap().As4()
	copy(b, a[:])
	binary.BigEndian.PutUint32(b[4:], uint32(host.Port()))
}

func hostIsV6(h netip.AddrPort) bool {
	a := h.Addr()
	return a.IsValid() && !a.Is4() && !a.Is4In6()
}
