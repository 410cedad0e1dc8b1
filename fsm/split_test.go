package fsm

import (
	"bytes"
	"net/netip"
	"testing"
)

func TestSplitRecordsRoundTrip(t *testing.T) {
	recs := [][]byte{msg(t, "TopicA", 0, "one"), msg(t, "TopicA", 3, "two two"), msg(t, "TopicB", 1, "three")}
	for name, host := range map[string]netip.AddrPort{
		"ipv4": netip.MustParseAddrPort("10.0.0.1:10911"),
		"ipv6": netip.MustParseAddrPort("[2001:db8::5]:10911"),
		"none": {},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := AppendPutMessages(nil, 1700000000123, host, recs)
			if err != nil {
				t.Fatal(err)
			}
			head, got, ts, ok := SplitRecords(b)
			if !ok {
				t.Fatal("a PutMessages of stored records did not split")
			}
			if ts != 1700000000123 || len(got) != len(recs) {
				t.Fatalf("split: ts %d, %d records; want 1700000000123, %d", ts, len(got), len(recs))
			}
			for i := range recs {
				if !bytes.Equal(got[i], recs[i]) {
					t.Fatalf("record %d differs", i)
				}
			}
			if j := JoinRecords(nil, head, got); !bytes.Equal(j, b) {
				t.Fatalf("JoinRecords(SplitRecords(b)) differs from b:\n%x\n%x", j, b)
			}
			if j := JoinRecords([]byte("prefix"), head, got); !bytes.Equal(j, append([]byte("prefix"), b...)) {
				t.Fatal("JoinRecords does not append to dst")
			}
		})
	}
}

// The commands that carry a PutMessages payload after fields of their own split the
// same way.
func TestSplitRecordsOfScheduleAndTransactionCommands(t *testing.T) {
	recs := [][]byte{msg(t, "TopicA", 0, "due"), msg(t, "TopicA", 1, "due too")}
	put := PutMessages{StoreTimestamp: 42, StoreHost: leaderHost, Messages: recs}
	for name, c := range map[string]Command{
		"deliver scheduled": DeliverScheduled{Advances: []ScheduleAdvance{{Level: 3, From: 10, To: 12}}, Put: put},
		"transaction ops":   txOpsCmd(t),
	} {
		b := enc(t, c)
		head, got, ts, ok := SplitRecords(b)
		if !ok {
			t.Fatalf("%s: did not split", name)
		}
		if name == "deliver scheduled" && (ts != 42 || len(got) != 2) {
			t.Fatalf("%s: ts %d, %d records", name, ts, len(got))
		}
		if j := JoinRecords(nil, head, got); !bytes.Equal(j, b) {
			t.Fatalf("%s: JoinRecords(SplitRecords(b)) differs from b", name)
		}
	}
}

// Everything that is not a PutMessages of well-formed records is stored whole.
func TestSplitRecordsRefuses(t *testing.T) {
	good, err := AppendPutMessages(nil, 1, leaderHost, [][]byte{msg(t, "T", 0, "x")})
	if err != nil {
		t.Fatal(err)
	}
	notARecord, err := AppendPutMessages(nil, 1, leaderHost, [][]byte{msg(t, "T", 0, "x"), []byte("not a stored record")})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"topic upsert":     enc(t, TopicUpsert{Topic: TopicConfig{Name: "T", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}),
		"truncated":        good[:len(good)-3],
		"a bad record":     notARecord,
		"other version":    append([]byte{byte(CmdPutMessages), commandVersion + 1}, good[2:]...),
		"empty":            nil,
		"header only":      good[:headerLen],
		"trailing garbage": append(bytes.Clone(good), 1),
	} {
		if _, _, _, ok := SplitRecords(b); ok {
			t.Errorf("%s: split", name)
		}
	}
}

func FuzzSplitRecords(f *testing.F) {
	rec := msg(f, "TopicA", 1, "hello")
	for _, host := range []netip.AddrPort{leaderHost, {}, netip.MustParseAddrPort("[2001:db8::5]:1")} {
		b, err := AppendPutMessages(nil, 7, host, [][]byte{rec, rec})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(enc(f, txOpsCmd(f)))
	f.Add(enc(f, DeliverScheduled{Advances: []ScheduleAdvance{{Level: 1, From: 0, To: 2}}, Put: PutMessages{Messages: [][]byte{rec}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		head, recs, _, ok := SplitRecords(b)
		if !ok {
			return
		}
		if j := JoinRecords(nil, head, recs); !bytes.Equal(j, b) {
			t.Fatalf("JoinRecords(SplitRecords(b)) != b")
		}
	})
}

// BenchmarkSplitRecords: what splitting costs the commitlog kind's StoreLogs per
// entry of an async-sized batch (100 messages of 1 KiB).
func BenchmarkSplitRecords(b *testing.B) {
	recs := make([][]byte, 100)
	for i := range recs {
		recs[i] = msg(b, "BenchTopic", int32(i%8), string(bytes.Repeat([]byte{'x'}, 1024)))
	}
	data, err := AppendPutMessages(nil, 1, leaderHost, recs)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, ok := SplitRecords(data); !ok {
			b.Fatal("did not split")
		}
	}
}
