package store

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

var viewHosts = []netip.AddrPort{
	netip.MustParseAddrPort("10.0.0.1:10911"),
	netip.MustParseAddrPort("[2001:db8::9]:80"),
}

func viewRec(t testing.TB, born, store netip.AddrPort) (Message, []byte) {
	t.Helper()
	m := Message{Topic: "TopicX", QueueID: 5, Flag: 3, QueueOffset: 77, PhysicalOffset: 1 << 33, SysFlag: SysFlagTxCommit,
		BornTimestamp: 1700000000001, BornHost: born, StoreTimestamp: 1700000000002, StoreHost: store,
		ReconsumeTimes: 4, PreparedTransactionOffset: 99, Body: []byte("body"), Properties: "a\x01b\x02"}
	rec, err := AppendMessage(nil, &m)
	if err != nil {
		t.Fatal(err)
	}
	return m, rec
}

// v2Record re-lays rec (v1, from AppendMessage) as v2: MAGIC v2 and a 2-byte TOPICLEN.
func v2Record(t testing.TB, rec []byte, m Message) []byte {
	t.Helper()
	topicLenPos := len(rec) - 2 - len(m.Properties) - len(m.Topic) - 1
	out := make([]byte, 0, len(rec)+1)
	out = append(out, rec[:topicLenPos]...)
	out = binary.BigEndian.AppendUint16(out, uint16(len(m.Topic)))
	out = append(out, rec[topicLenPos+1:]...)
	binary.BigEndian.PutUint32(out[posTotalSize:], uint32(len(out)))
	v2 := MagicV2
	binary.BigEndian.PutUint32(out[posMagic:], uint32(v2))
	return out
}

func TestViewRecordReadsWhatAppendMessageWrote(t *testing.T) {
	for _, born := range viewHosts {
		for _, sh := range viewHosts {
			m, v1 := viewRec(t, born, sh)
			for name, rec := range map[string][]byte{"v1": v1, "v2": v2Record(t, v1, m)} {
				v, err := ViewRecord(rec)
				if err != nil {
					t.Fatalf("born=%v store=%v %s: %v", born, sh, name, err)
				}
				if !bytes.Equal(v.Bytes(), rec) || string(v.Topic()) != m.Topic || v.QueueID() != m.QueueID || v.StoreHost() != sh {
					t.Errorf("born=%v store=%v %s: topic %q queue %d host %v", born, sh, name, v.Topic(), v.QueueID(), v.StoreHost())
				}
				wantMagic := MagicV1
				if name == "v2" {
					wantMagic = MagicV2
				}
				if v.Magic() != wantMagic || !v.StoreHostIs(sh) || v.queueOffset() != m.QueueOffset ||
					v.physicalOffset() != m.PhysicalOffset || v.storeTimestamp() != m.StoreTimestamp ||
					v.sysFlag()&^sysFlagHostV6Mask != m.SysFlag || !bytes.Equal(v.bodyBytes(), m.Body) ||
					string(v.propsBytes()) != m.Properties || v.bodyCRC() != BodyCRC(m.Body) {
					t.Errorf("born=%v store=%v %s: view fields differ from %+v", born, sh, name, m)
				}
				d, err := DecodeMessage(rec, true)
				if err != nil || d.Topic != m.Topic || d.ReconsumeTimes != m.ReconsumeTimes ||
					d.PreparedTransactionOffset != m.PreparedTransactionOffset || d.BornHost != born || d.StoreHost != sh ||
					d.Flag != m.Flag || d.BornTimestamp != m.BornTimestamp || string(d.Body) != string(m.Body) {
					t.Errorf("born=%v store=%v %s: decoded %+v %v", born, sh, name, d, err)
				}
			}
		}
	}
}

func TestViewRecordAllocatesNothing(t *testing.T) {
	_, rec := viewRec(t, viewHosts[0], viewHosts[1])
	var sink int
	if n := testing.AllocsPerRun(100, func() {
		v, err := ViewRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		sink += len(v.Topic()) + int(v.QueueID())
	}); n != 0 {
		t.Errorf("ViewRecord allocates %.0f times", n)
	}
	_ = sink
}

// TestViewRecordRejectsMalformed: every prefix and extension of a record, and each
// length field broken, is an error wrapping ErrCorrupt or ErrShortBuffer, never a panic
// and never a view.
func TestViewRecordRejectsMalformed(t *testing.T) {
	check := func(name string, b []byte) {
		t.Helper()
		v, err := ViewRecord(b)
		if err == nil {
			t.Fatalf("%s: accepted (%d bytes)", name, len(b))
		}
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrShortBuffer) {
			t.Errorf("%s: error %v wraps neither ErrCorrupt nor ErrShortBuffer", name, err)
		}
		if v.Bytes() != nil {
			t.Errorf("%s: a failed view holds bytes", name)
		}
	}
	for _, born := range viewHosts {
		for _, sh := range viewHosts {
			m, v1 := viewRec(t, born, sh)
			for name, rec := range map[string][]byte{"v1": v1, "v2": v2Record(t, v1, m)} {
				for cut := range len(rec) {
					check(name+" cut", rec[:cut])
				}
				// A prefix with TOTALSIZE patched to match: the fields no longer add up.
				for cut := 8; cut < len(rec); cut++ {
					b := bytes.Clone(rec[:cut])
					binary.BigEndian.PutUint32(b, uint32(cut))
					check(name+" cut and resized", b)
				}
				check(name+" extra byte", append(bytes.Clone(rec), 0))
				topicLenSize := 1
				if name == "v2" {
					topicLenSize = 2
				}
				propLenPos := len(rec) - 2 - len(m.Properties)
				topicLenPos := propLenPos - len(m.Topic) - topicLenSize
				bodyLenPos := topicLenPos - len(m.Body) - 4
				mutate := map[string]func(b []byte){
					"magic":             func(b []byte) { b[posMagic] ^= 0xFF },
					"blank magic":       func(b []byte) { mb := MagicBlank; binary.BigEndian.PutUint32(b[posMagic:], uint32(mb)) },
					"total size +1":     func(b []byte) { binary.BigEndian.PutUint32(b, uint32(len(b)+1)) },
					"total size -1":     func(b []byte) { binary.BigEndian.PutUint32(b, uint32(len(b)-1)) },
					"negative size":     func(b []byte) { binary.BigEndian.PutUint32(b, 0xFFFFFFF0) },
					"negative body len": func(b []byte) { binary.BigEndian.PutUint32(b[bodyLenPos:], 0xFFFFFFFF) },
					"huge body len":     func(b []byte) { binary.BigEndian.PutUint32(b[bodyLenPos:], 0x7FFFFFFF) },
					"body len +1":       func(b []byte) { binary.BigEndian.PutUint32(b[bodyLenPos:], uint32(len(m.Body)+1)) },
					"body len -1":       func(b []byte) { binary.BigEndian.PutUint32(b[bodyLenPos:], uint32(len(m.Body)-1)) },
					"props len +1":      func(b []byte) { binary.BigEndian.PutUint16(b[propLenPos:], uint16(len(m.Properties)+1)) },
					"props len max":     func(b []byte) { binary.BigEndian.PutUint16(b[propLenPos:], 0xFFFF) },
					"store host flag":   func(b []byte) { b[posSysFlag+3] ^= byte(SysFlagStoreHostV6) },
					"born host flag":    func(b []byte) { b[posSysFlag+3] ^= byte(SysFlagBornHostV6) },
				}
				if name == "v1" {
					mutate["topic len +1"] = func(b []byte) { b[topicLenPos]++ }
					mutate["topic len 0"] = func(b []byte) { b[topicLenPos] = 0 }
					mutate["topic len max"] = func(b []byte) { b[topicLenPos] = 0xFF }
				} else {
					mutate["topic len +1"] = func(b []byte) { binary.BigEndian.PutUint16(b[topicLenPos:], uint16(len(m.Topic)+1)) }
					mutate["topic len max"] = func(b []byte) { binary.BigEndian.PutUint16(b[topicLenPos:], 0xFFFF) }
				}
				for what, f := range mutate {
					b := bytes.Clone(rec)
					f(b)
					check(name+" "+what, b)
				}
			}
		}
	}
	check("nil", nil)
	check("zero segment tail", make([]byte, 200))
	blank := make([]byte, 64)
	putBlank(blank, 64)
	check("blank record", blank)
}

// TestEmptyTopicIsStructureOnly: the layout can carry an empty topic. ViewRecord
// (append, recovery, the FSM) refuses it; the reput's parse and DecodeMessage accept it
// as they always did.
func TestEmptyTopicIsStructureOnly(t *testing.T) {
	m, rec := viewRec(t, viewHosts[0], viewHosts[0])
	topicLenPos := len(rec) - 2 - len(m.Properties) - len(m.Topic) - 1
	b := append(bytes.Clone(rec[:topicLenPos]), 0)
	b = append(b, rec[topicLenPos+1+len(m.Topic):]...)
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	if _, err := ViewRecord(b); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ViewRecord of an empty topic: %v", err)
	}
	if v, err := viewDispatched(b); err != nil || len(v.Topic()) != 0 {
		t.Errorf("viewDispatched of an empty topic: %v", err)
	}
	if d, err := DecodeMessage(b, true); err != nil || d.Topic != "" || d.Properties != m.Properties {
		t.Errorf("DecodeMessage of an empty topic: %+v %v", d, err)
	}
	neg := bytes.Clone(rec)
	binary.BigEndian.PutUint32(neg[posQueueID:], 0xFFFFFFFF)
	if v, err := ViewRecord(neg); err != nil || v.QueueID() != -1 {
		t.Errorf("ViewRecord of queue id -1: %v", err)
	}
	if _, err := viewDispatched(neg); !errors.Is(err, ErrCorrupt) {
		t.Errorf("viewDispatched of queue id -1: %v", err)
	}
}

func TestAppendWithStoreHost(t *testing.T) {
	v4b := netip.MustParseAddrPort("10.1.2.3:4")
	v6b := netip.MustParseAddrPort("[fe80::1]:4")
	for _, born := range viewHosts {
		for _, sh := range viewHosts {
			m, rec := viewRec(t, born, sh)
			orig := bytes.Clone(rec)
			v, err := ViewRecord(rec)
			if err != nil {
				t.Fatal(err)
			}
			same, other := v4b, v6b
			if isV6(sh) {
				same, other = v6b, v4b
			}
			prefix := []byte("arena")
			out, ok := v.AppendWithStoreHost(prefix, same)
			if !ok || string(out[:5]) != "arena" || len(out) != 5+len(rec) {
				t.Fatalf("store=%v: append same width: ok=%v len=%d", sh, ok, len(out))
			}
			d, err := DecodeMessage(out[5:], true)
			if err != nil || d.StoreHost != same || d.BornHost != born || d.Topic != m.Topic || d.StoreTimestamp != m.StoreTimestamp ||
				d.ReconsumeTimes != m.ReconsumeTimes || d.Properties != m.Properties {
				t.Errorf("store=%v: after AppendWithStoreHost: %+v %v", sh, d, err)
			}
			if !bytes.Equal(rec, orig) {
				t.Errorf("store=%v: AppendWithStoreHost modified the viewed record", sh)
			}
			if cv, err := ViewRecord(out[5:]); err != nil || !cv.StoreHostIs(same) || cv.StoreHostIs(sh) {
				t.Errorf("store=%v: view of the copy: %v", sh, err)
			}
			if out, ok := v.AppendWithStoreHost(prefix, other); ok || string(out) != "arena" {
				t.Errorf("store=%v: append of the other width: ok=%v %q", sh, ok, out)
			}
		}
	}
}

func TestStoreHostIsComparesAsTheFieldStores(t *testing.T) {
	v4 := netip.MustParseAddrPort("1.2.3.4:9")
	mapped := netip.MustParseAddrPort("[::ffff:1.2.3.4]:9")
	_, rec4 := viewRec(t, viewHosts[0], v4)
	v, _ := ViewRecord(rec4)
	if !v.StoreHostIs(v4) || !v.StoreHostIs(mapped) || v.StoreHostIs(netip.MustParseAddrPort("1.2.3.4:10")) ||
		v.StoreHostIs(netip.MustParseAddrPort("[2001:db8::1]:9")) || v.StoreHostIs(netip.AddrPort{}) {
		t.Error("IPv4 field")
	}
	// An IPv6-wide field holding an IPv4-mapped address (Java maps those to IPv4; only a
	// hand-made record has one) matches the IPv4 host.
	_, rec6 := viewRec(t, viewHosts[0], viewHosts[1])
	copy(rec6[posBornHost+hostV4Len+8:], mapped.Addr().AsSlice())
	binary.BigEndian.PutUint32(rec6[posBornHost+hostV4Len+8+16:], 9)
	v, err := ViewRecord(rec6)
	if err != nil || !v.StoreHostIs(v4) || !v.StoreHostIs(mapped) || v.StoreHostIs(viewHosts[1]) {
		t.Errorf("IPv6 field holding %v: %v", v.StoreHost(), err)
	}
}

// refOffsetMsgID is the formula of rocketmq-protocol.md §4.4 written out independently.
func refOffsetMsgID(h netip.AddrPort, off PhysicalOffset) string {
	var raw []byte
	if a := h.Addr(); a.IsValid() && !a.Is4() && !a.Is4In6() {
		s := a.As16()
		raw = append(raw, s[:]...)
	} else if a.IsValid() {
		s := a.Unmap().As4()
		raw = append(raw, s[:]...)
	} else {
		raw = make([]byte, 4)
	}
	raw = binary.BigEndian.AppendUint32(raw, uint32(h.Port()))
	raw = binary.BigEndian.AppendUint64(raw, uint64(off))
	return strings.ToUpper(hex.EncodeToString(raw))
}

func TestAppendOffsetMsgID(t *testing.T) {
	hosts := []netip.AddrPort{{}, netip.MustParseAddrPort("10.0.0.1:10911"), netip.MustParseAddrPort("[2001:db8::ab]:65535"),
		netip.MustParseAddrPort("[::ffff:1.2.3.4]:9"), netip.MustParseAddrPort("[fe80::1%eth0]:1")}
	for _, h := range hosts {
		for _, off := range []PhysicalOffset{0, 1, 1<<40 + 0xABCDEF, 1<<63 - 1} {
			want := refOffsetMsgID(h, off)
			if got := string(AppendOffsetMsgID([]byte("x"), h, off)); got != "x"+want {
				t.Errorf("host %v off %d: %s, want x%s", h, off, got, want)
			}
			if got := OffsetMsgID(h, off); got != want {
				t.Errorf("OffsetMsgID(%v, %d) = %s, want %s", h, off, got, want)
			}
		}
	}
	buf := make([]byte, 0, 4*offsetMsgIDMaxLen)
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendOffsetMsgID(buf[:0], hosts[2], 7)
		buf = AppendOffsetMsgID(buf, hosts[1], 7)
	}); n != 0 {
		t.Errorf("AppendOffsetMsgID into a buffer with room allocates %.0f times", n)
	}
}
