package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rocketraft/rocketraft/broker"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/internal/bench"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/nameserver"
)

var flagRef = regexp.MustCompile(`--[a-z][a-z-]*`)

// consume's --count said "0 = run for --duration" while consume had no
// --duration. Every flag a help text of a bench command names must exist on
// that command.
func TestBenchHelpNamesOnlyExistingFlags(t *testing.T) {
	for _, sub := range newBenchCommand().Commands() {
		sub.Flags().VisitAll(func(f *pflag.Flag) {
			for _, ref := range flagRef.FindAllString(f.Usage, -1) {
				if sub.Flags().Lookup(strings.TrimPrefix(ref, "--")) == nil {
					t.Errorf("bench %s --%s: help names %s, which bench %s does not have", sub.Name(), f.Name, ref, sub.Name())
				}
			}
		})
	}
	cmds := map[string]*cobra.Command{}
	for _, sub := range newBenchCommand().Commands() {
		cmds[sub.Name()] = sub
	}
	for name, flags := range map[string][]string{
		"produce": {"rate", "tag", "key-prefix", "delay-level", "property-size", "transaction", "csv", "json", "duration"},
		"consume": {"duration", "tag", "csv", "json", "timeout"},
		"disk":    {"dir", "size", "count", "duration", "parallel", "json"},
	} {
		for _, f := range flags {
			if cmds[name].Flags().Lookup(f) == nil {
				t.Errorf("bench %s has no --%s", name, f)
			}
		}
	}
}

// produce and consume once shared one variable for --group, so the consumer's
// default (registered last) became the producer's group too. Every flag's
// variable must hold its own default after both commands are built.
func TestBenchFlagsKeepTheirDefaults(t *testing.T) {
	for _, sub := range newBenchCommand().Commands() {
		sub.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Value.String() != f.DefValue {
				t.Errorf("bench %s --%s holds %q, but its default is %q", sub.Name(), f.Name, f.Value.String(), f.DefValue)
			}
		})
	}
}

// The operator's page documents every bench flag in its Bench section.
func TestBenchFlagsAreDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "### Bench")
	if i < 0 {
		t.Fatal("docs/operations.md has no ### Bench section")
	}
	section := doc[i:]
	if j := strings.Index(section[len("### Bench"):], "\n#"); j >= 0 {
		section = section[:len("### Bench")+j]
	}
	for _, sub := range newBenchCommand().Commands() {
		sub.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" && !strings.Contains(section, "`--"+f.Name+"`") {
				t.Errorf("bench %s --%s is not in the Bench section of docs/operations.md", sub.Name(), f.Name)
			}
		})
	}
}

// startBenchTarget runs a nameserver and one broker (a fake replica over a
// real store) with topic, and returns the nameserver address.
func startBenchTarget(t *testing.T, topic string, queues int32) string {
	t.Helper()
	ns := nameserver.New(nameserver.Config{ListenAddr: "127.0.0.1:0"}, nil)
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ns.Close() })
	st := fakereplica.OpenStore(t)
	rep := fakereplica.New(st, replica.RoleLeader)
	if err := rep.UpsertTopic(context.Background(), fsm.NewTopic(topic, queues, fsm.PermRead|fsm.PermWrite)); err != nil {
		t.Fatal(err)
	}
	addr := proctest.TestAddr(t)
	b, err := broker.New(broker.Config{ClusterName: "c", BrokerName: "broker-a", ListenAddr: addr, ClientAddr: addr,
		NamesrvAddrs: []string{ns.Addr()}, SelfID: "n0", Peers: []broker.Peer{{ID: "n0", ClientAddr: addr}}}, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return ns.Addr()
}

// The flags reach the run: bench produce with --rate, --csv and --json writes
// files that parse, whose totals are the run's, and whose summary names the
// options given on the command line.
func TestBenchProduceFlagsReachTheRun(t *testing.T) {
	ns := startBenchTarget(t, "Cli", 4)
	dir := t.TempDir()
	csvPath, jsonPath := filepath.Join(dir, "run.csv"), filepath.Join(dir, "run.jsonl")
	cmd := newBenchCommand()
	cmd.SetArgs([]string{"produce", "--namesrv", ns, "--topic", "Cli", "--producers", "2", "--duration", "1s",
		"--rate", "200", "--size", "50", "--tag", "cli", "--property-size", "10", "--csv", csvPath, "--json", jsonPath})
	var err error
	for attempt := 0; attempt < 50; attempt++ { // until the broker's first registration lands
		if err = cmd.Execute(); err == nil || !strings.Contains(err.Error(), "no route") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head, total := rows[0], rows[len(rows)-1]
	col := func(name string) string {
		for i, h := range head {
			if h == name {
				return total[i]
			}
		}
		t.Fatalf("CSV has no column %s: %v", name, head)
		return ""
	}
	if total[0] != "total" || col("msgs") != "200" || col("bytes") != "10000" || col("service_count") != "200" {
		t.Fatalf("CSV total row %v (header %v)", total, head)
	}
	jf, err := os.Open(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	defer jf.Close()
	var last bench.JSONRecord
	sc := bufio.NewScanner(jf)
	lines := 0
	for sc.Scan() {
		lines++
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatalf("JSON line %d: %v", lines, err)
		}
	}
	if last.Type != "summary" || last.Msgs != 200 || last.Run == nil || last.Run.Rate != 200 || last.Run.Tag != "cli" ||
		last.Run.PropertySize != 10 || last.Run.Producers != 2 || last.Run.Group != "rocketraft_bench_producer" || lines-1 != len(rows)-2 {
		t.Fatalf("JSON summary %+v after %d lines (CSV %d rows)", last, lines, len(rows))
	}
}

// bench disk from the command line: its JSON file holds the probe's result.
func TestBenchDiskWritesItsResult(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "disk.json")
	root := newRootCommand()
	root.SetArgs([]string{"bench", "disk", "--dir", dir, "--count", "20", "--size", "8192", "--json", out})
	root.SetOut(&strings.Builder{})
	root.SetErr(&strings.Builder{})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var line bench.DiskJSON
	if err := json.Unmarshal(b, &line); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if line.Appends != 20 || line.Size != 8192 || line.Dir != dir || line.Append.Count != 20 {
		t.Errorf("JSON %+v: want 20 appends of 8192 bytes in %s", line, dir)
	}
	root = newRootCommand()
	root.SetArgs([]string{"bench", "disk", "--dir", dir, "--size", "1"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "--size 1: must be") {
		t.Errorf("--size 1: error %v", err)
	}
}
