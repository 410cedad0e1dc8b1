package main

import (
	"strings"
	"testing"
)

// --set replaces a generated key or adds one, and a bad key or value stops
// dev with the broker's own message naming it.
func TestDevSetOverridesAndChecks(t *testing.T) {
	base := "brokerName=broker-a\nmappedFileSizeCommitLog=67108864\nstorePathRootDir=" + t.TempDir() + "\n"
	d := &devCluster{set: []string{"mappedFileSizeCommitLog=134217728", "groupCommitMaxInflight=1"}}
	got, err := d.applySet(base)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(got, "mappedFileSizeCommitLog=") != 1 || !strings.Contains(got, "mappedFileSizeCommitLog=134217728\n") ||
		!strings.Contains(got, "groupCommitMaxInflight=1\n") || !strings.Contains(got, "brokerName=broker-a\n") {
		t.Fatalf("conf after --set:\n%s", got)
	}
	for _, tc := range []struct{ set, want string }{
		{"groupCommitMaxInflight=0", "groupCommitMaxInflight"},
		{"groupCommitMaxInflihgt=1", "unknown key"},
		{"noequals", "want key=value"},
	} {
		d := &devCluster{set: []string{tc.set}}
		if _, err := d.applySet(base); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: err %v, want one naming %q", tc.set, err, tc.want)
		}
	}
}
