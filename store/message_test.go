package store

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

func sampleMessage() Message {
	return Message{
		Topic:          "TopicTest",
		QueueID:        3,
		Flag:           7,
		QueueOffset:    42,
		PhysicalOffset: 123456,
		SysFlag:        0,
		BornTimestamp:  1700000000123,
		BornHost:       netip.MustParseAddrPort("10.0.0.5:51234"),
		StoreTimestamp: 1700000000456,
		StoreHost:      netip.MustParseAddrPort("127.0.0.1:10911"),
		ReconsumeTimes: 2,
		Body:           []byte("hello rocketraft"),
		Properties: EncodeProperties(map[string]string{
			PropertyTags: "TagA", PropertyKeys: "k1 k2", PropertyUniqKey: "0A000005C0DE00000000abcdef012345",
		}),
	}
}

func TestEncodeDecodesWithRealGoClient(t *testing.T) {
	cases := map[string]func(*Message){
		"ipv4": func(*Message) {},
		"ipv6 hosts": func(m *Message) {
			m.BornHost = netip.MustParseAddrPort("[2001:db8::1]:5000")
			m.StoreHost = netip.MustParseAddrPort("[::1]:10911")
		},
		"empty body":  func(m *Message) { m.Body = nil },
		"no props":    func(m *Message) { m.Properties = "" },
		"max topic":   func(m *Message) { m.Topic = string(bytes.Repeat([]byte("t"), MaxTopicLength)) },
		"transaction": func(m *Message) { m.SysFlag = SysFlagTxPrepared; m.PreparedTransactionOffset = 99 },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			m := sampleMessage()
			mutate(&m)
			rec, err := AppendMessage(nil, &m)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec) != m.EncodedSize() {
				t.Fatalf("encoded %d bytes, EncodedSize %d", len(rec), m.EncodedSize())
			}
			got := primitive.DecodeMessage(rec)
			if len(got) != 1 {
				t.Fatalf("client decoded %d messages, want 1", len(got))
			}
			ext := got[0]
			if ext.Topic != m.Topic || !bytes.Equal(ext.Body, m.Body) || ext.StoreSize != int32(len(rec)) {
				t.Fatalf("client decode mismatch: topic %q body %q", ext.Topic, ext.Body)
			}
			if ext.QueueOffset != int64(m.QueueOffset) || ext.CommitLogOffset != int64(m.PhysicalOffset) {
				t.Fatalf("offsets: client queue %d phys %d, want %d %d", ext.QueueOffset, ext.CommitLogOffset, m.QueueOffset, m.PhysicalOffset)
			}
			if ext.BornTimestamp != m.BornTimestamp || ext.StoreTimestamp != m.StoreTimestamp || ext.ReconsumeTimes != m.ReconsumeTimes {
				t.Fatalf("timestamps/reconsume mismatch: %+v", ext)
			}
			if ext.PreparedTransactionOffset != m.PreparedTransactionOffset || ext.Flag != m.Flag {
				t.Fatalf("flag/tx offset mismatch: %+v", ext)
			}
			if ext.StoreHost != m.StoreHost.String() && ext.StoreHost != m.StoreHost.Addr().String()+":"+itoa(int(m.StoreHost.Port())) {
				t.Fatalf("store host: client %q, want %q", ext.StoreHost, m.StoreHost)
			}
			props := ParseProperties(m.Properties)
			for k, v := range props {
				if ext.GetProperty(k) != v {
					t.Fatalf("property %s: client %q, want %q", k, ext.GetProperty(k), v)
				}
			}
			if want := OffsetMsgID(m.StoreHost, m.PhysicalOffset); ext.OffsetMsgId != want {
				t.Fatalf("offsetMsgId: client %q, ours %q", ext.OffsetMsgId, want)
			}
			back, err := DecodeMessage(rec, true)
			if err != nil {
				t.Fatal(err)
			}
			if back.Topic != m.Topic || back.QueueID != m.QueueID || back.QueueOffset != m.QueueOffset ||
				back.PhysicalOffset != m.PhysicalOffset || back.StoreHost.Port() != m.StoreHost.Port() ||
				back.Properties != m.Properties || !bytes.Equal(back.Body, m.Body) || back.StoreSize != int32(len(rec)) {
				t.Fatalf("round trip mismatch: %+v", back)
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func TestOffsetMsgIDMatchesProtocolExample(t *testing.T) {
	// rocketmq-protocol.md §4.4: 127.0.0.1:10911, offset 100.
	id := OffsetMsgID(netip.MustParseAddrPort("127.0.0.1:10911"), 100)
	if id != "7F00000100002A9F0000000000000064" {
		t.Fatalf("got %s", id)
	}
	parsed, err := primitive.UnmarshalMsgID([]byte(id))
	if err != nil || parsed.Offset != 100 || parsed.Port != 10911 {
		t.Fatalf("client UnmarshalMsgID: %+v %v", parsed, err)
	}
	host, off, err := ParseOffsetMsgID(id)
	if err != nil || off != 100 || host.String() != "127.0.0.1:10911" {
		t.Fatalf("ParseOffsetMsgID: %v %d %v", host, off, err)
	}
	v6 := OffsetMsgID(netip.MustParseAddrPort("[::1]:10911"), 7)
	if len(v6) != 56 {
		t.Fatalf("ipv6 id length %d", len(v6))
	}
	if _, off, err := ParseOffsetMsgID(v6); err != nil || off != 7 {
		t.Fatalf("ipv6 parse: %d %v", off, err)
	}
	if _, _, err := ParseOffsetMsgID("XYZ"); err == nil {
		t.Fatal("garbage id parsed")
	}
}

func TestDecodeRejectsCorruption(t *testing.T) {
	m := sampleMessage()
	rec, _ := AppendMessage(nil, &m)
	flip := func(pos int) []byte {
		b := bytes.Clone(rec)
		b[pos] ^= 0xFF
		return b
	}
	for name, b := range map[string][]byte{
		"magic":      flip(posMagic),
		"body byte":  flip(len(rec) - len(m.Properties) - 3 - len(m.Topic) - 2),
		"total size": flip(posTotalSize + 3),
	} {
		if _, err := DecodeMessage(b, true); err == nil {
			t.Errorf("%s: corruption not detected", name)
		}
	}
	if _, err := DecodeMessage(rec[:len(rec)-1], true); !errors.Is(err, ErrShortBuffer) {
		t.Errorf("truncated record: %v", err)
	}
	long := sampleMessage()
	long.Topic = string(bytes.Repeat([]byte("x"), MaxTopicLength+1))
	if _, err := AppendMessage(nil, &long); !errors.Is(err, ErrMessageIllegal) {
		t.Errorf("128-char topic accepted: %v", err)
	}
}

func TestPatching(t *testing.T) {
	for _, born := range []string{"10.0.0.1:1", "[fe80::1]:2"} {
		m := sampleMessage()
		m.BornHost = netip.MustParseAddrPort(born)
		rec, _ := AppendMessage(nil, &m)
		PatchOffsets(rec, 9, 1<<40)
		PatchStoreTimestamp(rec, 555)
		d, err := DecodeMessage(rec, true)
		if err != nil {
			t.Fatal(err)
		}
		if d.QueueOffset != 9 || d.PhysicalOffset != 1<<40 || d.StoreTimestamp != 555 || QueueOffsetOf(rec) != 9 || PhysicalOffsetOf(rec) != 1<<40 || StoreTimestampOf(rec) != 555 {
			t.Fatalf("patch mismatch: %+v", d)
		}
	}
}

func TestPropertiesAndTagsCode(t *testing.T) {
	enc := EncodeProperties(map[string]string{"b": "2", "a": "1", PropertyKeys: "x  y"})
	if enc != "KEYS\x01x  y\x02a\x011\x02b\x012\x02" {
		t.Fatalf("encoding %q", enc)
	}
	if v, ok := Property(enc, "a"); !ok || v != "1" {
		t.Fatal("Property a")
	}
	if _, ok := Property(enc, "KEY"); ok {
		t.Fatal("prefix matched a longer name")
	}
	if got := Keys(enc); len(got) != 2 || got[0] != "x" || got[1] != "y" {
		t.Fatalf("keys %v", got)
	}
	if p := ParseProperties("a\x011\x02junk\x02b\x012"); len(p) != 2 || p["b"] != "2" {
		t.Fatalf("parse %v", p)
	}
	// Java: "TagA".hashCode() == 2598919, matching the Go client's codeSet in §3.2.
	if TagsCode("TagA") != 2598919 || TagsCode("TagC") != 2598921 || TagsCode("") != 0 {
		t.Fatalf("tags code %d", TagsCode("TagA"))
	}
	// Overflow wraps like Java's int: "polygenelubricants".hashCode() == Integer.MIN_VALUE.
	if TagsCode("polygenelubricants") != -2147483648 {
		t.Fatalf("overflow: %d", TagsCode("polygenelubricants"))
	}
}
