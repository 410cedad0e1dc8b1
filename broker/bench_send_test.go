package broker

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/raftlog"
	"github.com/rocketraft/rocketraft/transport"
)

// BenchmarkSendV2 drives the whole send path of one broker process: TCP
// read, header decode, the send handler, group commit through a real
// single-node raft group (raft-wal log, fsync), the FSM's CommitLog append and
// the response write. One connection keeps window requests in flight, each
// an identical SEND_MESSAGE_V2 frame with the Go client's header and a 1 KiB
// body, so the client side costs a write of bytes already encoded and a frame
// decode per response.
//
// Wall time here is mostly fsync and shares the box; what it is for is the
// server's cost per message: allocs/op (process-wide, so the server's) and
// cpu-µs/op, the process's user+system CPU per message from getrusage.
func BenchmarkSendV2(b *testing.B) {
	for _, window := range []int{16, 256} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) { benchSendV2(b, window) })
	}
}

// BenchmarkSendV2RaftLog is BenchmarkSendV2/window=256 on each raft LogStore kind:
// raft-wal, and decision 0016's entry log (message batches split into CommitLog
// records, pwrite, fdatasync), which no configuration selects yet.
func BenchmarkSendV2RaftLog(b *testing.B) {
	for _, kind := range []raftlog.LogStoreKind{raftlog.LogStoreWAL, raftlog.LogStoreCommitLog} {
		b.Run(string(kind), func(b *testing.B) {
			opts := testcluster.Options{FastTimings: true, Configure: func(c *node.Config) { c.LogStore = kind }}
			benchSendV2On(b, startRaftBrokerOn(b, opts, nil), 256)
		})
	}
}

func benchSendV2(b *testing.B, window int) {
	benchSendV2On(b, startRaftBrokerWith(b, nil), window)
}

func benchSendV2On(b *testing.B, rb *raftBroker, window int) {
	topic := "BenchSend"
	frame, err := transport.AppendFrame(nil, goClientSendV2(topic, bytes.Repeat([]byte("x"), 1024)))
	if err != nil {
		b.Fatal(err)
	}
	nc, err := net.Dial("tcp", rb.b.Addr())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 64<<10)
	// Warm: the topic is created by the first send, the segments mapped.
	if err := pipeline(nc, br, frame, 2000, window); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	cpu0 := processCPU()
	start := time.Now()
	b.ResetTimer()
	if err := pipeline(nc, br, frame, b.N, window); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	elapsed := time.Since(start)
	b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}

// pipeline writes n copies of frame with at most window unanswered and reads
// n responses, failing on the first that is not SUCCESS.
func pipeline(nc net.Conn, br *bufio.Reader, frame []byte, n, window int) error {
	credit := make(chan struct{}, window)
	werr := make(chan error, 1)
	go func() {
		bw := bufio.NewWriterSize(nc, 64<<10)
		for i := 0; i < n; i++ {
			select {
			case credit <- struct{}{}:
			default:
				// The window is full: push out what is buffered, then wait.
				if err := bw.Flush(); err != nil {
					werr <- err
					return
				}
				credit <- struct{}{}
			}
			if _, err := bw.Write(frame); err != nil {
				werr <- err
				return
			}
		}
		werr <- bw.Flush()
	}()
	for i := 0; i < n; i++ {
		resp, err := transport.DecodeFrame(br, 0)
		if err != nil {
			return fmt.Errorf("response %d: %w", i, err)
		}
		if resp.ResponseCode() != transport.Success {
			return fmt.Errorf("response %d: %s %q", i, resp.ResponseCode(), resp.Remark)
		}
		<-credit
	}
	return <-werr
}

// goClientSendV2 is a SEND_MESSAGE_V2 request as rocketmq-client-go writes
// one: single-letter header keys, a UNIQ_KEY and WAIT property.
func goClientSendV2(topic string, body []byte) *transport.Command {
	req := transport.NewRequest(transport.SendMessageV2, map[string]string{
		"a": "BenchGroup", "b": topic, "c": "TBW102", "d": "4", "e": "1", "f": "0",
		"g": "1764000000000", "h": "0", "i": "UNIQ_KEY\x017F00000100002A9F2B6A5D8E00000001\x02WAIT\x01true\x02",
		"j": "0", "k": "false", "l": "0", "m": "false", "n": "broker-a",
	}, body)
	req.Language = "GO"
	req.Version = 317
	req.Opaque = 1
	return req
}

// processCPU is this process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
