package archtest

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/rocketraft/rocketraft"

// allowed lists, for every production package, the project packages it may import
// directly (design.md §1). Imports flow one way; anything not listed is a violation.
// Every key and entry must name a package that exists (TestImportRules checks it), so
// the rules cannot keep allowing a package that was planned, renamed or removed.
var allowed = map[string][]string{
	"cmd/rocketraft": {"config", "broker", "nameserver", "fsm", "raftlog", "store", "transport", "internal/bench", "internal/admin", "console"},
	// The web console is a client like `rocketraft admin`: it reaches the
	// cluster through internal/admin and never links broker internals.
	"console":    {"internal/admin", "transport", "config", "nameserver"},
	"config":     {},
	"broker":     {"fsm", "raftlog", "store", "transport", "nameserver"},
	"nameserver": {"transport"},
	"fsm":        {"store"},
	"raftlog":    {"store"},
	"store":      {},
	"transport":  {},
}

type listedPackage struct {
	ImportPath   string
	Dir          string
	Imports      []string
	TestImports  []string
	XTestImports []string
	GoFiles      []string
}

func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []listedPackage
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

func rel(importPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(importPath, module), "/")
}

// within reports whether package p is pkg or one of its sub-packages.
func within(p, pkg string) bool {
	return p == pkg || strings.HasPrefix(p, pkg+"/")
}

// testHarness reports the internal packages that exist for tests: an in-process
// group, a replica double, and the real-process harness the black-box suites share.
func testHarness(p string) bool {
	for _, h := range []string{"internal/testcluster", "internal/fakereplica", "internal/proctest"} {
		if p == h || strings.HasPrefix(p, h+"/") {
			return true
		}
	}
	return false
}

// topLevel maps a package to the rule that governs it: sub-packages of a listed
// package inherit its rule (store/x is governed by store).
func topLevel(p string) (string, bool) {
	for key := range allowed {
		if within(p, key) {
			return key, true
		}
	}
	return "", false
}

// unknownPackages lists, sorted, the rule keys and allowed imports of rules that match
// no package in pkgs (paths relative to the module), in the form "key" or "key -> entry".
func unknownPackages(rules map[string][]string, pkgs []string) []string {
	exists := func(name string) bool {
		for _, p := range pkgs {
			if within(p, name) {
				return true
			}
		}
		return false
	}
	var unknown []string
	for key, entries := range rules {
		if !exists(key) {
			unknown = append(unknown, key)
		}
		for _, e := range entries {
			if !exists(e) {
				unknown = append(unknown, key+" -> "+e)
			}
		}
	}
	sort.Strings(unknown)
	return unknown
}

func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	var names []string
	for _, p := range pkgs {
		names = append(names, rel(p.ImportPath))
	}
	for _, u := range unknownPackages(allowed, names) {
		t.Errorf("allowed names %s: no such package in the module", u)
	}
	for _, p := range pkgs {
		self := rel(p.ImportPath)
		rule, governed := topLevel(self)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := rel(imp)
			if testHarness(dep) && !strings.HasPrefix(self, "integration") {
				t.Errorf("%s imports %s: test harnesses may only be imported by tests (and the black-box suites under integration/)", self, dep)
				continue
			}
			if !governed {
				continue // internal helpers and integration are checked by the rules of their importers
			}
			if depRule, ok := topLevel(dep); ok && depRule == rule {
				continue // within one concept
			}
			ok := false
			for _, a := range allowed[rule] {
				if within(dep, a) {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s imports %s: not allowed by design.md §1 (allowed: %v)", self, dep, allowed[rule])
			}
		}
		// store must never know about raft (design.md §1); transport may use raft's
		// types for the stream layer only.
		if rule == "store" || rule == "config" || rule == "nameserver" {
			for _, imp := range p.Imports {
				if strings.HasPrefix(imp, "github.com/hashicorp/raft") {
					t.Errorf("%s imports %s: only fsm, raftlog, broker and transport may use raft", self, imp)
				}
			}
		}
		for _, imp := range p.Imports {
			if imp == "github.com/spf13/viper" && rule != "config" && self != "cmd/rocketraft" {
				t.Errorf("%s imports viper: only config may", self)
			}
		}
	}
}

func TestUnknownPackages(t *testing.T) {
	rules := map[string][]string{
		"cmd/tool": {"store", "store/index", "internal/gone"},
		"store":    {},
		"planned":  {"store"},
		"broker":   {"broker/sub"},
	}
	pkgs := []string{"cmd/tool", "store", "store/index", "broker/node"}
	got := strings.Join(unknownPackages(rules, pkgs), "; ")
	// "broker" has only sub-packages and still governs them; "broker/sub" is not one.
	want := "broker -> broker/sub; cmd/tool -> internal/gone; planned"
	if got != want {
		t.Fatalf("unknownPackages = %q, want %q", got, want)
	}
}

func TestEveryPackageHasDocGo(t *testing.T) {
	for _, p := range listPackages(t) {
		if _, err := os.Stat(filepath.Join(p.Dir, "doc.go")); err != nil {
			t.Errorf("package %s has no doc.go", rel(p.ImportPath))
		}
	}
}

// brokerRooms lists, for every room of broker/, the other rooms it may import
// (docs/architecture.md): the rooms form floors, and a room never imports one
// on its own floor or above. The broker package itself wires them all.
var brokerRooms = map[string][]string{
	"broker/loop":        {},
	"broker/filter":      {},
	"broker/node":        {"broker/loop"},
	"broker/replica":     {"broker/node"},
	"broker/route":       {"broker/replica"},
	"broker/offsets":     {"broker/replica"},
	"broker/clients":     {"broker/route", "broker/filter"},
	"broker/metrics":     {"broker/replica", "broker/route"},
	"broker/stats":       {"broker/route"},
	"broker/schedule":    {"broker/replica", "broker/route", "broker/loop"},
	"broker/transaction": {"broker/replica", "broker/route", "broker/loop", "broker/schedule"},
	"broker/clientapi": {"broker/replica", "broker/route", "broker/clients", "broker/offsets",
		"broker/schedule", "broker/transaction"},
	"broker/adminapi": {"broker/replica", "broker/route", "broker/clients", "broker/offsets", "broker/auth", "broker/stats"},
	"broker/auth":     {"broker/route", "broker/clients"},
}

func TestBrokerRoomsImportDownOnly(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range listPackages(t) {
		self := rel(p.ImportPath)
		if !strings.HasPrefix(self, "broker/") {
			continue
		}
		rules, ok := brokerRooms[self]
		if !ok {
			t.Errorf("%s: a room of broker/ with no entry in brokerRooms; add it with the rooms it may import", self)
			continue
		}
		seen[self] = true
		for _, imp := range p.Imports {
			dep := rel(imp)
			if !strings.HasPrefix(imp, module) || !strings.HasPrefix(dep, "broker") {
				continue
			}
			if dep == "broker" || !slices.Contains(rules, dep) {
				t.Errorf("%s imports %s: rooms import only the rooms below them (allowed: %v)", self, dep, rules)
			}
		}
	}
	for room := range brokerRooms {
		if !seen[room] {
			t.Errorf("brokerRooms names %s, which does not exist", room)
		}
	}
}
