package broker

import (
	"strings"
	"testing"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
)

func TestRaftInternalsReachTheRegistry(t *testing.T) {
	m := NewMetrics()
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
