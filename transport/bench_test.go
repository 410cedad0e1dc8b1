package transport

import (
	"bytes"
	"context"
	"io"
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
// on a SEND_MESSAGE header as the Go client writes it.
func BenchmarkDecodeJSONHeader(b *testing.B) {
	frame, err := AppendFrame(nil, benchCommand())
	if err != nil {
		b.Fatal(err)
	}
	header := frame[8 : len(frame)-1024]
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(header)))
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := fastDecodeJSONHeader(header); !ok {
				b.Fatal("fast path refused the header")
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(header)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeJSONHeaderStd(header); err != nil {
				b.Fatal(err)
			}
		}
	})
}
