//go:build perf

package perf

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// consumeRun is one round of the consumer targets on one system.
type consumeRun struct {
	System  string `json:"system"`
	Round   int    `json:"round"`
	Backlog int    `json:"backlog"` // messages of 1 KiB acknowledged
	// BacklogFailed are the backlog's sends that failed.
	BacklogFailed int     `json:"backlogFailed"`
	Produce       float64 `json:"produceMsgsPerSec"`
	Drain         float64 `json:"drainMsgsPerSec"`
	// DrainServerCPUSec is the servers' CPU over the drain.
	DrainServerCPUSec float64 `json:"drainServerCpuSec"`
	LiveRate          float64 `json:"liveRate"` // the paced producer's msgs/s: half of Produce
	LiveConsumed      int64   `json:"liveConsumed"`
	BornP50Ms         float64 `json:"bornP50Ms"`
	BornP99Ms         float64 `json:"bornP99Ms"`
	BornP999Ms        float64 `json:"bornP999Ms"`
	BornMaxMs         float64 `json:"bornMaxMs"`
	// ConsumeBatch is the consumers' ConsumeMessageBatchMaxSize (--batch).
	ConsumeBatch int `json:"consumeBatch"`
	// DiskSmallP50Ms, DiskLargeP50Ms and DiskSharedP50Ms are the disk's
	// durable-append latency (4 KiB, 128 KiB, and 4 KiB by three appenders at
	// once; bench disk) before the system started.
	DiskSmallP50Ms  float64 `json:"diskSmallP50Ms"`
	DiskLargeP50Ms  float64 `json:"diskLargeP50Ms"`
	DiskSharedP50Ms float64 `json:"diskSharedP50Ms"`
}

// drainRate is a consumer's msgs/s from its first delivery to the end: the
// consumer's start-up (route lookup, rebalance) is not the broker's read
// path. The start is the end of the last interval that delivered nothing
// before the first one that did (one-second resolution).
func drainRate(lines []benchLine) float64 {
	sum := lines[len(lines)-1]
	start := 0.0
	for _, l := range lines[:len(lines)-1] {
		if l.Msgs > 0 {
			break
		}
		start = l.ElapsedS
	}
	if sum.ElapsedS <= start {
		return 0
	}
	return float64(sum.Msgs) / (sum.ElapsedS - start)
}

// TestConsumeTargets measures issue 11's consumer targets on a fresh group
// per round: (1) a backlog of PERF_BACKLOG_MIB (default 1024) MiB of 1 KiB
// messages produced with the async workload (1 producer, 256 in flight),
// whose rate is the reference; (2) the backlog drained from the first offset
// by the official Go push consumer (`rocketraft bench consume`); (3) a second
// topic consumed live while a paced producer sends at half the measured
// produce rate for PERF_LIVE (default 60s): the born → consumed percentiles.
// PERF_LIVE_RATE (msgs/s) fixes that rate for every system and round instead,
// so that an A/B of two builds compares their latency at the same load (each
// half its own produce rate would load the faster build harder).
// Targets: drain ≥ 2× produce; born → consumed p99 ≤ 10 ms.
func TestConsumeTargets(t *testing.T) {
	s := loadSettings(t)
	systems := []string{"rocketraft"}
	if os.Getenv("PERF_SYSTEMS") != "" {
		systems = s.systems
	}
	for _, sys := range systems {
		if isJetStream(sys) {
			t.Fatalf("PERF_SYSTEMS: %s has no RocketMQ consumer; the consumer targets run on rocketraft and rocketmq", sys)
		}
	}
	mib := envPositiveInt(t, "PERF_BACKLOG_MIB", 1024)
	live := 60 * time.Second
	if e := os.Getenv("PERF_LIVE"); e != "" {
		d, err := time.ParseDuration(e)
		if err != nil || d < 10*time.Second {
			t.Fatalf("PERF_LIVE=%q: want a duration of at least 10s", e)
		}
		live = d
	}
	liveRate := envPositiveInt(t, "PERF_LIVE_RATE", 0) // 0: half of each round's produce rate
	// The consumers' listener batch (ConsumeMessageBatchMaxSize). The client
	// starts a goroutine per listener call: at its default of 1 that is one
	// per message, and on a two-core box the consumer then takes a quarter of
	// the CPU the broker group needs. 32 is the client's pull batch.
	batch := envPositiveInt(t, "PERF_CONSUME_BATCH", 32)
	backlog := mib * 1024
	var runs []consumeRun
	for round := 1; round <= s.rounds; round++ {
		for _, sys := range rotated(systems, round) {
			rs, err := newRemotingSystem(s, sys)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			disk, err := probeDisk(s.bin, dir, round)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if err := rs.start(t, dir); err != nil {
				rs.stop()
				t.Fatalf("round %d: start %s: %v\n%s", round, sys, err, tails(dir))
			}
			r, err := consumeRound(s.bin, rs, backlog, live, liveRate, batch)
			rs.stop()
			if err != nil {
				t.Fatalf("round %d %s: %v\n%s", round, sys, err, tails(dir))
			}
			removeRunDir(t, dir)
			r.Round = round
			r.DiskSmallP50Ms, r.DiskLargeP50Ms, r.DiskSharedP50Ms = disk.Small.P50Ms, disk.Large.P50Ms, disk.Shared.P50Ms
			runs = append(runs, r)
			t.Logf("round %d %-10s disk p50 %.2f / %.2f / %.2f ms (4 KiB / 128 KiB / 4 KiB × 3), backlog %d acked (%d failed), produce %.0f msgs/s, drain %.0f msgs/s (%.2f×, servers %.1f CPU s), live at %.0f msgs/s: born→consumed p50 %.1f p99 %.1f p99.9 %.1f max %.1f ms",
				round, sys, r.DiskSmallP50Ms, r.DiskLargeP50Ms, r.DiskSharedP50Ms, r.Backlog, r.BacklogFailed, r.Produce, r.Drain, r.Drain/r.Produce, r.DrainServerCPUSec, r.LiveRate, r.BornP50Ms, r.BornP99Ms, r.BornP999Ms, r.BornMaxMs)
		}
	}
	report := renderConsume(systems, runs, mib, live, liveRate, batch)
	t.Log("\n" + report)
	if out := os.Getenv("PERF_CONSUME_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(report), 0o644); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.Create(strings.TrimSuffix(out, ".md") + ".jsonl")
		for _, r := range runs {
			b, _ := json.Marshal(r)
			fmt.Fprintln(raw, string(b))
		}
		raw.Close()
	}
}

// consumeRound is one system's round; liveRate 0 paces the live phase at half
// the measured produce rate; batch is the consumers' --batch.
func consumeRound(bin string, rs remotingSystem, backlog int, live time.Duration, liveRate, batch int) (consumeRun, error) {
	r := consumeRun{System: rs.name(), Backlog: backlog, ConsumeBatch: batch}
	for _, topic := range []string{"PerfWarm", "PerfBacklog", "PerfLive"} {
		if err := createTopic(bin, rs.namesrv(), rs.cluster(), topic); err != nil {
			return r, err
		}
	}
	ns := rs.namesrv()
	// The warm-up of bench-compare, on a topic of its own so the backlog is
	// exactly what the drain reads.
	if _, err := benchLines(bin, "bench", "produce", "--namesrv", ns, "--topic", "PerfWarm", "--size", "1024", "--key-prefix", "",
		"--count", strconv.Itoa(max(2000, backlog/10)), "--producers", "16", "--json", "-"); err != nil {
		return r, fmt.Errorf("warm-up: %w", err)
	}
	prod, err := benchLines(bin, "bench", "produce", "--namesrv", ns, "--topic", "PerfBacklog", "--size", "1024", "--key-prefix", "",
		"--client", "native", "--mode", "async", "--producers", "1", "--window", "256", "--count", strconv.Itoa(backlog), "--json", "-")
	if err != nil {
		return r, err
	}
	// A send can fail (a leader change when a disk stalls, say); the backlog
	// is what was acknowledged, and the report says how many failed.
	ps := prod[len(prod)-1]
	if ps.Msgs+ps.Failed < int64(backlog) || ps.Msgs < int64(backlog)*99/100 {
		return r, fmt.Errorf("backlog: %d acked, %d failed of %d", ps.Msgs, ps.Failed, backlog)
	}
	r.Backlog, r.BacklogFailed = int(ps.Msgs), int(ps.Failed)
	r.Produce = ps.MsgsPerS
	if err := backlogIntact(bin, ns, "PerfBacklog", r.Backlog); err != nil {
		return r, err
	}
	srv0 := procCPU(rs.serverPIDs())
	drain, err := benchLines(bin, "bench", "consume", "--namesrv", ns, "--topic", "PerfBacklog", "--group", "PerfDrain",
		"--batch", strconv.Itoa(batch), "--count", strconv.Itoa(r.Backlog), "--timeout", "30m", "--json", "-")
	if err != nil {
		return r, err
	}
	r.DrainServerCPUSec = procCPU(rs.serverPIDs()) - srv0
	r.Drain = drainRate(drain)

	// Live: the consumer first (its rebalance done), then the paced producer.
	r.LiveRate = float64(int(r.Produce / 2))
	if liveRate > 0 {
		r.LiveRate = float64(liveRate)
	}
	type consumed struct {
		lines []benchLine
		err   error
	}
	done := make(chan consumed, 1)
	go func() {
		l, err := benchLines(bin, "bench", "consume", "--namesrv", ns, "--topic", "PerfLive", "--group", "PerfLive",
			"--batch", strconv.Itoa(batch), "--duration", (live + 15*time.Second).String(), "--json", "-")
		done <- consumed{l, err}
	}()
	time.Sleep(8 * time.Second)
	lp, err := benchLines(bin, "bench", "produce", "--namesrv", ns, "--topic", "PerfLive", "--size", "1024", "--key-prefix", "",
		"--client", "native", "--mode", "async", "--producers", "4", "--window", "32",
		"--rate", strconv.Itoa(int(r.LiveRate)), "--duration", live.String(), "--json", "-")
	c := <-done
	if err != nil {
		return r, err
	}
	if c.err != nil {
		return r, c.err
	}
	sent, got := lp[len(lp)-1], c.lines[len(c.lines)-1]
	if got.Msgs < sent.Msgs {
		// Lost, or not consumed before the consumer's time ran out? The topic's
		// queues tell: they hold every acknowledged message unless one was lost.
		held, herr := topicHeld(bin, ns, "PerfLive")
		return r, fmt.Errorf("live: %d acked, %d consumed; the topic holds %d (%v); consumed per second at the end: %v",
			sent.Msgs, got.Msgs, held, herr, lastIntervals(c.lines, 12))
	}
	born, ok := got.Latency["born"]
	if !ok {
		return r, fmt.Errorf("consume summary has no born series: %v", got.Latency)
	}
	r.LiveConsumed = got.Msgs
	r.BornP50Ms, r.BornP99Ms, r.BornP999Ms, r.BornMaxMs = born.P50Ms, born.P99Ms, born.P999Ms, born.MaxMs
	return r, nil
}

// backlogIntact checks that every queue of topic still starts at offset 0 and
// that the queues hold at least acked messages: the drain's count is only
// reachable if retention has deleted nothing (a nearly full disk makes it
// delete unexpired segments).
func backlogIntact(bin, ns, topic string, acked int) error {
	queues, err := topicQueues(bin, ns, topic)
	if err != nil {
		return err
	}
	var held int64
	for _, q := range queues {
		if q.MinOffset != 0 {
			return fmt.Errorf("backlog %s queue %d starts at offset %d: retention deleted part of it (is the disk over diskMaxUsedSpaceRatio?)",
				topic, q.QueueID, q.MinOffset)
		}
		held += q.Messages
	}
	if held < int64(acked) {
		return fmt.Errorf("backlog %s holds %d messages, %d were acknowledged", topic, held, acked)
	}
	return nil
}

// queueStatus is one queue of `admin topic status -o json`.
type queueStatus struct {
	QueueID   int32 `json:"queueId"`
	MinOffset int64 `json:"minOffset"`
	Messages  int64 `json:"messages"`
}

// topicQueues reads the queues of topic from the running group.
func topicQueues(bin, ns, topic string) ([]queueStatus, error) {
	out, err := exec.Command(bin, "admin", "-n", ns, "-o", "json", "topic", "status", topic).Output()
	if err != nil {
		return nil, fmt.Errorf("topic status %s: %w", topic, err)
	}
	var doc struct {
		Queues []queueStatus `json:"queues"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("topic status %s: %w: %s", topic, err, out)
	}
	return doc.Queues, nil
}

// topicHeld is the number of messages the queues of topic hold.
func topicHeld(bin, ns, topic string) (int64, error) {
	queues, err := topicQueues(bin, ns, topic)
	var held int64
	for _, q := range queues {
		held += q.Messages
	}
	return held, err
}

// lastIntervals is the message counts of the last n per-second lines.
func lastIntervals(lines []benchLine, n int) []int64 {
	var out []int64
	for _, l := range lines {
		if l.Type == "interval" {
			out = append(out, l.Msgs)
		}
	}
	return out[max(0, len(out)-n):]
}

// renderConsume is the Markdown report of TestConsumeTargets: medians and
// ranges over rounds per system, with the targets.
func renderConsume(systems []string, runs []consumeRun, mib int, live time.Duration, liveRate, batch int) string {
	var b strings.Builder
	pace := "half the produce rate"
	if liveRate > 0 {
		pace = fmt.Sprintf("a fixed %d msgs/s (PERF_LIVE_RATE)", liveRate)
	}
	fmt.Fprintf(&b, "Consumer targets, %s: backlog %d MiB of 1 KiB messages; live for %s at %s; the official Go push consumer with ConsumeMessageBatchMaxSize %d (PERF_CONSUME_BATCH).\n\n",
		time.Now().UTC().Format("2006-01-02"), mib, live, pace, batch)
	b.WriteString("| system | rounds | disk append p50 ms, 4 KiB / 128 KiB / 4 KiB × 3 at once (bench disk, before the start) | async produce msgs/s | drain msgs/s | drain / produce (target ≥ 2) | servers' CPU s / 100k drained | live msgs/s | born→consumed p50 / p99 / p99.9 / max ms (target p99 ≤ 10) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, sys := range systems {
		var diskSmall, diskLarge, diskShared, prod, drain, ratio, cpu, rate, p50, p99, p999, mx []float64
		for _, r := range runs {
			if r.System != sys {
				continue
			}
			diskSmall, diskLarge, diskShared = append(diskSmall, r.DiskSmallP50Ms), append(diskLarge, r.DiskLargeP50Ms), append(diskShared, r.DiskSharedP50Ms)
			prod, drain, ratio = append(prod, r.Produce), append(drain, r.Drain), append(ratio, r.Drain/r.Produce)
			cpu = append(cpu, r.DrainServerCPUSec*100000/float64(r.Backlog))
			rate, p50, p99 = append(rate, r.LiveRate), append(p50, r.BornP50Ms), append(p99, r.BornP99Ms)
			p999, mx = append(p999, r.BornP999Ms), append(mx, r.BornMaxMs)
		}
		if len(prod) == 0 {
			continue
		}
		rng := func(v []float64, f string) string {
			return fmt.Sprintf(f+" ("+f+"–"+f+")", median(v), slices.Min(v), slices.Max(v))
		}
		fmt.Fprintf(&b, "| %s | %d | %s / %s / %s | %s | %s | %s | %.2f | %.0f | %.1f / %s / %.1f / %.1f |\n", sys, len(prod),
			rng(diskSmall, "%.2f"), rng(diskLarge, "%.2f"), rng(diskShared, "%.2f"), rng(prod, "%.0f"), rng(drain, "%.0f"), rng(ratio, "%.2f"), median(cpu), median(rate),
			median(p50), rng(p99, "%.1f"), median(p999), median(mx))
	}
	return b.String()
}
