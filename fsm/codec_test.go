package fsm

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rocketraft/rocketraft/store"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// goldenCommands pins one encoding per command type. The file name carries the type
// number, so renumbering a command breaks the test even if the bytes were regenerated.
func goldenCommands(t testing.TB) map[string]Command {
	rec := msg(t, "TopicA", 1, "hello")
	return map[string]Command{
		"01_put_messages":              PutMessages{StoreTimestamp: 1700000000123, StoreHost: netip.MustParseAddrPort("10.0.0.1:10911"), Messages: [][]byte{rec, rec[:0]}},
		"01_put_messages_v6":           PutMessages{StoreTimestamp: -1, StoreHost: netip.MustParseAddrPort("[2001:db8::5]:10911")},
		"02_topic_upsert":              TopicUpsert{Topic: TopicConfig{Name: "TopicA", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6, TopicSysFlag: 1, Order: true, Attributes: map[string]string{"+message.type": "NORMAL"}}},
		"03_topic_delete":              TopicDelete{Topic: "TopicA"},
		"04_subscription_group_upsert": SubscriptionGroupUpsert{Group: DefaultSubscriptionGroup("GroupA")},
		"05_subscription_group_delete": SubscriptionGroupDelete{Group: "GroupA", CleanOffsets: true},
		"06_consumer_offsets":          ConsumerOffsets{Offsets: []OffsetEntry{{Group: "GroupA", Topic: "TopicA", QueueID: 3, Offset: 42}, {Group: "G", Topic: "%RETRY%G", QueueID: 0, Offset: 1 << 40}}},
		"07_schedule_progress":         ScheduleProgress{Levels: []ScheduleEntry{{Level: 1, Offset: 10}, {Level: 18, Offset: 0}}},
		"08_pin_segment_size":          PinSegmentSize{SegmentSize: 1 << 30},
	}
}

func TestGoldenCommands(t *testing.T) {
	// The numbers are the replicated log format; they never change.
	pinned := map[CommandType]uint8{
		CmdPutMessages: 1, CmdTopicUpsert: 2, CmdTopicDelete: 3, CmdSubscriptionGroupUpsert: 4,
		CmdSubscriptionGroupDelete: 5, CmdConsumerOffsets: 6, CmdScheduleProgress: 7, CmdPinSegmentSize: 8,
	}
	for c, n := range pinned {
		if uint8(c) != n {
			t.Errorf("%s = %d, pinned %d", c, uint8(c), n)
		}
	}
	for name, c := range goldenCommands(t) {
		t.Run(name, func(t *testing.T) {
			b := enc(t, c)
			if want := name[:2]; hex.EncodeToString(b[:1]) != want {
				t.Fatalf("type byte %x, file says %s", b[0], want)
			}
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(hex.Dump(b)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if got := hex.Dump(b); got != string(want) {
				t.Fatalf("encoding changed:\n%s\nwant:\n%s", got, want)
			}
			d, err := DecodeCommand(b)
			if err != nil {
				t.Fatal(err)
			}
			if got := reflect.ValueOf(d).Elem().Interface(); !reflect.DeepEqual(got, c) && !equalPut(got, c) {
				t.Fatalf("round trip:\n%#v\nwant\n%#v", got, c)
			}
		})
	}
}

// equalPut compares PutMessages treating nil and empty message lists alike.
func equalPut(a, b any) bool {
	pa, ok1 := a.(PutMessages)
	pb, ok2 := b.(PutMessages)
	if !ok1 || !ok2 || pa.StoreTimestamp != pb.StoreTimestamp || pa.StoreHost != pb.StoreHost || len(pa.Messages) != len(pb.Messages) {
		return false
	}
	for i := range pa.Messages {
		if !bytes.Equal(pa.Messages[i], pb.Messages[i]) {
			return false
		}
	}
	return true
}

func TestDecodeRejects(t *testing.T) {
	put := enc(t, PutMessages{StoreHost: leaderHost, Messages: [][]byte{[]byte("abcd")}})
	cases := map[string][]byte{
		"empty":            nil,
		"type zero":        {0, 1},
		"future type":      {200, 1},
		"bad version":      {1, 2},
		"trailing byte":    append(bytes.Clone(put), 0),
		"short message":    put[:len(put)-1],
		"huge count":       append(append([]byte{1, 1}, make([]byte, 9+2)...), 0xFF, 0xFF, 0xFF, 0xFF),
		"pin zero":         {8, 1, 0, 0, 0, 0, 0, 0, 0, 0},
		"topic json":       {2, 1, '{'},
		"topic no name":    append([]byte{2, 1}, `{"readQueueNums":1}`...),
		"delete flag 2":    {5, 1, 0, 1, 'g', 2},
		"schedule partial": {7, 1, 0, 0, 0, 1, 0, 0},
		"offsets empty gr": {6, 1, 0, 0, 0, 1, 0, 0, 0, 1, 't', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	for name, b := range cases {
		if _, err := DecodeCommand(b); !errors.Is(err, ErrBadCommand) && !errors.Is(err, ErrUnknownCommand) {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

func TestPutMessagesSizeIsExact(t *testing.T) {
	for _, h := range []netip.AddrPort{{}, leaderHost, netip.MustParseAddrPort("[::1]:1")} {
		msgs := [][]byte{msg(t, "T", 0, "x"), nil, []byte("abc")}
		b, err := AppendPutMessages(nil, 1, h, msgs)
		if err != nil || len(b) != PutMessagesSize(h, msgs) {
			t.Errorf("host %v: %d bytes, size says %d (%v)", h, len(b), PutMessagesSize(h, msgs), err)
		}
	}
}

func TestPutRecordViewMatchesStore(t *testing.T) {
	hosts := []netip.AddrPort{leaderHost, netip.MustParseAddrPort("[2001:db8::9]:80")}
	for _, born := range hosts {
		for _, sh := range hosts {
			m := store.Message{Topic: "TopicX", QueueID: 5, BornHost: born, StoreHost: sh, Body: []byte("body"), Properties: "a\x01b\x02"}
			rec, err := store.AppendMessage(nil, &m)
			if err != nil {
				t.Fatal(err)
			}
			orig := bytes.Clone(rec)
			v, err := viewPutRecord(rec)
			if err != nil {
				t.Fatal(err)
			}
			if string(v.Topic()) != "TopicX" || v.QueueID() != 5 || v.StoreHost() != sh {
				t.Errorf("born=%v store=%v: view %q %d %v", born, sh, v.Topic(), v.QueueID(), v.StoreHost())
			}
			other := netip.MustParseAddrPort("10.1.2.3:4")
			if sh.Addr().Is6() {
				other = netip.MustParseAddrPort("[fe80::1]:4")
			}
			f := &FSM{}
			if got, err := f.withStoreHost(v, sh); err != nil || &got[0] != &rec[0] {
				t.Errorf("born=%v store=%v: the encoded host was not kept as is (%v)", born, sh, err)
			}
			cp, err := f.withStoreHost(v, other)
			if err != nil {
				t.Fatal(err)
			}
			d, err := store.DecodeMessage(cp, true)
			if err != nil || d.StoreHost != other || d.BornHost != born || d.Topic != "TopicX" || len(cp) != len(rec) {
				t.Errorf("after withStoreHost: %+v %v", d, err)
			}
			if !bytes.Equal(rec, orig) {
				t.Error("withStoreHost modified the record it was given")
			}
			for cut := 0; cut < len(rec); cut++ {
				if _, err := viewPutRecord(rec[:cut]); err == nil {
					t.Fatalf("view accepted a record cut at %d", cut)
				}
			}
		}
	}
}

func TestPutRecordViewTakesOnlyV1WithAQueue(t *testing.T) {
	rec := msg(t, "T", 0, "x")
	// The same message in the v2 layout (2-byte TOPICLEN), which store reads but Apply
	// does not take.
	m, err := store.DecodeMessage(rec, true)
	if err != nil {
		t.Fatal(err)
	}
	topicLenPos := len(rec) - 2 - len(m.Properties) - len(m.Topic) - 1
	v2 := append(bytes.Clone(rec[:topicLenPos]), 0)
	v2 = append(v2, rec[topicLenPos:]...)
	binary.BigEndian.PutUint32(v2, uint32(len(v2)))
	magic := store.MagicV2
	binary.BigEndian.PutUint32(v2[4:], uint32(magic))
	if sv, err := store.ViewRecord(v2); err != nil || string(sv.Topic()) != "T" {
		t.Fatalf("v2 fixture: %v", err)
	}
	neg := bytes.Clone(rec)
	binary.BigEndian.PutUint32(neg[12:], 0xFFFFFFFF) // QUEUEID
	for name, b := range map[string][]byte{"v2 magic": v2, "queue id -1": neg, "empty": nil, "garbage": []byte("abc")} {
		if _, err := viewPutRecord(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzDecodeCommand(f *testing.F) {
	for _, c := range goldenCommands(f) {
		b, err := Encode(nil, c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(append([]byte{2, 1}, `{"topicName":"a","attributes":{}}`...))
	f.Add(append([]byte{4, 1}, `{"groupName":"g","attributes":{}}`...))
	f.Add(append([]byte{26, 1}, `{"id":"n0","clientAddr":"127.0.0.1:30911","group":"g","extra":1}`...))
	f.Add([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCommand(b)
		if err != nil {
			if !errors.Is(err, ErrBadCommand) && !errors.Is(err, ErrUnknownCommand) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		// Whatever decodes re-encodes and decodes to the same command.
		b2, err := Encode(nil, c)
		if err != nil {
			t.Fatalf("re-encode %T: %v", c, err)
		}
		c2, err := DecodeCommand(b2)
		if err != nil {
			t.Fatalf("decode of re-encoded %T: %v", c, err)
		}
		if Type(b2) != Type(b) || !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip changed the command:\n%#v\n%#v", c, c2)
		}
		if p, ok := c.(*PutMessages); ok {
			for _, m := range p.Messages {
				_, _ = viewPutRecord(m) // must not panic on arbitrary bytes either
			}
		}
	})
}
