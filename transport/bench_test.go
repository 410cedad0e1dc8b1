package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func benchCommand() *Command {
	req := NewRequest(SendMessage, map[string]string{
		"producerGroup": "PG", "topic": "TopicTest", "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": "2", "sysFlag": "0", "bornTimestamp": "1700000000000", "flag": "0",
		"properties": "UNIQ_KEY\x017F0000010001\x02WAIT\x01true\x02", "reconsumeTimes": "0", "unitMode": "false",
		"batch": "false", "bname": "broker-a",
	}, bytes.Repeat([]byte("x"), 1024))
	req.Opaque = 12345
	return req
}

func BenchmarkEncodeFrame(b *testing.B) {
	c := benchCommand()
	frame, _ := AppendFrame(nil, c)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if err := EncodeFrame(io.Discard, c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeFrame(b *testing.B) {
	frame, err := AppendFrame(nil, benchCommand())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	r := bytes.NewReader(frame)
	for b.Loop() {
		r.Reset(frame)
		if _, err := DecodeFrame(r, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInvokeLoopback: request/response round trips over loopback TCP through the
// Server and Client, callers in parallel on one connection.
func BenchmarkInvokeLoopback(b *testing.B) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0"}, echo)
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c := NewClient(ClientConfig{})
	defer c.Close()
	frame, _ := AppendFrame(nil, benchCommand())
	b.SetBytes(int64(2 * len(frame)))
	b.ReportAllocs()
	b.SetParallelism(16)
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if _, err := c.Invoke(ctx, s.Addr(), benchCommand()); err != nil {
				b.Error(err)
			}
			cancel()
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}

// BenchmarkDecodeJSONHeader compares the hand-written header decoder with encoding/json
// (the all-strings reference) on a SEND_MESSAGE header as the Go client writes it, and
// measures the lenient cases: numbers and booleans as extFields values, other clients'
// shapes (a key in capitals, the code as a string, an unknown key with a nested value)
// on the fast path, and a header only decodeJSONHeaderLenient takes (a nested
// extFields value).
func BenchmarkDecodeJSONHeader(b *testing.B) {
	frame, err := AppendFrame(nil, benchCommand())
	if err != nil {
		b.Fatal(err)
	}
	header := frame[8 : len(frame)-1024]
	numeric := strings.NewReplacer(`"defaultTopicQueueNums":"4"`, `"defaultTopicQueueNums":4`,
		`"queueId":"2"`, `"queueId":2`, `"sysFlag":"0"`, `"sysFlag":0`, `"bornTimestamp":"1700000000000"`,
		`"bornTimestamp":1700000000000`, `"flag":"0"`, `"flag":0`, `"reconsumeTimes":"0"`, `"reconsumeTimes":0`,
		`"unitMode":"false"`, `"unitMode":false`, `"batch":"false"`, `"batch":false`).Replace(string(header))
	odd := bytes.Replace([]byte(numeric), []byte(`"code":10,`), []byte(`"CODE":"10","clientExtra":{"k":[1,true]},`), 1)
	refused := bytes.Replace(header, []byte(`"batch":"false"`), []byte(`"batch":{"nested":false}`), 1)
	for _, h := range [][]byte{[]byte(numeric), odd} {
		if _, ok := fastDecodeJSONHeader(h); !ok || string(h) == string(header) {
			b.Fatalf("not on the fast path: %s", h)
		}
	}
	if _, ok := fastDecodeJSONHeader(refused); ok || bytes.Equal(refused, header) {
		b.Fatal("the fast path took a nested extFields value")
	}
	run := func(name string, h []byte, decode func([]byte) error) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(h)))
			b.ReportAllocs()
			for b.Loop() {
				if err := decode(h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	fast := func(h []byte) error {
		if _, ok := fastDecodeJSONHeader(h); !ok {
			return errors.New("fast path refused the header")
		}
		return nil
	}
	run("fast", header, fast)
	run("fast_numbers", []byte(numeric), fast)
	run("fast_odd_shapes", odd, fast)
	run("lenient", refused, func(h []byte) error { _, err := decodeJSONHeaderLenient(h); return err })
	run("encoding_json", header, func(h []byte) error { _, err := decodeJSONHeaderStrict(h); return err })
}
