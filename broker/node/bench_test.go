package node_test

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/store"
)

// BenchmarkPropose measures durable replicated puts: 3 nodes over loopback TCP,
// raft-wal fsyncing every append on every node, 1 KiB messages, one message
// per Propose from N concurrent producers. "nogroup" disables group commit
// (one message per raft entry) for the ratio.
//
//	go test -run '^$' -bench BenchmarkPropose -benchtime 20000x ./broker/node
func BenchmarkPropose(b *testing.B) {
	for _, tc := range []struct {
		name      string
		producers int
		maxMsgs   int
	}{
		{"producers=1", 1, 0},
		{"producers=16", 16, 0},
		{"producers=256", 256, 0},
		{"producers=256/nogroup", 256, 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			benchPropose(b, tc.producers, tc.maxMsgs)
		})
	}
}

func benchPropose(b *testing.B, producers, maxMsgs int) {
	benchProposeWith(b, producers, func(cfg *node.Config) { cfg.Proposer.MaxBatchMessages = maxMsgs })
}

// BenchmarkProposeTuning compares raft settings at 256 producers, in one run so the
// ratios hold on a noisy machine: MaxAppendEntries (entries per AppendEntries RPC)
// and the proposer's entries in flight (with and without PipelineMinBytes).
//
//	go test -run '^$' -bench BenchmarkProposeTuning -benchtime 30000x ./broker/node
func BenchmarkProposeTuning(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  func(*node.Config)
	}{
		{"maxAppendEntries=16", func(c *node.Config) { c.MaxAppendEntries = 16 }},
		{"maxAppendEntries=64", func(c *node.Config) { c.MaxAppendEntries = 64 }},
		{"maxAppendEntries=256", func(c *node.Config) { c.MaxAppendEntries = 256 }},
		{"inflight=1", func(c *node.Config) { c.Proposer.MaxInflight = 1 }},
		{"inflight=2", func(c *node.Config) { c.Proposer.MaxInflight = 2 }},
		{"inflight=2,pipelineMinBytes=off", func(c *node.Config) { c.Proposer.MaxInflight = 2; c.Proposer.PipelineMinBytes = -1 }},
		{"inflight=8", func(c *node.Config) { c.Proposer.MaxInflight = 8 }},
	} {
		b.Run(tc.name, func(b *testing.B) { benchProposeWith(b, 256, tc.cfg) })
	}
}

func benchProposeWith(b *testing.B, producers int, configure func(*node.Config)) {
	c := testcluster.New(b, 3, testcluster.Options{
		TCP:   true,
		Store: store.Config{CommitLogSegmentSize: 256 << 20},
		Configure: func(cfg *node.Config) {
			cfg.Proposer.MaxPending = 1 << 20
			configure(cfg)
		},
	})
	const queues = 16
	c.CreateTopic(testTopic, queues)
	leader := c.Leader().Node()
	msgs := make([][]byte, producers)
	for p := range msgs {
		msgs[p] = testcluster.Message(testTopic, int32(p%queues), bytes.Repeat([]byte{byte('a' + p%26)}, 1024))
	}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Int64
	before := leader.ProposerStats()
	b.SetBytes(1024)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := [][]byte{msgs[p]}
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				res, err := leader.Propose(context.Background(), batch)
				lat[i] = time.Since(t0)
				if err != nil || res[0].Err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d proposals failed", f, b.N)
	}
	after := leader.ProposerStats()
	entries := after.Entries - before.Entries
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(entries)/elapsed.Seconds(), "entries/s")
	b.ReportMetric(float64(after.Messages-before.Messages)/float64(max(entries, 1)), "msgs/entry")
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(0, "ns/op") // 0 suppresses it: msgs/s says the same for the whole group
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
