package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/integration/chaos"
)

// TestScrubStopsANodeWithCorruptOldSegments: decision 0019. A start checks only the
// last CommitLog segments and the raft entries from the floor up, so a node whose
// raft log was compacted starts over a flipped bit in its first segment; the scrub
// behind it finds the bit and stops the process with an error naming the segment,
// while the other two nodes keep serving.
func TestScrubStopsANodeWithCorruptOldSegments(t *testing.T) {
	// Snapshots every second and 64 trailing entries: the floor leaves the first
	// segment (8 MB here) long before the sends end.
	c := startClusterWith(t, "127.0.0.1", []string{
		"raftSnapshotInterval=1s", "raftSnapshotThreshold=64", "raftTrailingLogs=64",
		"commitLogScrubRate=1073741824",
	})
	out, err := exec.Command(binPath, "bench", "produce", "--namesrv", c.nsAddr, "--topic", "ScrubOld",
		"--count", "48000", "--producers", "2", "--mode", "async", "--window", "32", "--size", "1024").CombinedOutput()
	if err != nil {
		t.Fatalf("bench produce: %v\n%s", err, out)
	}
	leader, err := c.waitLeader(10*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}
	victim := (leader + 1) % groupSize
	time.Sleep(3 * time.Second) // a snapshot and its compaction after the last send
	if !c.nodes[victim].Stop(10 * time.Second) {
		t.Fatalf("n%d did not stop on SIGTERM", victim)
	}
	storeDir := filepath.Join(c.dir, fmt.Sprintf("n%d", victim), "store")
	segs, err := filepath.Glob(filepath.Join(storeDir, "commitlog", "0*"))
	if err != nil || len(segs) < 5 {
		t.Fatalf("n%d has CommitLog segments %v (%v); the test wants at least 5", victim, segs, err)
	}
	rec, err := chaos.FlipBodyBit(storeDir, 0.02)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(rec.File, "00000000000000000000") {
		t.Fatalf("the flipped record is in %s, want the first segment", rec.File)
	}
	if err := c.nodes[victim].Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.nodes[victim].Exited():
	case <-time.After(60 * time.Second):
		t.Fatalf("n%d still runs 60 s after its start over a flipped bit at CommitLog offset %d", victim, rec.Global)
	}
	b, err := os.ReadFile(c.nodes[victim].LogPath)
	if err != nil {
		t.Fatal(err)
	}
	last := string(b[strings.LastIndex(string(b), "=== proctest: start"):]) // this incarnation
	if !strings.Contains(last, "broker serving") {
		t.Errorf("n%d did not start before it stopped: the start itself read the first segment:\n%s", victim, c.nodes[victim].Tail(10))
	}
	if !strings.Contains(last, "stopping: the CommitLog holds corrupt committed data") || !strings.Contains(last, "00000000000000000000") {
		t.Errorf("n%d exited without the scrub's error naming the first segment:\n%s", victim, c.nodes[victim].Tail(10))
	}
	if c.nodes[victim].ExitErr() == nil {
		t.Errorf("n%d exited with status 0 after finding corruption", victim)
	}
	// The other two still take sends.
	out, err = exec.Command(binPath, "bench", "produce", "--namesrv", c.nsAddr, "--topic", "ScrubOld",
		"--count", "100", "--producers", "1").CombinedOutput()
	if err != nil {
		t.Fatalf("sends after n%d stopped: %v\n%s", victim, err, out)
	}
}
