package store

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"
)

// OffsetMsgID is RocketMQ's offset message id: uppercase hex of the store host address
// (4 or 16 bytes), its port as int32 and the physical offset as int64 (32 hex characters
// for IPv4, 56 for IPv6). Clients parse it back to find the message (END_TRANSACTION,
// VIEW_MESSAGE_BY_ID).
func OffsetMsgID(storeHost netip.AddrPort, off PhysicalOffset) string {
	var b [28]byte
	n := putHost(b[:], storeHost, isV6(storeHost))
	binary.BigEndian.PutUint64(b[n:], uint64(off))
	return strings.ToUpper(hex.EncodeToString(b[:n+8]))
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
