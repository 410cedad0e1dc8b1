package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
	"time"
)

// TestKilledNodeReindexesKeys: a node's IndexFiles are synced once a minute
// (indexFlushInterval, decision 0017), so a kill -9 soon after a burst of keyed
// sends leaves their index entries above the index checkpoint. The restarted node
// must index them again from its CommitLog: asked directly (admin -b), it finds
// every key, once.
func TestKilledNodeReindexesKeys(t *testing.T) {
	c := startCluster(t)
	const topic, keys = "IdxRecovery", 200
	out, err := exec.Command(binPath, "bench", "produce", "--namesrv", c.nsAddr, "--topic", topic,
		"--count", fmt.Sprint(keys), "--producers", "4", "--size", "128", "--key-prefix", "idx-").CombinedOutput()
	if err != nil {
		t.Fatalf("bench produce: %v\n%s", err, out)
	}
	leader, err := c.waitLeader(10*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}
	victim := (leader + 1) % groupSize
	// The apply checkpoint (once a second) syncs the ConsumeQueues past the sends;
	// the IndexFiles' checkpoint stays where the start left it.
	time.Sleep(3 * time.Second)
	c.nodes[victim].Kill()
	if err := c.nodes[victim].Start(); err != nil {
		t.Fatalf("restart n%d: %v", victim, err)
	}
	if _, err := c.waitLeader(60*time.Second, "", groupSize); err != nil {
		t.Fatalf("n%d not listed again after its restart: %v", victim, err)
	}
	// Waited for, not read once: the nameserver may still list the killed
	// incarnation when the restart begins, so the wait above can return before
	// the new one has recovered (seen in CI).
	waitFor(t, 30*time.Second, fmt.Sprintf("n%d's log showing the reindex at start (else the test did not exercise it)", victim),
		func() bool { return c.nodes[victim].LogContains("reindexed CommitLog above the index checkpoint") })
	addr := c.clientAddrs[victim]
	for _, k := range []int{0, 1, keys / 2, keys - 1} {
		key := fmt.Sprintf("idx-%d", k)
		var found []struct {
			Addr string   `json:"addr"`
			Keys []string `json:"keys"`
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			b, err := exec.CommandContext(ctx, binPath, "admin", "-b", addr, "-o", "json", "message", "key", topic, key).Output()
			cancel()
			if err == nil && json.Unmarshal(b, &found) == nil && len(found) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("n%d (%s) never answered key %s: %v %s", victim, addr, key, err, b)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if len(found) != 1 || found[0].Addr != addr || len(found[0].Keys) != 1 || found[0].Keys[0] != key {
			t.Errorf("key %s on n%d: %+v, want the one message from %s", key, victim, found, addr)
		}
	}
}
