package bench

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/sign"
)

func TestBatchBodyLayout(t *testing.T) {
	b := encodeBatchBody([][]byte{[]byte("ab"), []byte("cde")}, []string{store.EncodeProperties(map[string]string{store.PropertyKeys: "k1"}), ""})
	// element 1: 20-byte header + 2 body + 2 proplen + 8 props
	if total := binary.BigEndian.Uint32(b[0:]); total != 32 {
		t.Fatalf("first element TOTALSIZE %d, want 32", total)
	}
	if bodyLen := binary.BigEndian.Uint32(b[16:]); bodyLen != 2 || string(b[20:22]) != "ab" {
		t.Fatalf("first body %q", b[20:22])
	}
	if got := store.ParseProperties(string(b[24:32])); got["KEYS"] != "k1" {
		t.Fatalf("first properties %v", got)
	}
	if total := binary.BigEndian.Uint32(b[32:]); total != 25 || len(b) != 57 {
		t.Fatalf("second element TOTALSIZE %d, body length %d", total, len(b))
	}
}

// The rocketmq-go client takes only "TLS on": a config that would verify the
// server, or present a client certificate, is refused rather than silently
// run without it.
func TestGoClientTLSRefusesVerification(t *testing.T) {
	if on, err := goClientTLS(nil); on || err != nil {
		t.Fatalf("nil config: on=%v err=%v", on, err)
	}
	if on, err := goClientTLS(&tls.Config{InsecureSkipVerify: true}); !on || err != nil {
		t.Fatalf("trust-any config: on=%v err=%v", on, err)
	}
	if _, err := goClientTLS(&tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{{}}}); !errors.Is(err, ErrTLSClientCertUnsupported) {
		t.Fatalf("config with a client certificate: err=%v, want ErrTLSClientCertUnsupported", err)
	}
	if _, err := goClientTLS(&tls.Config{RootCAs: x509.NewCertPool()}); !errors.Is(err, ErrTLSVerifyUnsupported) {
		t.Fatalf("verifying config: err=%v, want ErrTLSVerifyUnsupported", err)
	}
}

// The map-free send header is the map's, byte for byte: same fields, same
// values, JSON-escaped the same way (properties carry \x01 and \x02), in the
// sorted order the map encodes in.
func TestNativeRequestWithoutAMapEncodesLikeTheMap(t *testing.T) {
	for _, o := range []ProduceOptions{
		{Topic: "BenchTopic", Group: "bench_producer", MessageSize: 64, KeyPrefix: "k-", Tag: "t\"a\\g"},
		{Topic: "T2", Group: "g", MessageSize: 8, Transaction: true, DelayLevel: 3, PropertySize: 10},
	} {
		s := &nativeSender{shape: newShape(o, time.Unix(1700000000, 0)), batch: 1}
		tgt := queueTarget{addr: "127.0.0.1:10911", queue: 5}
		op := op{first: 42, msgs: 1}
		fast := s.request(op, tgt)
		if fast.Ext.Data == nil {
			t.Fatal("request of an unsigned single send built a map")
		}
		var born int64
		for _, f := range strings.Split(string(fast.Ext.Data), ",") {
			if v, ok := strings.CutPrefix(f, `"bornTimestamp":"`); ok {
				born, _ = strconv.ParseInt(strings.TrimSuffix(v, `"`), 10, 64)
			}
		}
		want, err := transport.AppendFrame(nil, s.mapRequest(op, tgt, born))
		if err != nil {
			t.Fatal(err)
		}
		got, err := transport.AppendFrame(nil, fast)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: frames differ:\n got %q\nwant %q", o.Topic, got, want)
		}
	}
	// A signed send keeps the map: the signature is computed over it.
	s := &nativeSender{shape: newShape(ProduceOptions{Topic: "T", Group: "g"}, time.Now()), batch: 1,
		creds: sign.Credentials{AccessKey: "ak", SecretKey: "sk"}}
	if r := s.request(op{msgs: 1}, queueTarget{}); r.Ext.Data != nil || r.Field(sign.AccessKeyField) != "ak" {
		t.Fatalf("signed send: Ext %q, ext %v", r.Ext.Data, r.Fields())
	}
}

// With --serialize rocketmq the map-free send is a ROCKETMQ header that
// decodes to the map's fields, and a signed send is a ROCKETMQ header too.
func TestNativeRequestInRocketMQEncoding(t *testing.T) {
	o := ProduceOptions{Topic: "BenchTopic", Group: "bench_producer", MessageSize: 64, KeyPrefix: "k-", Tag: "t\"a\\g"}
	s := &nativeSender{shape: newShape(o, time.Unix(1700000000, 0)), batch: 1, serialize: transport.SerializeRocketMQ}
	tgt := queueTarget{addr: "127.0.0.1:10911", queue: 5}
	frame, err := transport.AppendFrame(nil, s.request(op{first: 42, msgs: 1}, tgt))
	if err != nil {
		t.Fatal(err)
	}
	got, err := transport.DecodeFrame(bytes.NewReader(frame), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := s.mapRequest(op{first: 42, msgs: 1}, tgt, 0).Fields()
	want["bornTimestamp"] = got.Field("bornTimestamp")
	if got.Serialize != transport.SerializeRocketMQ || !maps.Equal(got.Fields(), want) || string(got.Body) != string(s.shape.body) {
		t.Fatalf("decoded %s ext %v, want ext %v", got.Serialize, got.Fields(), want)
	}
	s.creds = sign.Credentials{AccessKey: "ak", SecretKey: "sk"}
	if r := s.request(op{first: 1, msgs: 1}, tgt); r.Serialize != transport.SerializeRocketMQ || r.Ext.Data != nil {
		t.Fatalf("signed send: serialize %s, pre-encoded %q", r.Serialize, r.Ext.Data)
	}
}
