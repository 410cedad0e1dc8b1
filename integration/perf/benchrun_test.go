//go:build perf

package perf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// benchLine is one JSON line of `rocketraft bench`: an interval or the summary.
type benchLine struct {
	Type     string  `json:"type"`
	ElapsedS float64 `json:"elapsed_s"`
	Msgs     int64   `json:"msgs"`
	Failed   int64   `json:"failed"`
	MsgsPerS float64 `json:"msgs_per_s"`
	Latency  map[string]struct {
		P50Ms  float64 `json:"p50_ms"`
		P99Ms  float64 `json:"p99_ms"`
		P999Ms float64 `json:"p999_ms"`
		MaxMs  float64 `json:"max_ms"`
	} `json:"latency"`
}

// benchLines runs bin with args and returns its JSON lines (args must include
// --json -).
func benchLines(bin string, args ...string) ([]benchLine, error) {
	lines, _, err := benchRun(bin, args...)
	return lines, err
}

// benchRun is benchLines that also returns the finished process, for its CPU
// time.
func benchRun(bin string, args ...string) ([]benchLine, *os.ProcessState, error) {
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("%s: %v: %s", strings.Join(args[:2], " "), err, lastLines(stderr.Bytes(), 10))
	}
	keepHangReport(args, stderr.Bytes())
	var out []benchLine
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l benchLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Type != "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 || out[len(out)-1].Type != "summary" {
		return nil, nil, fmt.Errorf("%s printed no JSON summary: %s", strings.Join(args[:2], " "), lastLines(stderr.Bytes(), 10))
	}
	return out, cmd.ProcessState, nil
}

// TestBenchRunReadsTheSummary runs a stand-in for `rocketraft bench` that
// prints two intervals and a summary, and checks what the harness reads.
func TestBenchRunReadsTheSummary(t *testing.T) {
	script := filepath.Join(t.TempDir(), "bench")
	body := `#!/bin/sh
echo "live text on stdout is ignored"
echo '{"type":"interval","elapsed_s":1,"msgs":0}'
echo '{"type":"interval","elapsed_s":2,"msgs":500}'
echo '{"type":"summary","elapsed_s":3,"msgs":1000,"failed":2,"msgs_per_s":333.3,"latency":{"latency":{"p50_ms":1.5,"p99_ms":9}}}'
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	lines, ps, err := benchRun(script, "bench", "produce")
	if err != nil {
		t.Fatal(err)
	}
	sum := lines[len(lines)-1]
	if len(lines) != 3 || ps == nil || sum.Msgs != 1000 || sum.Failed != 2 || sum.Latency["latency"].P99Ms != 9 {
		t.Fatalf("read %+v, process %v", lines, ps)
	}
	if r := drainRate(lines); r != 500 { // 1000 messages from the end of the first interval (1 s) to 3 s
		t.Fatalf("drain rate %.1f, want 500", r)
	}
	if _, _, err := benchRun("true", "bench", "produce"); err == nil {
		t.Fatal("a run without a summary line was accepted")
	}
}

func TestRotatedOrdersEachRoundFromTheNextSystem(t *testing.T) {
	sys := []string{"a", "b", "c"}
	for round, want := range map[int]string{1: "a b c", 2: "b c a", 3: "c a b", 4: "a b c"} {
		if got := strings.Join(rotated(sys, round), " "); got != want {
			t.Errorf("round %d: %s, want %s", round, got, want)
		}
	}
	if strings.Join(sys, " ") != "a b c" {
		t.Errorf("rotated changed its input: %v", sys)
	}
}

// keepHangReport saves the stderr of a bench run whose client shutdown hung
// (bench writes every goroutine's stack then) to a temporary file and says
// where, so the hang can be diagnosed after the harness moved on.
func keepHangReport(args []string, stderr []byte) {
	if !bytes.Contains(stderr, []byte("shutdown did not return within")) {
		return
	}
	f, err := os.CreateTemp("", "rocketraft-bench-hang-*.txt")
	if err != nil {
		return
	}
	_, _ = f.Write(stderr)
	_ = f.Close()
	fmt.Fprintf(os.Stderr, "%s: the client's shutdown hung; its goroutines are in %s\n", strings.Join(args[:2], " "), f.Name())
}

func TestRocketraftSystemLabels(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "base")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		label, bin string
		extra      []string
	}{
		{"rocketraft", "default", nil},
		{"rocketraft:a=1+b=2", "default", []string{"a=1", "b=2"}},
		{"rocketraft@" + bin, bin, nil},
		{"rocketraft@" + bin + ":a=1", bin, []string{"a=1"}},
	} {
		s, err := newRocketraftSystem("default", tt.label)
		if err != nil {
			t.Fatalf("%s: %v", tt.label, err)
		}
		if s.bin != tt.bin || strings.Join(s.extra, ",") != strings.Join(tt.extra, ",") || s.name() != tt.label {
			t.Fatalf("%s: bin %q extra %q name %q, want %q %q", tt.label, s.bin, s.extra, s.name(), tt.bin, tt.extra)
		}
	}
	for _, bad := range []string{"rocketraftx", "rocketraft:", "rocketraft:a", "rocketraft@", "rocketraft@" + bin + "-missing", "rocketraft@" + filepath.Dir(bin)} {
		if _, err := newRocketraftSystem("default", bad); err == nil {
			t.Fatalf("%s: accepted", bad)
		}
	}
}

func TestJetStreamSystemLabels(t *testing.T) {
	for _, tt := range []struct {
		label, base string
		procs       int
	}{
		{"jetstream-durable", "jetstream-durable", 0},
		{"jetstream-lazy", "jetstream-lazy", 0},
		{"jetstream-lazy:maxprocs=1", "jetstream-lazy", 1},
		{"jetstream-durable:maxprocs=4", "jetstream-durable", 4},
	} {
		base, procs, err := parseJetStreamSystem(tt.label)
		if err != nil || base != tt.base || procs != tt.procs {
			t.Fatalf("%s: %q %d %v, want %q %d", tt.label, base, procs, err, tt.base, tt.procs)
		}
	}
	for _, bad := range []string{"jetstream", "jetstream-fast", "jetstream-lazy:", "jetstream-lazy:maxprocs=0",
		"jetstream-lazy:maxprocs=x", "jetstream-lazy:procs=1"} {
		if _, _, err := parseJetStreamSystem(bad); err == nil {
			t.Fatalf("%s: accepted", bad)
		}
	}
}

// The ratio table gives each round's ratio after the ratio of medians, pairing
// the two systems by round, and skips rounds where one of them has no result.
func TestRenderGivesRatiosRoundByRound(t *testing.T) {
	s := settings{n: 1000, rounds: 3, systems: []string{"rocketraft", "peer"}, workloads: []string{"async", "sync1"}}
	var rs []result
	add := func(sys, w string, round int, rate float64) {
		rs = append(rs, result{System: sys, Workload: w, Round: round, N: 1000, MsgsPerSec: rate})
	}
	// Rounds listed out of order, as a rotated run records them.
	add("peer", "async", 2, 100)
	add("rocketraft", "async", 2, 150)
	add("rocketraft", "async", 1, 200)
	add("peer", "async", 1, 100)
	add("rocketraft", "async", 3, 100)
	add("peer", "async", 3, 100)
	add("rocketraft", "sync1", 1, 30)
	add("peer", "sync1", 1, 10)
	add("rocketraft", "sync1", 2, 40) // the peer failed this round
	report := render(s, rs, nil)
	for _, want := range []string{
		"| async, 1 producer, 256 in flight | 1.50× (2.00, 1.50, 1.00) |",
		"| sync, 1 producer | 3.50× |", // one paired round: no list
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

func TestScheduleBySystemOrByWorkload(t *testing.T) {
	ws := selected([]string{"async", "go64"}) // go64 has no JetStream row
	order := func(steps []step) string {
		var b []string
		for _, st := range steps {
			b = append(b, st.system+"/"+st.w.name)
		}
		return strings.Join(b, " ")
	}
	sys := []string{"a", "jetstream-lazy", "c"}
	for _, tt := range []struct {
		round      int
		byWorkload bool
		want       string
	}{
		{1, false, "a/async a/go64 jetstream-lazy/async c/async c/go64"},
		{2, false, "jetstream-lazy/async c/async c/go64 a/async a/go64"},
		{1, true, "a/async jetstream-lazy/async c/async c/go64 a/go64"},
		{2, true, "jetstream-lazy/async c/async a/async c/go64 a/go64"},
	} {
		if got := order(schedule(sys, ws, tt.round, tt.byWorkload)); got != tt.want {
			t.Errorf("round %d byWorkload=%v:\n got %s\nwant %s", tt.round, tt.byWorkload, got, tt.want)
		}
	}
}
