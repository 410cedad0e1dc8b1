package chaos

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"
	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/internal/proctest"
)

// Environment of the suite.
const (
	// envChaos selects the scenarios: "short" (CI subset: K1 with 3 kills, N1, D4,
	// B2, R2 on network namespaces) or "full" (the whole matrix); unset skips
	// every scenario.
	envChaos = "ROCKETRAFT_CHAOS"
	// envReport names a file every scenario appends its report block to.
	envReport = "ROCKETRAFT_CHAOS_REPORT"
)

var (
	binPath  string
	buildErr error
)

func TestMain(m *testing.M) {
	rlog.SetLogLevel("error")
	var tmp string
	if os.Getenv(envChaos) != "" {
		var err error
		tmp, err = os.MkdirTemp("", "rocketraft-chaos-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "chaos: temp dir:", err)
			os.Exit(2)
		}
		// $ROCKETRAFT_BIN, or a fresh build: go test runs us in integration/chaos,
		// the module root is two levels up.
		binPath, buildErr = proctest.Binary(filepath.Join("..", ".."), tmp)
	}
	code := m.Run()
	if tmp != "" {
		_ = os.RemoveAll(tmp)
	}
	os.Exit(code)
}

// level is how much of the matrix a scenario belongs to.
type level int

const (
	inShort level = iota // part of the CI subset
	fullOnly
)

// requireChaos skips unless the suite level includes the scenario.
func requireChaos(t *testing.T, l level) {
	t.Helper()
	switch os.Getenv(envChaos) {
	case "full":
	case "short":
		if l == fullOnly {
			t.Skipf("full-matrix scenario: set %s=full to run it", envChaos)
		}
	default:
		t.Skipf("chaos scenario: set %s=short or %s=full to run it", envChaos, envChaos)
	}
	if buildErr != nil {
		t.Fatalf("rocketraft binary: %v", buildErr)
	}
}

func isFull() bool { return os.Getenv(envChaos) == "full" }

// scenario is one running scenario: its cluster, workload and report.
type scenario struct {
	t   *testing.T
	id  string
	dir string
	c   *Cluster
	w   *Workload
	// loadRun is the background load every scenario runs (load_test.go),
	// recording into the scenario's history, stopped and drained with w.
	loadRun
	cons  *Consumers // consumer groups on the history's topics (scenario_consumers_test.go)
	rep   Report
	h     *History // the history when the scenario runs no workload
	start time.Time
	log   hclog.Logger
}

// begin starts a fresh cluster for scenario id and, unless wopts is nil, a workload.
func begin(t *testing.T, id string, copts Options, wopts *WorkloadOptions) *scenario {
	t.Helper()
	dir, err := os.MkdirTemp("", "rocketraft-chaos-"+id+"-")
	if err != nil {
		t.Fatal(err)
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "chaos", Level: hclog.Warn, Output: os.Stderr})
	copts.Bin, copts.Dir, copts.Logger = binPath, dir, log
	s := &scenario{t: t, id: id, dir: dir, start: time.Now(), log: log, h: &History{}}
	s.rep.Scenario, s.rep.Seed = id, time.Now().UnixNano()%1000
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s.c, err = StartCluster(ctx, copts)
	if err != nil {
		t.Fatalf("%s: start cluster in %s: %v", id, dir, err)
	}
	t.Cleanup(s.cleanup)
	if wopts != nil {
		wopts.Topic = "Chaos" + id
		s.w, err = StartWorkload(ctx, s.c, *wopts)
		if err != nil {
			t.Fatalf("%s: workload: %v\n%s", id, err, s.c.LogTails(30))
		}
		if err := s.w.WaitAcks(ctx, 50); err != nil {
			t.Fatalf("%s: workload never acked 50 sends: %v\n%s", id, err, s.c.LogTails(30))
		}
		s.startConsumers()
	}
	s.startLoad()
	return s
}

// defaultWorkload is a few hundred msgs/s on 2 cores: two Go-client producers, two
// raw producers at 40/s each, readers on.
func defaultWorkload() *WorkloadOptions {
	return &WorkloadOptions{GoProducers: 2, RawProducers: 2, Interval: 25 * time.Millisecond, Readers: true}
}

func (s *scenario) cleanup() {
	if s.load != nil {
		s.load.Stop()
	}
	if s.w != nil {
		s.w.Stop()
	}
	if s.cons != nil {
		s.cons.Stop()
	}
	s.c.StopAll()
	if s.t.Failed() {
		s.t.Logf("%s: kept history, logs and data dirs in %s", s.id, s.dir)
		return
	}
	_ = os.RemoveAll(s.dir)
}

// leader asks the nameserver who brokerId 0 is and cross-checks with the nodes'
// own view, waiting up to 30 s for the two to agree.
func (s *scenario) leader() int {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		ns, err := s.c.Leader(ctx)
		if err == nil && ns == s.c.RaftLeader(ctx) {
			return ns
		}
		select {
		case <-ctx.Done():
			s.t.Fatalf("%s: nameserver and raft never agreed on a leader (ns %d, %v)\n%s", s.id, ns, err, s.c.LogTails(30))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// finish heals, waits for convergence, drains, stops and reads every replica,
// runs the checks, prints the report block and fails the test on any problem.
func (s *scenario) finish() {
	s.t.Helper()
	s.stopLoad()
	if s.w != nil {
		s.w.Stop()
	}
	s.c.HealAll()
	for i, n := range s.c.Nodes {
		if !n.Proc.Running() {
			if err := s.c.Start(i); err != nil {
				s.t.Fatalf("%s: restart n%d: %v", s.id, i, err)
			}
		}
		n.Proc.Resume()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := s.c.WaitLeader(ctx, -1, len(s.c.Nodes)); err != nil {
		s.rep.Fail("no leader with every node listed after healing: %v", err)
	}
	if err := s.c.WaitConverged(ctx); err != nil {
		s.rep.Fail("%v", err)
	}
	s.drainConsumers()
	// The consumer wait can take most of ctx's 90 s (an orderly group waits out
	// the new leader's lock grace window): the final drain gets its own time
	// (found by the full K1, whose drain failed on an expired context).
	cancel()
	ctx, cancel = context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var drain map[QueueKey][]string
	var keep func(string) bool
	h := s.h
	if s.w != nil {
		h = s.w.History()
		topics := map[string]bool{s.w.Topic(): true}
		workloads := []*Workload{s.w}
		if s.load != nil {
			topics[s.load.Topic()] = true
			workloads = append(workloads, s.load.Workload())
		}
		keep = func(t string) bool { return topics[t] }
		drain = map[QueueKey][]string{}
		for _, w := range workloads {
			d, err := w.Drain(ctx)
			if err != nil {
				s.rep.Fail("final drain of %s: %v", w.Topic(), err)
				drain = nil
				break
			}
			maps.Copy(drain, d)
		}
	}
	logs, err := s.c.StopAndReadReplicas(keep)
	if err != nil {
		s.rep.Fail("read replicas: %v", err)
	}
	s.noteLoadAuto()
	rep := Check(h, logs, drain)
	rep.Replicas = len(s.c.Nodes) // a replica that could not be read is not identical
	rep.Scenario, rep.Seed, rep.Faults = s.rep.Scenario, s.rep.Seed, s.rep.Faults
	rep.Failover, rep.NSFailover = s.rep.Failover, s.rep.NSFailover
	rep.Notes, rep.Failures = s.rep.Notes, append(rep.Failures, s.rep.Failures...)
	rep.Duration = time.Since(s.start)
	s.report(&rep)
}

// report prints the block, appends it to $ROCKETRAFT_CHAOS_REPORT and fails the
// test if the report is not OK.
func (s *scenario) report(rep *Report) {
	s.t.Helper()
	block := rep.String()
	s.t.Logf("\n%s", block)
	if path := os.Getenv(envReport); path != "" {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			fmt.Fprintf(f, "%s\n\n", block)
			_ = f.Close()
		}
	}
	if !rep.OK() {
		// Next to the kept data dirs too: a run's output is easily lost
		// (one R3 failure's block was), the directory is not.
		_ = os.WriteFile(filepath.Join(s.dir, "report.txt"), []byte(block+"\n"), 0o644)
		s.keepHistory()
		s.t.Errorf("%s failed its checks (details above)\n%s", s.id, s.c.LogTails(40))
	}
}

// keepHistory writes the recorded history next to the kept data dirs.
func (s *scenario) keepHistory() {
	var b strings.Builder
	for _, op := range s.history().Sends() {
		fmt.Fprintf(&b, "send %s %s #%d %s %s off=%d addr=%s call=%s ret=%s err=%q\n", op.Client, op.ID, op.Attempt, op.Queue, op.Outcome,
			op.Offset, op.Addr, op.Call.Format(time.RFC3339Nano), op.Return.Format(time.RFC3339Nano), op.Err)
	}
	for _, r := range s.history().Reads() {
		fmt.Fprintf(&b, "read %s s%d %s@%d %s %s\n", r.Client, r.Session, r.Queue, r.Offset, r.ID, r.At.Format(time.RFC3339Nano))
	}
	if s.w != nil { // B2 runs no workload of its own kind
		b.WriteString(consumerHistoryText(s.w.History()))
	}
	_ = os.WriteFile(filepath.Join(s.dir, "history.txt"), []byte(b.String()), 0o644)
}

// sleep waits d while the workload runs.
func sleep(d time.Duration) { time.Sleep(d) }
