package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/integration/chaos"
	"github.com/rocketraft/rocketraft/internal/admin"
	"github.com/rocketraft/rocketraft/internal/proctest"
)

// TestRestoreGroupFromOneNodesCopy rehearses operations.md's backup and restore
// with real processes: a follower is stopped, its data directory copied and the
// follower started again; later every node is stopped, each gets the copy and the
// group is started. It must elect a leader, serve exactly what the copy held (the
// sends after the copy are gone: a restore goes back to the copy's point), take
// new sends, and end with three identical replicas.
func TestRestoreGroupFromOneNodesCopy(t *testing.T) {
	c := startCluster(t)
	const topic, before, after = "Restored", 3000, 500
	produce := func(n int) {
		t.Helper()
		out, err := exec.Command(binPath, "bench", "produce", "--namesrv", c.nsAddr, "--topic", topic,
			"--count", fmt.Sprint(n), "--producers", "4", "--size", "256").CombinedOutput()
		if err != nil || !strings.Contains(string(out), fmt.Sprintf("summary: %d ok, 0 failed", n)) {
			t.Fatalf("bench produce %d: %v\n%s", n, err, out)
		}
	}
	produce(before)
	leader, err := c.waitLeader(10*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}
	// The documented steps: a snapshot on every node, then the copy of a
	// follower that has applied every acknowledged send.
	victim := (leader + 1) % groupSize
	waitInStep(t, c)
	if out, err := exec.Command(binPath, "admin", "raft", "snapshot", "-B", groupName, "--namesrv", c.nsAddr).CombinedOutput(); err != nil {
		t.Fatalf("admin raft snapshot: %v\n%s", err, out)
	}
	if !c.nodes[victim].Stop(10 * time.Second) {
		t.Fatalf("n%d did not stop on SIGTERM", victim)
	}
	backup := filepath.Join(t.TempDir(), "backup")
	copyDir(t, filepath.Join(c.dir, fmt.Sprintf("n%d", victim)), backup)
	if snaps, _ := os.ReadDir(filepath.Join(backup, "snapshots")); len(snaps) == 0 {
		t.Fatal("the copy holds no raft snapshot after admin raft snapshot")
	}
	if err := c.nodes[victim].Start(); err != nil {
		t.Fatal(err)
	}
	produce(after) // not in the copy

	// Restore: every node stopped, the copy into each, every node started.
	for i, n := range c.nodes {
		if !n.Stop(15 * time.Second) {
			t.Fatalf("n%d did not stop on SIGTERM", i)
		}
	}
	for i := range c.nodes {
		dir := filepath.Join(c.dir, fmt.Sprintf("n%d", i))
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		copyDir(t, backup, dir)
	}
	for _, n := range c.nodes {
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.waitLeader(60*time.Second, "", groupSize); err != nil {
		t.Fatalf("the restored group elected no leader: %v", err)
	}
	out, err := exec.Command(binPath, "bench", "consume", "--namesrv", c.nsAddr, "--topic", topic, "--group", "RestoreCheck",
		"--count", fmt.Sprint(before), "--timeout", "60s").CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("summary: %d ok", before)) {
		t.Fatalf("consuming the restored topic: %v\n%s", err, out)
	}
	produce(after) // the restored group takes sends
	waitInStep(t, c)

	// Three identical replicas, each with the copy's sends and the new ones.
	for i, n := range c.nodes {
		if !n.Stop(15 * time.Second) {
			t.Fatalf("n%d did not stop on SIGTERM", i)
		}
	}
	var logs []chaos.ReplicaLog
	for i := range c.nodes {
		storeDir := filepath.Join(c.dir, fmt.Sprintf("n%d", i), "store")
		rl, err := chaos.ReadReplica(fmt.Sprintf("n%d", i), storeDir, proctest.SegmentSize,
			func(tp string) bool { return tp == topic }, hclog.NewNullLogger())
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, rl)
	}
	for i, rl := range logs {
		n := 0
		for _, ids := range rl.Queues {
			n += len(ids)
		}
		if n != before+after {
			t.Errorf("n%d holds %d messages of %s, want %d (%d from the copy, %d sent after the restore)", i, n, topic, before+after, before, after)
		}
		if i > 0 && !reflect.DeepEqual(rl.Queues, logs[0].Queues) {
			t.Errorf("n%d's queues differ from n0's", i)
		}
	}
}

// waitInStep waits until every node reports the same applied index and
// CommitLog length: each holds, and has applied, every acknowledged send.
func waitInStep(t *testing.T, c *cluster) {
	t.Helper()
	a := admin.New(admin.Config{NamesrvAddrs: []string{c.nsAddr}})
	defer a.Close()
	deadline := time.Now().Add(30 * time.Second)
	var last []admin.NodeStatus
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		nodes, err := a.Cluster(ctx)
		cancel()
		if err == nil && len(nodes) == groupSize {
			last = nodes
			same := nodes[0].CommitLogMaxOffset > 0
			for _, n := range nodes[1:] {
				same = same && n.Err == nil && n.AppliedIndex == nodes[0].AppliedIndex && n.CommitLogMaxOffset == nodes[0].CommitLogMaxOffset
			}
			if same {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	var rows []string
	for _, n := range last {
		rows = append(rows, fmt.Sprintf("%s %s applied %d CommitLog %d err %v", n.SelfID, n.Role, n.AppliedIndex, n.CommitLogMaxOffset, n.Err))
	}
	t.Fatalf("the nodes did not reach one applied index and CommitLog length within 30 s: %s", strings.Join(rows, "; "))
}

// copyDir copies the directory tree src to dst (which must not exist).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", src, dst, err, out)
	}
}
