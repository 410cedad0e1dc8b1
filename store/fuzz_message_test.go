package store

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"reflect"
	"testing"
)

// FuzzDecodeMessage: DecodeMessage never panics on any bytes, and a v1 record it
// accepts (with its CRC) re-encodes to the same bytes. The record view (ViewRecord and
// the reput's viewDispatched) never panics either and accepts exactly what
// DecodeMessage accepts of a whole record, less its own rules (checkView). Seeds:
// testdata/fuzz/FuzzDecodeMessage.
func FuzzDecodeMessage(f *testing.F) {
	m := sampleMessage()
	if rec, err := AppendMessage(nil, &m); err == nil {
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkView(t, b)
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

// checkView checks the record view of b against DecodeMessage: ViewRecord accepts b
// exactly when DecodeMessage does, b is one whole record and its topic is not empty;
// viewDispatched exactly when b is whole and the queue id is not negative. An accepted
// view reads the fields DecodeMessage decodes, and AppendWithStoreHost changes STOREHOST
// and nothing else.
func checkView(t *testing.T, b []byte) {
	t.Helper()
	v, verr := ViewRecord(b)
	dv, derr := viewDispatched(b)
	m, merr := DecodeMessage(b, false)
	whole := merr == nil && int(m.StoreSize) == len(b)
	if want := whole && m.Topic != ""; (verr == nil) != want {
		t.Fatalf("ViewRecord err %v, DecodeMessage err %v (size %d of %d bytes, topic %q)", verr, merr, m.StoreSize, len(b), m.Topic)
	}
	if want := whole && m.QueueID >= 0; (derr == nil) != want {
		t.Fatalf("viewDispatched err %v, DecodeMessage err %v (size %d of %d bytes, queue %d)", derr, merr, m.StoreSize, len(b), m.QueueID)
	}
	if derr == nil && (string(dv.Topic()) != m.Topic || dv.QueueID() != m.QueueID || dv.queueOffset() != m.QueueOffset ||
		dv.physicalOffset() != m.PhysicalOffset || dv.sysFlag() != m.SysFlag || dv.storeTimestamp() != m.StoreTimestamp ||
		string(dv.propsBytes()) != m.Properties) {
		t.Fatalf("viewDispatched fields differ from the decoded %+v", m)
	}
	if verr != nil {
		return
	}
	if !bytes.Equal(v.Bytes(), b) || string(v.Topic()) != m.Topic || v.QueueID() != m.QueueID ||
		v.StoreHost() != m.StoreHost || !v.StoreHostIs(m.StoreHost) || v.Magic() != int32(binary.BigEndian.Uint32(b[posMagic:])) {
		t.Fatalf("view fields differ from the decoded %+v", m)
	}
	host := netip.MustParseAddrPort("192.0.2.1:7")
	if v.storeHostV6() {
		host = netip.MustParseAddrPort("[2001:db8::7]:7")
	}
	cp, ok := v.AppendWithStoreHost(nil, host)
	if !ok {
		t.Fatalf("AppendWithStoreHost(%v) refused a field of the same width", host)
	}
	m2, err := DecodeMessage(cp, false)
	if err != nil {
		t.Fatalf("decode after AppendWithStoreHost: %v", err)
	}
	if m2.StoreHost != host {
		t.Fatalf("STOREHOST %v after AppendWithStoreHost(%v)", m2.StoreHost, host)
	}
	m2.StoreHost = m.StoreHost
	if !reflect.DeepEqual(m, m2) {
		t.Fatalf("AppendWithStoreHost changed more than STOREHOST:\n%+v\n%+v", m, m2)
	}
	if !bytes.Equal(v.Bytes(), b) {
		t.Fatal("AppendWithStoreHost modified the viewed record")
	}
}
