//go:build perf

package perf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/bench"
)

// workload is one row of the comparison; bench holds `rocketraft bench
// produce` flags (rocketraft and Apache RocketMQ), jsdrive the driver's flags
// for the same work on JetStream (nil: no JetStream equivalent).
type workload struct {
	name, desc string
	bench      []string
	jsdrive    []string
}

var workloads = []workload{
	{"async", "async, 1 producer, 256 in flight",
		[]string{"--client", "native", "--mode", "async", "--producers", "1", "--window", "256"},
		[]string{"-workload", "async", "-window", "256"}},
	{"async-rmq", "async, 1 producer, 256 in flight, ROCKETMQ headers",
		[]string{"--client", "native", "--mode", "async", "--producers", "1", "--window", "256", "--serialize", "rocketmq"},
		nil}, // JetStream's row is async's
	{"sync1", "sync, 1 producer",
		[]string{"--client", "native", "--mode", "sync", "--producers", "1"},
		[]string{"-workload", "sync", "-producers", "1"}},
	{"sync16", "sync, 16 producers",
		[]string{"--client", "native", "--mode", "sync", "--producers", "16"},
		[]string{"-workload", "sync", "-producers", "16"}},
	{"go64", "official Go client, 64 sync producers",
		[]string{"--client", "rocketmq-go", "--mode", "sync", "--producers", "64"}, nil},
}

// result is one measured run.
type result struct {
	System       string  `json:"system"`
	Workload     string  `json:"workload"`
	Round        int     `json:"round"`
	N            int     `json:"n"`
	Errors       int     `json:"errors"`
	MsgsPerSec   float64 `json:"msgsPerSec"`
	P50Ms        float64 `json:"p50Ms"`
	P99Ms        float64 `json:"p99Ms"`
	ClientCPUSec float64 `json:"clientCpuSec"`
	ServerCPUSec float64 `json:"serverCpuSec"`
}

type settings struct {
	bin, jsdrive, rocketmqLib string
	n, rounds                 int
	systems, workloads        []string
	out                       string
	// byWorkload (PERF_ORDER=workload) runs each workload on every system in
	// turn, with every system's group up for the whole round (schedule).
	byWorkload bool
}

func loadSettings(t *testing.T) settings {
	s := settings{
		bin: os.Getenv("ROCKETRAFT_BIN"), jsdrive: os.Getenv("PERF_JSDRIVE"), rocketmqLib: os.Getenv("PERF_ROCKETMQ_LIB"),
		n: 100000, rounds: 3, out: os.Getenv("PERF_OUT"),
		systems:   []string{"rocketraft", "jetstream-durable", "jetstream-lazy", "rocketmq", "rocketmq-syncflush"},
		workloads: []string{"async", "async-rmq", "sync1", "sync16", "go64"},
	}
	s.n, s.rounds = envPositiveInt(t, "PERF_N", s.n), envPositiveInt(t, "PERF_ROUNDS", s.rounds)
	if e := os.Getenv("PERF_SYSTEMS"); e != "" {
		s.systems = strings.Split(e, ",")
	}
	if e := os.Getenv("PERF_WORKLOADS"); e != "" {
		s.workloads = strings.Split(e, ",")
	}
	switch e := os.Getenv("PERF_ORDER"); e {
	case "", "system":
	case "workload":
		s.byWorkload = true
	default:
		t.Fatalf("PERF_ORDER=%q: want system (each system runs every workload, then the next) or workload (each workload runs on every system in turn)", e)
	}
	if s.bin == "" {
		t.Fatal("ROCKETRAFT_BIN must name the rocketraft binary (make bench-compare sets it)")
	}
	for _, sys := range s.systems {
		switch {
		case isJetStream(sys) && s.jsdrive == "":
			t.Fatalf("system %s needs PERF_JSDRIVE (built from integration/perf/jetstream)", sys)
		case strings.HasPrefix(sys, "rocketmq") && s.rocketmqLib == "":
			t.Fatalf("system %s needs PERF_ROCKETMQ_LIB (integration/perf/rocketmq/target/lib after mvn package)", sys)
		case strings.HasPrefix(sys, "rocketraft"):
			if _, err := newRocketraftSystem(s.bin, sys); err != nil {
				t.Fatalf("PERF_SYSTEMS: %v", err)
			}
		case isJetStream(sys):
			if _, _, err := parseJetStreamSystem(sys); err != nil {
				t.Fatalf("PERF_SYSTEMS: %v", err)
			}
		case !slices.Contains([]string{"rocketmq", "rocketmq-syncflush"}, sys):
			t.Fatalf("PERF_SYSTEMS: unknown system %q", sys)
		}
	}
	for _, w := range s.workloads {
		if !slices.ContainsFunc(workloads, func(x workload) bool { return x.name == w }) {
			t.Fatalf("PERF_WORKLOADS: unknown workload %q", w)
		}
	}
	return s
}

// TestBenchCompare runs every selected workload on every selected system,
// round after round in a rotated order, and writes the report.
func TestBenchCompare(t *testing.T) {
	s := loadSettings(t)
	var results []result
	raw := filepath.Join(t.TempDir(), "results.jsonl")
	if s.out != "" {
		raw = strings.TrimSuffix(s.out, filepath.Ext(s.out)) + ".jsonl"
	}
	rawf, err := os.Create(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer rawf.Close()
	record := func(r result) {
		results = append(results, r)
		b, _ := json.Marshal(r)
		fmt.Fprintln(rawf, string(b))
		t.Logf("round %d %-18s %-7s %8.0f msgs/s  p50 %6.2f ms  p99 %7.2f ms  server %.2f s  client %.2f s  errors %d",
			r.Round, r.System, r.Workload, r.MsgsPerSec, r.P50Ms, r.P99Ms, r.ServerCPUSec, r.ClientCPUSec, r.Errors)
	}
	var disks []diskRound
	for round := 1; round <= s.rounds; round++ {
		d, err := probeDisk(s.bin, t.TempDir(), round)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		disks = append(disks, d)
		t.Logf("round %d disk: 4 KiB appends p50 %.2f ms p99 %.2f ms, 128 KiB p50 %.2f ms p99 %.2f ms, 4 KiB × 3 at once p50 %.2f ms p99 %.2f ms",
			round, d.Small.P50Ms, d.Small.P99Ms, d.Large.P50Ms, d.Large.P99Ms, d.Shared.P50Ms, d.Shared.P99Ms)
		runRound(t, s, round, record)
	}
	report := render(s, results, disks)
	t.Log("\n" + report)
	if s.out != "" {
		if err := os.WriteFile(s.out, []byte(report), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runRound starts the round's systems, runs its schedule and records every
// result. A system's group stops after its last workload in the schedule.
func runRound(t *testing.T, s settings, round int, record func(result)) {
	steps := schedule(s.systems, selected(s.workloads), round, s.byWorkload)
	g := &roundGroups{t: t, s: s, round: round, up: map[string]remotingSystem{}, dirs: map[string]string{}}
	defer g.stopAll()
	for _, sys := range s.systems {
		g.dirs[sys] = t.TempDir()
		if s.byWorkload && !isJetStream(sys) {
			g.get(sys) // every group up before the first measurement, none started between two
		}
	}
	last := map[string]int{}
	for i, st := range steps {
		last[st.system] = i
	}
	for i, st := range steps {
		var r result
		var err error
		if isJetStream(st.system) {
			r, err = runJetStream(s, st.system, st.w, g.dirs[st.system]) // jsdrive starts its own servers
		} else {
			r, err = runBench(s, g.get(st.system), st.w)
		}
		if err != nil {
			t.Fatalf("round %d %s %s: %v", round, st.system, st.w.name, err)
		}
		r.Round = round
		record(r)
		if last[st.system] == i {
			g.stop(st.system)
		}
	}
}

// roundGroups holds the remoting systems' groups that are up in one round, and
// every system's data directory for it.
type roundGroups struct {
	t     *testing.T
	s     settings
	round int
	up    map[string]remotingSystem
	dirs  map[string]string
}

// get is sys's group, started on first use.
func (g *roundGroups) get(sys string) remotingSystem {
	if rs := g.up[sys]; rs != nil {
		return rs
	}
	rs, err := newRemotingSystem(g.s, sys)
	if err != nil {
		g.t.Fatal(err)
	}
	if err := rs.start(g.t, g.dirs[sys]); err != nil {
		rs.stop()
		g.t.Fatalf("round %d: start %s: %v\n%s", g.round, sys, err, tails(g.dirs[sys]))
	}
	g.up[sys] = rs
	return rs
}

// stop stops sys's group, if it is up, and deletes its data.
func (g *roundGroups) stop(sys string) {
	if rs := g.up[sys]; rs != nil {
		rs.stop()
		delete(g.up, sys)
	}
	if dir, ok := g.dirs[sys]; ok {
		removeRunDir(g.t, dir)
		delete(g.dirs, sys)
	}
}

func (g *roundGroups) stopAll() {
	for sys := range g.dirs {
		g.stop(sys)
	}
}

// step is one measured run in a round's schedule.
type step struct {
	system string
	w      workload
}

// schedule is the order a round runs in. By system (the default), each system
// runs every workload on one group and stops before the next starts, in the
// rotated order of the round. By workload, each workload runs on every system
// in turn, and the systems' order rotates with the workload too, so each
// pair runs seconds apart instead of minutes: this VM's fast and slow spells
// last minutes (docs/performance.md, thirty-sixth pass). JetStream has no row
// for a workload without a jsdrive equivalent.
func schedule(systems []string, ws []workload, round int, byWorkload bool) []step {
	var out []step
	add := func(sys string, w workload) {
		if isJetStream(sys) && w.jsdrive == nil {
			return
		}
		out = append(out, step{sys, w})
	}
	if byWorkload {
		for i, w := range ws {
			for _, sys := range rotated(systems, round+i) {
				add(sys, w)
			}
		}
		return out
	}
	for _, sys := range rotated(systems, round) {
		for _, w := range ws {
			add(sys, w)
		}
	}
	return out
}

// removeRunDir deletes a finished run's data at once. Every broker
// pre-allocates its next 1 GiB CommitLog segment, so one system's group holds
// gigabytes; left for the test's end, a run of many rounds fills a shared disk
// past the brokers' disk guards (seen: a round refused sends at 90 % used).
func removeRunDir(t *testing.T, dir string) {
	if err := os.RemoveAll(dir); err != nil {
		t.Logf("remove %s: %v", dir, err)
	}
}

// envPositiveInt is the positive integer in the environment variable key, or
// def when it is unset.
func envPositiveInt(t *testing.T, key string, def int) int {
	t.Helper()
	e := os.Getenv(key)
	if e == "" {
		return def
	}
	n, err := strconv.Atoi(e)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", key, e)
	}
	return n
}

// rotated is the order systems run in round (from 1): A B C, B C A, C A B.
func rotated(systems []string, round int) []string {
	k := (round - 1) % len(systems)
	return append(slices.Clone(systems[k:]), systems[:k]...)
}

func selected(names []string) []workload {
	var out []workload
	for _, w := range workloads {
		if slices.Contains(names, w.name) {
			out = append(out, w)
		}
	}
	return out
}

// runBench creates a fresh topic, warms the system up outside the measurement, then runs the workload with `rocketraft bench
// produce` and reads its JSON summary; server CPU is the /proc delta over the
// measured process.
func runBench(s settings, rs remotingSystem, w workload) (result, error) {
	res := result{System: rs.name(), Workload: w.name, N: s.n}
	topic := "PerfCompare_" + w.name
	if err := createTopic(s.bin, rs.namesrv(), rs.cluster(), topic); err != nil {
		return res, err
	}
	common := []string{"bench", "produce", "--namesrv", rs.namesrv(), "--topic", topic, "--size", "1024", "--key-prefix", ""}
	// The same warm-up for every system: a tenth of the run, at least 2000
	// (the JVMs need it for their JIT as much as the page cache does).
	warm := append(slices.Clone(common), "--count", strconv.Itoa(max(2000, s.n/10)), "--producers", "16")
	if out, err := exec.Command(s.bin, warm...).CombinedOutput(); err != nil {
		return res, fmt.Errorf("warm-up: %v: %s", err, lastLines(out, 10))
	}
	args := append(append(slices.Clone(common), "--count", strconv.Itoa(s.n), "--json", "-"), w.bench...)
	srv0 := procCPU(rs.serverPIDs())
	lines, ps, err := benchRun(s.bin, args...)
	if err != nil {
		return res, err
	}
	res.ServerCPUSec = procCPU(rs.serverPIDs()) - srv0
	res.ClientCPUSec = (ps.UserTime() + ps.SystemTime()).Seconds()
	sum := lines[len(lines)-1]
	lat, ok := sum.Latency["latency"]
	if !ok {
		return res, fmt.Errorf("bench summary has no latency series: %v", sum.Latency)
	}
	res.Errors = int(sum.Failed)
	res.MsgsPerSec, res.P50Ms, res.P99Ms = sum.MsgsPerS, lat.P50Ms, lat.P99Ms
	if sum.Msgs+sum.Failed < int64(s.n) {
		return res, fmt.Errorf("bench sent %d and failed %d of %d", sum.Msgs, sum.Failed, s.n)
	}
	return res, nil
}

// runJetStream runs jsdrive once: it starts its own three servers, runs the
// workload and reports its own and its servers' CPU.
func runJetStream(s settings, sys string, w workload, dir string) (result, error) {
	ports, err := freePorts(6)
	if err != nil {
		return result{}, err
	}
	base, procs, err := parseJetStreamSystem(sys)
	if err != nil {
		return result{}, err
	}
	args := []string{"-ports", fmt.Sprintf("%d,%d,%d", ports[0], ports[1], ports[2]),
		"-routes", fmt.Sprintf("%d,%d,%d", ports[3], ports[4], ports[5]),
		"-data", filepath.Join(dir, "js-"+w.name), "-n", strconv.Itoa(s.n), "-size", "1024",
		"-server-procs", strconv.Itoa(procs)}
	if base == "jetstream-durable" {
		args = append(args, "-durable")
	}
	cmd := exec.Command(s.jsdrive, append(args, w.jsdrive...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("jsdrive: %v: %s", err, lastLines(stderr.Bytes(), 10))
	}
	var r result
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &r); err != nil {
		return result{}, fmt.Errorf("jsdrive output %q: %v", stdout.String(), err)
	}
	r.System, r.Workload = sys, w.name
	return r, nil
}

// isJetStream reports whether a PERF_SYSTEMS entry is a JetStream system,
// which jsdrive runs (servers included) once per workload.
func isJetStream(sys string) bool { return strings.HasPrefix(sys, "jetstream") }

// parseJetStreamSystem parses a PERF_SYSTEMS entry for JetStream:
// "jetstream-durable" or "jetstream-lazy", optionally followed by
// ":maxprocs=N", which runs each nats-server with GOMAXPROCS=N, as decision
// 0023 has rocketraft's co-located brokers do (0: Go's default).
func parseJetStreamSystem(sys string) (base string, procs int, err error) {
	base, opt, hasOpt := strings.Cut(sys, ":")
	if base != "jetstream-durable" && base != "jetstream-lazy" {
		return "", 0, fmt.Errorf("system %q: want jetstream-durable or jetstream-lazy[:maxprocs=N]", sys)
	}
	if !hasOpt {
		return base, 0, nil
	}
	v, ok := strings.CutPrefix(opt, "maxprocs=")
	if n, err := strconv.Atoi(v); ok && err == nil && n >= 1 {
		return base, n, nil
	}
	return "", 0, fmt.Errorf("system %q: %q is not maxprocs=N with N ≥ 1", sys, opt)
}

// procCPU sums utime+stime of pids from /proc/<pid>/stat, in seconds
// (USER_HZ is 100 on Linux).
func procCPU(pids []int) float64 {
	total := 0.0
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseFloat(f[11], 64)
		k, _ := strconv.ParseFloat(f[12], 64)
		total += (u + k) / 100
	}
	return total
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func tails(dir string) string {
	var b strings.Builder
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		fmt.Fprintf(&b, "--- %s ---\n%s\n", filepath.Base(l), lastLines(data, 15))
	}
	return b.String()
}

// render is the Markdown report: per workload and system the median and range
// over rounds, CPU per 100k messages, and rocketraft's ratio of medians against
// each peer.
func render(s settings, rs []result, disks []diskRound) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d rounds, N=%d per run, 1 KiB bodies, %s; systems started fresh each round in rotated order.\n\n",
		s.rounds, s.n, time.Now().UTC().Format("2006-01-02"))
	b.WriteString("| workload | system | msgs/s median (min–max) | p50 ms | p99 ms | server CPU s / 100k | client CPU s / 100k | errors |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	medians := map[[2]string]float64{}
	for _, w := range selected(s.workloads) {
		for _, sys := range s.systems {
			var tput, p50, p99, srv, cli []float64
			errs := 0
			for _, r := range rs {
				if r.System != sys || r.Workload != w.name {
					continue
				}
				tput = append(tput, r.MsgsPerSec)
				p50, p99 = append(p50, r.P50Ms), append(p99, r.P99Ms)
				per := 100000 / float64(r.N)
				srv, cli = append(srv, r.ServerCPUSec*per), append(cli, r.ClientCPUSec*per)
				errs += r.Errors
			}
			if len(tput) == 0 {
				continue
			}
			medians[[2]string{w.name, sys}] = median(tput)
			fmt.Fprintf(&b, "| %s | %s | %.0f (%.0f–%.0f) | %.2f | %.2f | %.2f | %.2f | %d |\n", w.desc, sys,
				median(tput), slices.Min(tput), slices.Max(tput), median(p50), median(p99), median(srv), median(cli), errs)
		}
	}
	b.WriteString("\nrocketraft's throughput as a ratio of each peer's: of the medians, then round by round:\n\n| workload |")
	var peers []string
	for _, sys := range s.systems {
		if sys != "rocketraft" {
			peers = append(peers, sys)
			fmt.Fprintf(&b, " vs %s |", sys)
		}
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(peers)) + "\n")
	for _, w := range selected(s.workloads) {
		fmt.Fprintf(&b, "| %s |", w.desc)
		for _, p := range peers {
			ours, theirs := medians[[2]string{w.name, "rocketraft"}], medians[[2]string{w.name, p}]
			if ours == 0 || theirs == 0 {
				b.WriteString(" — |")
				continue
			}
			fmt.Fprintf(&b, " %.2f×%s |", ours/theirs, byRound(roundRatios(rs, w.name, "rocketraft", p)))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nThe disk at each round's start, before any system ran (`rocketraft bench disk`: pwrite + fdatasync into a fallocated file, one at a time; every acknowledged send waits for such appends):\n\n")
	b.WriteString("| round | 4 KiB appends p50 / p99 ms | 128 KiB appends p50 / p99 ms | 4 KiB, 3 appenders at once, p50 / p99 ms |\n|---|---|---|---|\n")
	for _, d := range disks {
		fmt.Fprintf(&b, "| %d | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f |\n", d.Round, d.Small.P50Ms, d.Small.P99Ms,
			d.Large.P50Ms, d.Large.P99Ms, d.Shared.P50Ms, d.Shared.P99Ms)
	}
	return b.String()
}

// roundRatios is ours's msgs/s over peer's in each round where both ran
// workload, in round order. A run's medians can hide how far apart the rounds
// were: A/A runs (one build under two labels) gave ratios of medians of
// 0.77-1.90 and single rounds of 0.62-2.69 (docs/performance.md, thirty-sixth pass).
func roundRatios(rs []result, workload, ours, peer string) []float64 {
	ourRate, peerRate := map[int]float64{}, map[int]float64{}
	for _, r := range rs {
		switch {
		case r.Workload != workload:
		case r.System == ours:
			ourRate[r.Round] = r.MsgsPerSec
		case r.System == peer:
			peerRate[r.Round] = r.MsgsPerSec
		}
	}
	var out []float64
	for _, round := range slices.Sorted(maps.Keys(ourRate)) {
		if o, p := ourRate[round], peerRate[round]; o > 0 && p > 0 {
			out = append(out, o/p)
		}
	}
	return out
}

// byRound formats per-round ratios for a ratio cell: " (1.87, 1.21, 1.08)",
// or nothing for a single round (the cell already is that round's ratio).
func byRound(ratios []float64) string {
	if len(ratios) < 2 {
		return ""
	}
	parts := make([]string, len(ratios))
	for i, r := range ratios {
		parts[i] = strconv.FormatFloat(r, 'f', 2, 64)
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// diskRound is the disk probe at a round's start: small appends (a sync
// producer's entry) and large ones (an entry under an async window).
type diskRound struct {
	Round        int
	Small, Large bench.JSONStats
	// Shared is three 4 KiB appenders at once: the three nodes of a group on
	// this one disk.
	Shared bench.JSONStats
}

// probeDisk runs `rocketraft bench disk` in dir three times: 500 appends of
// 4 KiB, 200 of 128 KiB, and 600 of 4 KiB by three appenders at once (under a
// second each on the disks we use).
func probeDisk(bin, dir string, round int) (diskRound, error) {
	d := diskRound{Round: round}
	for _, p := range []struct {
		size, count, parallel int
		into                  *bench.JSONStats
	}{{4 << 10, 500, 1, &d.Small}, {128 << 10, 200, 1, &d.Large}, {4 << 10, 600, 3, &d.Shared}} {
		out, err := exec.Command(bin, "bench", "disk", "--dir", dir, "--size", strconv.Itoa(p.size),
			"--count", strconv.Itoa(p.count), "--parallel", strconv.Itoa(p.parallel), "--json", "-").Output()
		if err != nil {
			return d, fmt.Errorf("bench disk: %v", err)
		}
		var line bench.DiskJSON
		if err := json.Unmarshal(out, &line); err != nil || line.Appends != int64(p.count) {
			return d, fmt.Errorf("bench disk printed %q (%v), want a line of %d appends", out, err, p.count)
		}
		*p.into = line.Append
	}
	return d, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
