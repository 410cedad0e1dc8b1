// Package stats keeps the broker's traffic counters the way Apache RocketMQ's
// StoreStatsService, BrokerStats and BrokerStatsManager keep them, so that
// GET_BROKER_RUNTIME_INFO (mqadmin clusterList and brokerStatus, the
// dashboard, the exporter) and VIEW_BROKER_STATS_DATA (mqadmin statsAll) show
// the numbers those tools expect, in the shapes they parse.
//
// # What it owns
//
//   - Rates: the put, get-found, get-miss and transferred counters sampled once
//     a second for ten minutes; a TPS over 10 s, 1 min and 10 min is the
//     counter's growth since the sample that long ago (rate.go). Apache prints
//     nothing for a window it has not sampled fully yet; here a young window
//     counts from the oldest sample, so a rate moves from the first second.
//   - Items: one per (statsName, statsKey), e.g. TOPIC_PUT_NUMS/<topic> or
//     GROUP_GET_NUMS/<topic>@<group>, with a sum, a count of calls and
//     snapshots every 10 s, 10 min and 1 h for the minute, hour and day views
//     (item.go, Apache's StatsItem).
//   - The put latency distribution of the last full minute in Apache's 13
//     ranges and its 99th and 99.9th percentiles (latency.go).
//   - The pull-offset table: the next offset each group was told to pull per
//     queue (GET_CONSUME_STATS pullOffset; bounded, pulls.go), and each group's
//     get TPS over the minute view of GROUP_GET_NUMS (consumeTps).
//   - The day counters: total puts and gets now, at this morning's and at
//     yesterday morning's midnight (clusterList -m).
//
// # What it counts
//
// What this node served: the sends it stored (a follower relays sends to the
// leader, so followers count none) and the pulls it answered. Every node of a
// group applies every message, but only the one that took the send counts it,
// as an Apache master does and its slaves do not.
//
// # Time and concurrency
//
// Deterministic: every method takes the time as an argument and nothing here
// starts a goroutine; the broker calls Tick once a second from its loop. A
// Stats is safe for concurrent use (one mutex; the hot path is a few additions
// under it).
//
// # Imports
//
// Nothing of the project: the broker wires the send and pull hooks and the
// request stage to it, and broker/adminapi reads it.
//
// # Usage
//
//	s := stats.New("DefaultCluster", now)
//	s.ObservePut(now, "TopicTest", 1, 180)     // per stored message
//	s.ObserveSendResult(12*time.Millisecond, true)
//	s.ObserveGet(now, "g1", "TopicTest", 32, 5760)
//	s.Tick(now)                               // every second
//	table := s.Runtime(now)                   // putTps, getTransferredTps, msgPutTotalTodayNow, ...
//	d, ok := s.Item(stats.TopicPutNums, "TopicTest", now)
package stats
