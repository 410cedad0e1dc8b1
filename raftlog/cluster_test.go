package raftlog

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// listFSM records every command in order; its snapshot is the whole list. The
// list is the replica state the test compares.
// Commands seen before are skipped, so a retried proposal (see applyRange) is
// applied once.
type listFSM struct {
	mu      sync.Mutex
	entries []string
	seen    map[string]bool
}

func (f *listFSM) Apply(l *raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	if !f.seen[string(l.Data)] {
		f.seen[string(l.Data)] = true
		f.entries = append(f.entries, string(l.Data))
	}
	return len(f.entries)
}

func (f *listFSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return listSnapshot(slices.Clone(f.entries)), nil
}

func (f *listFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var entries []string
	if err := json.NewDecoder(rc).Decode(&entries); err != nil {
		return fmt.Errorf("decode snapshot: %w", err)
	}
	f.mu.Lock()
	f.entries = entries
	f.seen = make(map[string]bool, len(entries))
	for _, e := range entries {
		f.seen[e] = true
	}
	f.mu.Unlock()
	return nil
}

func (f *listFSM) snapshot() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.entries)
}

type listSnapshot []string

func (s listSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := json.NewEncoder(sink).Encode([]string(s)); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (listSnapshot) Release() {}

type testNode struct {
	id     raft.ServerID
	addr   raft.ServerAddress
	dir    string
	stores *Stores
	// faulty wraps stores.Log and is what raft uses. Healthy unless a test says
	// otherwise; being in the path also proves it forwards IsMonotonic (raft-wal
	// rejects the post-snapshot append if raft takes the non-monotonic path).
	faulty *FaultyLogStore
	fsm    *listFSM
	trans  *raft.InmemTransport
	raft   *raft.Raft
}

func startNode(t *testing.T, id raft.ServerID, dir string, kind LogStoreKind) *testNode {
	t.Helper()
	logger := testLogger(t)
	stores, err := OpenStores(dir, kind, logger)
	if err != nil {
		t.Fatalf("node %s: %v", id, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(filepath.Join(dir, "snapshots"), 2, logger)
	if err != nil {
		t.Fatalf("node %s snapshots: %v", id, err)
	}
	addr, trans := raft.NewInmemTransport(raft.ServerAddress(id))
	conf := raft.DefaultConfig()
	conf.LocalID = id
	conf.Logger = logger
	// Short enough for a quick first election, long enough that a slow fsync on
	// a busy shared disk does not cost leadership every run.
	conf.HeartbeatTimeout = 500 * time.Millisecond
	conf.ElectionTimeout = 500 * time.Millisecond
	conf.LeaderLeaseTimeout = 250 * time.Millisecond
	conf.CommitTimeout = 5 * time.Millisecond
	// Snapshot and compact often, so the log is cut at the front (DeleteRange)
	// while a node is down and its catch-up has to go through GetLog returning
	// raft.ErrLogNotFound → InstallSnapshot.
	conf.SnapshotThreshold = 64
	conf.SnapshotInterval = 20 * time.Millisecond
	conf.TrailingLogs = 16
	n := &testNode{id: id, addr: addr, dir: dir, stores: stores, faulty: NewFaultyLogStore(stores.Log), fsm: &listFSM{}, trans: trans}
	n.raft, err = raft.NewRaft(conf, n.fsm, n.faulty, stores.Stable, snaps, trans)
	if err != nil {
		_ = stores.Close()
		t.Fatalf("node %s NewRaft: %v", id, err)
	}
	return n
}

func (n *testNode) stop(t *testing.T) {
	t.Helper()
	if err := n.raft.Shutdown().Error(); err != nil {
		t.Errorf("node %s shutdown: %v", n.id, err)
	}
	if err := n.stores.Close(); err != nil {
		t.Errorf("node %s close stores: %v", n.id, err)
	}
}

func connectAll(nodes []*testNode) {
	for _, a := range nodes {
		for _, b := range nodes {
			if a != b {
				a.trans.Connect(b.addr, b.trans)
			}
		}
	}
}

// waitFor polls cond; the cluster runs on real timers, so there is no clock to
// advance instead.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func leaderOf(nodes []*testNode) *testNode {
	for _, n := range nodes {
		if n != nil && n.raft.State() == raft.Leader {
			return n
		}
	}
	return nil
}

func waitLeader(t *testing.T, nodes []*testNode) *testNode {
	t.Helper()
	var leader *testNode
	waitFor(t, 15*time.Second, "a leader", func() bool { leader = leaderOf(nodes); return leader != nil })
	return leader
}

// applyRange applies entry-<from>..entry-<to> in order. The machine is shared and
// an fsync can stall long enough to cost leadership; an entry whose future then
// fails has an unknown outcome, so it and everything after it are proposed again
// and listFSM drops the duplicates. Order is kept because raft commits a prefix
// of what one leader appended.
func applyRange(t *testing.T, nodes []*testNode, from, to int) {
	t.Helper()
	for attempt := 1; from <= to; attempt++ {
		if attempt > 5 {
			t.Fatalf("entries %d..%d still unacknowledged after %d attempts", from, to, attempt-1)
		}
		leader := waitLeader(t, nodes)
		// Futures in flight together let raft batch them: one StoreLogs (one
		// fsync) per batch, as the broker's group commit will.
		futures := make([]raft.ApplyFuture, 0, to-from+1)
		for i := from; i <= to; i++ {
			futures = append(futures, leader.raft.Apply(fmt.Appendf(nil, "entry-%04d", i), 10*time.Second))
		}
		failedAt := to + 1
		for i, f := range futures {
			if err := f.Error(); err != nil {
				t.Logf("apply entry-%04d on %s (attempt %d): %v; retrying from there", from+i, leader.id, attempt, err)
				failedAt = from + i
				break
			}
		}
		from = failedAt
	}
}

func TestClusterOnStores(t *testing.T) {
	if testing.Short() {
		t.Skip("3-node raft cluster with fsync; skipped in -short")
	}
	for _, kind := range []LogStoreKind{LogStoreWAL, LogStoreBoltDB, LogStoreCommitLog} {
		t.Run(string(kind), func(t *testing.T) { runClusterOnStores(t, kind) })
	}
}

func runClusterOnStores(t *testing.T, kind LogStoreKind) {
	const total = 500
	root := t.TempDir()
	ids := []raft.ServerID{"n0", "n1", "n2"}
	nodes := make([]*testNode, len(ids))
	for i, id := range ids {
		nodes[i] = startNode(t, id, filepath.Join(root, string(id)), kind)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			if n != nil {
				n.stop(t)
			}
		}
	})
	connectAll(nodes)
	var servers []raft.Server
	for _, n := range nodes {
		servers = append(servers, raft.Server{ID: n.id, Address: n.addr, Suffrage: raft.Voter})
	}
	if err := nodes[0].raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}

	applyRange(t, nodes, 1, total/2)

	// Stop a follower and remember how far its log went.
	leader := waitLeader(t, nodes)
	var victimIdx int
	for i, n := range nodes {
		if n != leader {
			victimIdx = i
			break
		}
	}
	victim := nodes[victimIdx]
	waitFor(t, 10*time.Second, "victim to apply the first half", func() bool {
		return len(victim.fsm.snapshot()) == total/2
	})
	victim.stop(t)
	nodes[victimIdx] = nil
	reopened, err := OpenStores(victim.dir, kind, testLogger(t))
	if err != nil {
		t.Fatalf("reopen victim stores: %v", err)
	}
	victimLast, err := reopened.Log.LastIndex()
	if err != nil || victimLast < total/2 {
		t.Fatalf("victim last index after stop = %d, %v; want >= %d", victimLast, err, total/2)
	}
	if err := reopened.Close(); err != nil {
		t.Fatal(err)
	}

	const tail = 20 // applied after the restarted node caught up
	applyRange(t, nodes, total/2+1, total-tail)

	// The leader must have compacted past the victim's log, so the catch-up
	// cannot be plain AppendEntries: raft asks GetLog(victimLast) of the leader's
	// store, must get raft.ErrLogNotFound, and installs a snapshot instead.
	waitFor(t, 15*time.Second, "leader to compact past the victim's last index", func() bool {
		leader = leaderOf(nodes)
		if leader == nil {
			return false
		}
		first, err := leader.stores.Log.FirstIndex()
		return err == nil && first > victimLast+1
	})

	restarted := startNode(t, victim.id, victim.dir, kind)
	nodes[victimIdx] = restarted
	connectAll(nodes)
	waitFor(t, 20*time.Second, "restarted node to catch up", func() bool {
		return len(restarted.fsm.snapshot()) == total-tail
	})
	// These reach the restarted node as ordinary appends after the snapshot: on
	// raft-wal that is the "emptied, then append past a gap" path.
	applyRange(t, nodes, total-tail+1, total)

	want := make([]string, total)
	for i := range want {
		want[i] = fmt.Sprintf("entry-%04d", i+1)
	}
	for _, n := range nodes {
		waitFor(t, 20*time.Second, fmt.Sprintf("%s to apply all %d entries", n.id, total), func() bool {
			return len(n.fsm.snapshot()) >= total
		})
		if got := n.fsm.snapshot(); !slices.Equal(got, want) {
			t.Fatalf("node %s replica differs: len %d, first diff at %d", n.id, len(got), firstDiff(got, want))
		}
	}

	// The entry right after its old log never reached it as a log entry: it came
	// inside the snapshot. (raft-wal is emptied and restarts after the snapshot;
	// boltdb keeps a trailing stub and a gap.)
	var l raft.Log
	if err := restarted.stores.Log.GetLog(victimLast+1, &l); err != raft.ErrLogNotFound { //nolint:errorlint // raft compares with ==.
		t.Fatalf("restarted node GetLog(%d) = index %d, %v; want raft.ErrLogNotFound (snapshot install)", victimLast+1, l.Index, err)
	}
	// Every entry both stores hold is the same entry.
	requireSameEntries(t, leader.stores.Log, restarted.stores.Log)
}

// requireSameEntries compares the tail the two stores share, from the later
// first index of the two to the earlier last index.
func requireSameEntries(t *testing.T, a, b raft.LogStore) {
	t.Helper()
	aLast, _ := a.LastIndex()
	bLast, _ := b.LastIndex()
	last := min(aLast, bLast)
	var compared int
	for i := last; i > 0; i-- {
		var la, lb raft.Log
		errA, errB := a.GetLog(i, &la), b.GetLog(i, &lb)
		if errA != nil || errB != nil {
			break // reached the front of one of them
		}
		if la.Term != lb.Term || la.Type != lb.Type || string(la.Data) != string(lb.Data) {
			t.Fatalf("entry %d differs: term %d/%d type %v/%v data %q/%q", i, la.Term, lb.Term, la.Type, lb.Type, la.Data, lb.Data)
		}
		compared++
	}
	if compared == 0 {
		t.Fatalf("stores share no entries (last %d and %d)", aLast, bLast)
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
