package store

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
)

// offsetMsgIDMaxLen is the length of an offset message id for an IPv6 store host.
const offsetMsgIDMaxLen = 2 * (hostV6Len + 8)

// OffsetMsgID is RocketMQ's offset message id: uppercase hex of the store host address
// (4 or 16 bytes), its port as int32 and the physical offset as int64 (32 hex characters
// for IPv4, 56 for IPv6). Clients parse it back to find the message (END_TRANSACTION,
// VIEW_MESSAGE_BY_ID).
func OffsetMsgID(storeHost netip.AddrPort, off PhysicalOffset) string {
	var b [offsetMsgIDMaxLen]byte
	return string(AppendOffsetMsgID(b[:0], storeHost, off))
}

// AppendOffsetMsgID appends OffsetMsgID(storeHost, off) to dst and returns the extended
// slice; it allocates only when dst has to grow. The FSM formats every id of an entry
// into one buffer with it.
func AppendOffsetMsgID(dst []byte, storeHost netip.AddrPort, off PhysicalOffset) []byte {
	const digits = "0123456789ABCDEF"
	var raw [hostV6Len + 8]byte
	n := putHost(raw[:], storeHost, isV6(storeHost))
	binary.BigEndian.PutUint64(raw[n:], uint64(off))
	for _, b := range raw[:n+8] {
		dst = append(dst, digits[b>>4], digits[b&0xF])
	}
	return dst
}

// ParseOffsetMsgID reverses OffsetMsgID.
func ParseOffsetMsgID(id string) (netip.AddrPort, PhysicalOffset, error) {
	raw, err := hex.DecodeString(id)
	if err != nil {
		return netip.AddrPort{}, 0, fmt.Errorf("offset msgId %q: %w", id, err)
	}
	switch len(raw) {
	case hostV4Len + 8:
		return readHost(raw, false), PhysicalOffset(binary.BigEndian.Uint64(raw[hostV4Len:])), nil
	case hostV6Len + 8:
		return readHost(raw, true), PhysicalOffset(binary.BigEndian.Uint64(raw[hostV6Len:])), nil
	}
	return netip.AddrPort{}, 0, fmt.Errorf("offset msgId %q: %d bytes, want 16 or 28", id, len(raw))
}
