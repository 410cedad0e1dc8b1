package metrics

import (
	"strings"
	"testing"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
)

func TestParseLastContact(t *testing.T) {
	for in, want := range map[string]time.Duration{"0": 0, "12.5ms": 12500 * time.Microsecond, "2s": 2 * time.Second} {
		if d, ok := parseLastContact(in); !ok || d != want {
			t.Errorf("%q → %v %v", in, d, ok)
		}
	}
	if _, ok := parseLastContact("never"); ok {
		t.Error("never parsed")
	}
}

func TestRaftInternalsReachTheRegistry(t *testing.T) {
	m := New()
	if err := m.ExportRaftInternals(); err != nil {
		t.Fatal(err)
	}
	// What raft does for every snapshot it persists.
	gometrics.MeasureSince([]string{"raft", "snapshot", "persist"}, time.Now().Add(-20*time.Millisecond))
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if strings.Contains(f.GetName(), "raft_snapshot_persist") {
			return
		}
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	t.Fatalf("raft_snapshot_persist not exported; families: %v", names)
}
