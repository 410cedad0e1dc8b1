package store

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzDecodeMessage: DecodeMessage never panics on any bytes, and a v1 record it
// accepts (with its CRC) re-encodes to the same bytes. Seeds: testdata/fuzz/FuzzDecodeMessage.
func FuzzDecodeMessage(f *testing.F) {
	m := sampleMessage()
	if rec, err := AppendMessage(nil, &m); err == nil {
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseDispatchFields(b) // the dispatch parser must not panic either
		m, err := DecodeMessage(b, true)
		if err != nil {
			return
		}
		if int(m.StoreSize) > len(b) {
			t.Fatalf("decoded size %d beyond %d bytes", m.StoreSize, len(b))
		}
		rec := b[:m.StoreSize]
		if int32(binary.BigEndian.Uint32(rec[posMagic:])) != MagicV1 || m.Validate() != nil {
			return // v2, or a record our encoder refuses to write (topic > 127, ...)
		}
		// The IPv6 flags are derived from the addresses when encoding; an IPv4-mapped
		// address under a v6 flag (never written by Java, which maps it to IPv4) cannot
		// round-trip.
		if (m.SysFlag&SysFlagBornHostV6 != 0) != isV6(m.BornHost) || (m.SysFlag&SysFlagStoreHostV6 != 0) != isV6(m.StoreHost) {
			return
		}
		// Ports are int32 on disk but 16-bit in netip; Java never writes one above 65535.
		if !portsFit(rec, m.SysFlag) {
			return
		}
		again, err := AppendMessage(nil, &m)
		if err != nil {
			t.Fatalf("re-encode of a decoded message: %v", err)
		}
		if !bytes.Equal(again, rec) {
			t.Fatalf("re-encoded bytes differ:\n got %x\nwant %x", again, rec)
		}
	})
}

// portsFit reports whether both host port fields of a v1 record hold 16-bit values.
func portsFit(rec []byte, sysFlag int32) bool {
	bornLen := hostLen(sysFlag&SysFlagBornHostV6 != 0)
	storeLen := hostLen(sysFlag&SysFlagStoreHostV6 != 0)
	bornPort := binary.BigEndian.Uint32(rec[posBornHost+bornLen-4:])
	storePos := posBornHost + bornLen + 8
	storePort := binary.BigEndian.Uint32(rec[storePos+storeLen-4:])
	return bornPort <= 0xFFFF && storePort <= 0xFFFF
}
