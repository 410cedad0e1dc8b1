package chaos

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Environment of the soak (make soak).
const (
	// envSoak is the soak's length ("1h"); unset skips TestSoak. The binary is
	// built only when ROCKETRAFT_CHAOS is set too (make soak sets it to "soak",
	// which runs no other scenario).
	envSoak = "ROCKETRAFT_CHAOS_SOAK"
	// envSoakSeed picks the faults; default: the clock.
	envSoakSeed = "ROCKETRAFT_CHAOS_SOAK_SEED"
	// envSoakEvery is the time between two faults (default 1m).
	envSoakEvery = "ROCKETRAFT_CHAOS_SOAK_EVERY"
)

// soakSample is one node's resources at one moment.
type soakSample struct {
	at         time.Duration // since the soak started
	node       int
	up         bool
	anonRSS    int64 // RssAnon: the heap and stacks, not the mapped files the page cache holds
	goroutines int
	fds        int
	raftBytes  int64 // <data>/raft: the raft log and snapshots
	storeBytes int64 // <data>/store: CommitLog, ConsumeQueue, index
	acked      int64 // the workload's acks so far
}

// soakFault is one fault of the soak's menu; do applies it and returns after
// healing it (the soak then waits for a full group before the next one).
type soakFault struct {
	name string
	do   func(s *scenario, leader, other int)
}

var soakFaults = []soakFault{
	{"kill leader", func(s *scenario, leader, _ int) {
		s.c.Kill(leader)
		sleep(5 * time.Second)
		s.restart(leader)
	}},
	{"kill follower", func(s *scenario, _, other int) {
		s.c.Kill(other)
		sleep(5 * time.Second)
		s.restart(other)
	}},
	{"pause leader 5s", func(s *scenario, leader, _ int) {
		s.c.Nodes[leader].Proc.Pause()
		sleep(5 * time.Second)
		s.c.Nodes[leader].Proc.Resume()
	}},
	{"isolate leader 10s", func(s *scenario, leader, _ int) {
		s.c.Isolate(leader)
		sleep(10 * time.Second)
		s.c.HealAll()
	}},
	{"cut leader→follower one way 10s", func(s *scenario, leader, other int) {
		s.c.CutOneWay(leader, other)
		sleep(10 * time.Second)
		s.c.HealAll()
	}},
	{"quiet minute", func(*scenario, int, int) {}},
}

func (s *scenario) restart(i int) {
	if err := s.c.Start(i); err != nil {
		s.t.Fatalf("%s: restart n%d: %v", s.id, i, err)
	}
}

// TestSoak: an hour (ROCKETRAFT_CHAOS_SOAK) of mixed load — Go-client and raw
// producers, sequential readers, a concurrent consumer group, and the
// background load of Go, raw and Java producers at 45 % of the measured
// maximum — with a fault every minute drawn by a seed
// from soakFaults. Every 10 s it samples each node's anonymous RSS,
// goroutines, open files and disk use. It fails on the checker's findings
// (lost acknowledged writes, phantoms, divergence, as every scenario) and on
// growth without bound: goroutines, anonymous RSS or open files in the last
// fifth of the run well above the second fifth (the first is warm-up), or disk
// per acknowledged message growing (the raft log not truncated by snapshots,
// files never released).
func TestSoak(t *testing.T) {
	length := os.Getenv(envSoak)
	if length == "" {
		t.Skipf("soak: set %s=1h (make soak) to run it", envSoak)
	}
	total, err := time.ParseDuration(length)
	if err != nil || total < 2*time.Minute {
		t.Fatalf("%s=%q: want a duration of at least 2m", envSoak, length)
	}
	every := time.Minute
	if e := os.Getenv(envSoakEvery); e != "" {
		if every, err = time.ParseDuration(e); err != nil || every < 20*time.Second {
			t.Fatalf("%s=%q: want a duration of at least 20s", envSoakEvery, e)
		}
	}
	if buildErr != nil || binPath == "" {
		t.Fatalf("rocketraft binary: %v (set ROCKETRAFT_CHAOS=soak too)", buildErr)
	}
	seed := time.Now().UnixNano() % 100000
	if e := os.Getenv(envSoakSeed); e != "" {
		if seed, err = strconv.ParseInt(e, 10, 64); err != nil {
			t.Fatalf("%s=%q: want an integer", envSoakSeed, e)
		}
	}
	// 64 MiB segments: an hour of load makes tens of files, not hundreds, so
	// open files measure leaks rather than data.
	// Beside it the background load every scenario runs (load_test.go: Go,
	// raw and Java producers paced at 45 % of the measured maximum).
	w := &WorkloadOptions{GoProducers: 2, RawProducers: 4, Interval: 10 * time.Millisecond, Readers: true}
	s := begin(t, "SOAK", Options{SegmentSize: 64 << 20}, w)
	s.rep.Seed = seed
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	t.Logf("soak: %v, a fault every %v, seed %d (%s=%d repeats the faults)", total, every, seed, envSoakSeed, seed)

	samples := make(chan soakSample, 1024)
	stopSampling := make(chan struct{})
	sampled := make(chan []soakSample)
	go func() {
		var all []soakSample
		for smp := range samples {
			all = append(all, smp)
		}
		sampled <- all
	}()
	go func() {
		defer close(samples)
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		for {
			for i := range s.c.Nodes {
				samples <- s.sample(i)
			}
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
		}
	}()

	counts := map[string]int{}
	deadline := s.start.Add(total)
	for time.Until(deadline) > every {
		next := time.Now().Add(every)
		f := soakFaults[rng.IntN(len(soakFaults))]
		leader := s.leader()
		other := (leader + 1 + rng.IntN(len(s.c.Nodes)-1)) % len(s.c.Nodes)
		at := s.fault()
		f.do(s, leader, other)
		s.healed()
		counts[f.name]++
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		if _, err := s.c.WaitLeader(ctx, -1, len(s.c.Nodes)); err != nil {
			s.rep.Fail("after %q at %v: no leader with every node listed: %v", f.name, at.Sub(s.start).Round(time.Second), err)
		}
		first := time.Time{}
		for first.IsZero() && ctx.Err() == nil {
			first = s.w.History().FirstAckAfter(at, "raw")
			if first.IsZero() {
				time.Sleep(50 * time.Millisecond)
			}
		}
		cancel()
		if first.IsZero() {
			s.rep.Fail("after %q at %v: no acknowledged send within 60 s", f.name, at.Sub(s.start).Round(time.Second))
		} else {
			s.rep.Failover = append(s.rep.Failover, first.Sub(at))
		}
		time.Sleep(time.Until(next))
	}
	time.Sleep(time.Until(deadline))
	close(stopSampling)
	all := <-sampled

	var names []string
	for name, n := range counts {
		names = append(names, fmt.Sprintf("%s ×%d", name, n))
	}
	slices.Sort(names)
	s.rep.Faults = strings.Join(names, ", ")
	s.rep.Note("fault → first acknowledged raw send (Failover) includes the fault's own length (up to 10 s)")
	for _, line := range soakTable(all, total) {
		s.rep.Note("%s", line)
	}
	for _, p := range soakGrowth(all, total) {
		s.rep.Fail("%s", p)
	}
	s.finish()
}

// sample reads node i's resources; a node that is down reports up=false.
func (s *scenario) sample(i int) soakSample {
	n := s.c.Nodes[i]
	smp := soakSample{at: time.Since(s.start), node: i, acked: s.w.Acks()}
	smp.raftBytes = dirBytes(filepath.Join(n.DataDir, "raft"))
	smp.storeBytes = dirBytes(n.StoreDir())
	pid := n.Proc.Pid()
	if pid == 0 || !n.Proc.Running() {
		return smp
	}
	smp.up = true
	smp.anonRSS = procStatusBytes(pid, "RssAnon:")
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		smp.fds = len(ents)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	smp.goroutines, _ = s.c.Goroutines(ctx, i)
	cancel()
	return smp
}

func procStatusBytes(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func dirBytes(dir string) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	return total
}

// soakWindow is the samples of the up nodes between fractions from and to of the
// run.
func soakWindow(all []soakSample, total time.Duration, from, to float64) []soakSample {
	var out []soakSample
	for _, smp := range all {
		f := float64(smp.at) / float64(total)
		if smp.up && f >= from && f < to {
			out = append(out, smp)
		}
	}
	return out
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func pick(ws []soakSample, f func(soakSample) float64) []float64 {
	out := make([]float64, len(ws))
	for i, w := range ws {
		out[i] = f(w)
	}
	return out
}

// soakGrowth compares the last fifth of the run with the second fifth (the
// first is warm-up: page cache, first segments, connection pools).
func soakGrowth(all []soakSample, total time.Duration) []string {
	early, late := soakWindow(all, total, 0.2, 0.4), soakWindow(all, total, 0.8, 1.01)
	if len(early) == 0 || len(late) == 0 {
		return []string{fmt.Sprintf("too few samples to judge growth (%d early, %d late)", len(early), len(late))}
	}
	var out []string
	check := func(what string, f func(soakSample) float64, ratio, slack float64) {
		e, l := medianOf(pick(early, f)), medianOf(pick(late, f))
		if l > e*ratio+slack {
			out = append(out, fmt.Sprintf("%s grew from %.0f to %.0f (median of the second fifth vs the last; allowed ×%.1f + %.0f)",
				what, e, l, ratio, slack))
		}
	}
	check("goroutines per node", func(s soakSample) float64 { return float64(s.goroutines) }, 1.5, 50)
	check("anonymous RSS per node (MiB)", func(s soakSample) float64 { return float64(s.anonRSS) / (1 << 20) }, 1.5, 64)
	check("open files per node", func(s soakSample) float64 { return float64(s.fds) }, 1.5, 20)
	// Disk grows with the data (no retention during the soak: the checker reads
	// every acknowledged message back); per acknowledged message it must not.
	perAck := func(s soakSample) float64 {
		if s.acked == 0 {
			return 0
		}
		return float64(s.raftBytes+s.storeBytes) / float64(s.acked)
	}
	check("disk bytes per acknowledged message", perAck, 1.5, 512)
	return out
}

// soakTable is the report's resource table: per node, the medians of each
// fifth of the run.
func soakTable(all []soakSample, total time.Duration) []string {
	lines := []string{"resources, median per fifth of the run (anon RSS MiB / goroutines / open files / raft MiB / store MiB):"}
	nodes := 0
	for _, s := range all {
		nodes = max(nodes, s.node+1)
	}
	for n := range nodes {
		row := fmt.Sprintf("  n%d:", n)
		for k := range 5 {
			var ws []soakSample
			for _, s := range soakWindow(all, total, float64(k)/5, float64(k+1)/5+0.01) {
				if s.node == n {
					ws = append(ws, s)
				}
			}
			row += fmt.Sprintf("  %.0f/%.0f/%.0f/%.0f/%.0f",
				medianOf(pick(ws, func(s soakSample) float64 { return float64(s.anonRSS) / (1 << 20) })),
				medianOf(pick(ws, func(s soakSample) float64 { return float64(s.goroutines) })),
				medianOf(pick(ws, func(s soakSample) float64 { return float64(s.fds) })),
				medianOf(pick(ws, func(s soakSample) float64 { return float64(s.raftBytes) / (1 << 20) })),
				medianOf(pick(ws, func(s soakSample) float64 { return float64(s.storeBytes) / (1 << 20) })))
		}
		lines = append(lines, row)
	}
	return lines
}
