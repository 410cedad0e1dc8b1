package clientapi

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// decoded is a SEND request with fields as a broker receives it: encoded in
// the JSON header the Go client sends, then decoded (its fields are pairs).
func decoded(tb testing.TB, fields map[string]string) *transport.Command {
	tb.Helper()
	frame, err := transport.AppendFrame(nil, transport.NewRequest(transport.SendMessageV2, fields, []byte("body")))
	if err != nil {
		tb.Fatal(err)
	}
	cmd, err := transport.DecodeFrame(bytes.NewReader(frame), len(frame))
	if err != nil {
		tb.Fatal(err)
	}
	return cmd
}

func TestParseSendHeaderV1AndV2Agree(t *testing.T) {
	v1 := map[string]string{"producerGroup": "pg", "topic": "T", "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": "3", "sysFlag": "1", "bornTimestamp": "1700000000000", "flag": "5", "properties": "TAGS\x01a\x02",
		"reconsumeTimes": "0", "unitMode": "false", "maxReconsumeTimes": "0", "batch": "false", "bname": "broker-a"}
	v2 := map[string]string{"a": "pg", "b": "T", "c": "TBW102", "d": "4", "e": "3", "f": "1", "g": "1700000000000",
		"h": "5", "i": "TAGS\x01a\x02", "j": "0", "k": "false", "l": "0", "m": "false", "n": "broker-a"}
	h1, err1 := parseSendHeader(decoded(t, v1))
	h2, err2 := parseSendHeader(decoded(t, v2))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if h1 != h2 || h1.QueueID != 3 || h1.SysFlag != 1 || h1.BrokerName != "broker-a" || h1.Properties != "TAGS\x01a\x02" {
		t.Fatalf("v1 %+v\nv2 %+v", h1, h2)
	}
}

func TestParseSendHeaderNamesBadKey(t *testing.T) {
	_, err := parseSendHeader(decoded(t, map[string]string{"topic": "T", "queueId": "x1"}))
	if !errors.Is(err, route.ErrBadHeader) || !strings.Contains(err.Error(), `queueId="x1"`) {
		t.Fatalf("err = %v", err)
	}
	_, err = parseSendHeader(decoded(t, map[string]string{"queueId": "1"}))
	if err == nil || !strings.Contains(err.Error(), "topic") {
		t.Fatalf("missing topic: %v", err)
	}
}

func TestBatchRoundTripAndMalformed(t *testing.T) {
	in := []BatchElement{{Flag: 1, Body: []byte("one"), Properties: "K\x01v\x02"}, {Body: []byte{}, Properties: ""}}
	b := EncodeBatch(in)
	out, err := decodeBatch(b)
	if err != nil || len(out) != 2 || string(out[0].Body) != "one" || out[0].Flag != 1 || out[0].Properties != "K\x01v\x02" {
		t.Fatalf("round trip: %+v %v", out, err)
	}
	for name, bad := range map[string][]byte{
		"empty":      nil,
		"truncated":  b[:len(b)-1],
		"huge total": append([]byte{0x7f, 0xff, 0xff, 0xff}, b[4:]...),
		"trailing":   append(append([]byte{}, b...), 1, 2, 3),
	} {
		if _, err := decodeBatch(bad); !errors.Is(err, route.ErrBatchMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestStampKeepsJavaLastPropertyAndProducerValues: the broker's CLUSTER,
// MSG_REGION and TRACE_ON are appended after a Java-style last property (no
// trailing separator) without swallowing it, and a value the producer set wins.
func TestStampKeepsJavaLastPropertyAndProducerValues(t *testing.T) {
	a := &API{d: Deps{Config: Config{ClusterName: "c1", RegionID: "r1"}}}
	got := a.stamp("WAIT\x01true\x02KEYS\x01k1")
	want := map[string]string{"WAIT": "true", "KEYS": "k1", "CLUSTER": "c1", "MSG_REGION": "r1", "TRACE_ON": "true"}
	for k, v := range want {
		if g, ok := store.Property(got, k); !ok || g != v {
			t.Errorf("%s = %q (%v) in %q, want %q", k, g, ok, got, v)
		}
	}
	own := a.stamp("MSG_REGION\x01mine\x02TRACE_ON\x01false\x02")
	if r, _ := store.Property(own, "MSG_REGION"); r != "mine" {
		t.Errorf("producer MSG_REGION replaced: %q", own)
	}
	if tr, _ := store.Property(own, "TRACE_ON"); tr != "false" {
		t.Errorf("producer TRACE_ON replaced: %q", own)
	}
	off := (&API{d: Deps{Config: Config{TraceOff: true}}}).stamp("")
	if r, _ := store.Property(off, "MSG_REGION"); r != DefaultRegionID {
		t.Errorf("unset regionId stamped %q", r)
	}
	if tr, _ := store.Property(off, "TRACE_ON"); tr != "false" {
		t.Errorf("traceOn=false stamped %q", tr)
	}
	if _, ok := store.Property(off, "CLUSTER"); ok {
		t.Errorf("no cluster name, yet CLUSTER stamped: %q", off)
	}
}

// BenchmarkStamp: the broker's three properties on a typical Java message
// (no trailing separator), once per stored message on the send path.
func BenchmarkStamp(b *testing.B) {
	a := &API{d: Deps{Config: Config{ClusterName: "DefaultCluster"}}}
	props := "UNIQ_KEY\x017F0000012A9F18B4AAC25D3E5C7A0000\x02WAIT\x01true\x02KEYS\x01order-42\x02TAGS\x01TagA"
	b.ReportAllocs()
	for b.Loop() {
		_ = a.stamp(props)
	}
}

// A V2 header is read in place: decoding it costs no more allocations than a
// V1 header (it used to copy every key into a V1 map per send).
func TestParseSendHeaderV2AllocatesLikeV1(t *testing.T) {
	v1 := map[string]string{"producerGroup": "pg", "topic": "T", "queueId": "3", "sysFlag": "0", "bornTimestamp": "1700000000000",
		"flag": "0", "properties": "TAGS\x01a\x02", "reconsumeTimes": "0", "unitMode": "false", "batch": "false"}
	v2 := map[string]string{"a": "pg", "b": "T", "e": "3", "f": "0", "g": "1700000000000", "h": "0", "i": "TAGS\x01a\x02",
		"j": "0", "k": "false", "m": "false"}
	c1, c2 := decoded(t, v1), decoded(t, v2)
	a1 := testing.AllocsPerRun(200, func() { _, _ = parseSendHeader(c1) })
	a2 := testing.AllocsPerRun(200, func() { _, _ = parseSendHeader(c2) })
	if a2 > a1 {
		t.Fatalf("V2 header: %.0f allocations per decode, V1: %.0f", a2, a1)
	}
	if _, err := parseSendHeader(decoded(t, map[string]string{"b": "T", "e": "x"})); err == nil || !strings.Contains(err.Error(), `queueId="x"`) {
		t.Fatalf("a bad V2 field names its V1 key: %v", err)
	}
}

// BenchmarkParseSendHeader reads a SEND header into a SendHeader: the Go
// client's SEND_MESSAGE_V2 (single letters, read as their V1 names), and V1
// (long) keys as this project's bench client and Java's V1 path send them.
func BenchmarkParseSendHeader(b *testing.B) {
	for name, fields := range map[string]map[string]string{
		"V2": {"a": "BenchGroup", "b": "BenchTopic", "c": "TBW102", "d": "4", "e": "1", "f": "0",
			"g": "1764000000000", "h": "0", "i": "UNIQ_KEY\x017F00000100002A9F2B6A5D8E00000001\x02WAIT\x01true\x02",
			"j": "0", "k": "false", "l": "0", "m": "false", "n": "broker-a"},
		"V1": {"producerGroup": "BenchGroup", "topic": "BenchTopic", "defaultTopic": "TBW102",
			"defaultTopicQueueNums": "4", "queueId": "1", "sysFlag": "0", "bornTimestamp": "1764000000000", "flag": "0",
			"properties": "UNIQ_KEY\x017F00000100002A9F2B6A5D8E00000001\x02WAIT\x01true\x02", "reconsumeTimes": "0",
			"unitMode": "false", "maxReconsumeTimes": "0", "batch": "false", "bname": "broker-a"},
	} {
		b.Run(name, func(b *testing.B) {
			req := decoded(b, fields)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseSendHeader(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The one-pass header read keeps the lookup rules: a V2 key counts only when
// "b" is present and then wins over its V1 name, which still fills a field V2
// left out; "bname" has no V2 alias; problems name the V1 key.
func TestParseSendHeaderMixedKeys(t *testing.T) {
	h, err := parseSendHeader(decoded(t, map[string]string{"b": "T2", "topic": "T1", "queueId": "7", "e": "2",
		"sysFlag": "4", "bname": "bn", "n": "nn", "zzz": "ignored"}))
	if err != nil || h.Topic != "T2" || h.QueueID != 2 || h.SysFlag != 4 || h.BrokerName != "bn" {
		t.Fatalf("V2 with V1 names too: %+v %v", h, err)
	}
	h, err = parseSendHeader(decoded(t, map[string]string{"topic": "T1", "queueId": "7", "e": "2", "a": "pg", "n": "nn"}))
	if err != nil || h.Topic != "T1" || h.QueueID != 7 || h.ProducerGroup != "" || h.BrokerName != "" {
		t.Fatalf("V1 with stray letters: %+v %v", h, err)
	}
	h, err = parseSendHeader(decoded(t, map[string]string{"b": "T", "e": "1", "n": "nn"}))
	if err != nil || h.BrokerName != "nn" || h.DefaultTopicQueueNums != 4 {
		t.Fatalf("V2 brokerName and defaults: %+v %v", h, err)
	}
	for _, c := range []struct {
		fields map[string]string
		want   string // "" for no problem
	}{
		{map[string]string{"b": "T", "e": "1", "k": "maybe"}, `unitMode="maybe"`},
		{map[string]string{"b": "T", "e": "99999999999"}, `queueId="99999999999": must fit in 32 bits`},
		{map[string]string{"topic": "T", "queueId": "1", "g": "x"}, ""},   // a letter without "b" is not read
		{map[string]string{"topic": "T", "queueId": "1", "flag": ""}, ""}, // empty: the default
		{map[string]string{"b": "T"}, `queueId="": required`},
	} {
		_, err := parseSendHeader(decoded(t, c.fields))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: err %v, want %q", c.fields, err, c.want)
		}
	}
}
