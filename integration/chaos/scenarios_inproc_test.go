package chaos

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/store"
)

// TestD1FsyncErrorLeader: the leader's raft log starts failing every write
// while the real clients' paced load (45 % of the measured maximum) sends
// through the brokers on the nodes. The leader must stop leading at its next write,
// another node must take over, nothing the failing leader refused may be
// stored, and once the disk heals the old leader catches up to identical
// bytes. Default raft timings (1 s), so the figures are the real ones.
func TestD1FsyncErrorLeader(t *testing.T) {
	requireChaos(t, inShort)
	start := time.Now()
	rep := Report{Scenario: "D1", Seed: start.UnixNano() % 1000}
	faults := testcluster.NewFaults(nil)
	c := testcluster.New(t, 3, testcluster.Options{Configure: faults.Configure, Logger: inprocLogger()})
	g := startInprocGroup(t, c, nil)
	// At load: 45 % of the group's measured maximum durable rate (pacedload_test.go).
	w := startPacedLoad(t, g, &rep, "ChaosD1Load", 4)
	if !w.waitAcks(start, 100, 20*time.Second) {
		t.Fatal("D1: workload never acked 100 sends")
	}

	old := c.WaitLeader(10 * time.Second)
	fl := faults.LogStore(old.ID)
	faultAt := time.Now()
	fl.FailStores(nil)

	// Step-down: the leader's next log write fails; raft turns follower at once.
	var stepDown time.Duration
	for stepDown == 0 {
		if n := old.Node(); n.Raft().State() != raft.Leader {
			stepDown = time.Since(faultAt)
		} else if time.Since(faultAt) > 10*time.Second {
			t.Fatalf("D1: %s still leads 10 s after its log started failing", old.ID)
		}
		time.Sleep(time.Millisecond)
	}
	others := []raft.ServerID{}
	for _, m := range c.Members() {
		if m.ID != old.ID {
			others = append(others, m.ID)
		}
	}
	// While waiting, count the times the failing node wins an election again
	// (its log is as long as anyone's, so it can; each win ends at its first
	// write and costs an election timeout).
	var nl *testcluster.Member
	rewins, wasLeader := 0, false
	for nl == nil {
		isLeader := old.Node().Raft().State() == raft.Leader
		if isLeader && !wasLeader {
			rewins++
		}
		wasLeader = isLeader
		for _, id := range others {
			if n := c.Member(id).Node(); n != nil && n.State().Role == node.RoleLeader {
				nl = c.Member(id)
			}
		}
		if nl == nil && time.Since(faultAt) > 20*time.Second {
			t.Fatalf("D1: no ready leader among %v within 20 s of the fault", others)
		}
		time.Sleep(time.Millisecond)
	}
	newLeader := time.Since(faultAt)
	if !w.waitAcks(faultAt, 50, 20*time.Second) {
		rep.Fail("no 50 acks on the new leader %s within 20 s of the fault", nl.ID)
	}
	if first := w.h.FirstAckAfter(faultAt, ""); !first.IsZero() {
		rep.Failover = Latencies{first.Sub(faultAt)}
	}
	time.Sleep(3 * time.Second) // keep writing with the old leader's disk still failing
	if n := old.Node(); n.State().Role == node.RoleLeader {
		rep.Fail("%s is a ready leader again while its log fails", old.ID)
	}
	injected := fl.InjectedFailures()
	if injected == 0 {
		rep.Fail("the fault was never exercised (0 refused log writes)")
	}
	// Acks the old leader gave after the fault (stored by it: the STOREHOST
	// of the ack's msgId): only entries it had stored before can have
	// committed; the checks below judge each one.
	var oldAcks int
	for _, s := range w.h.Sends() {
		if s.Outcome == OK && g.storedBy(s) == old.ID && s.Return.After(faultAt) {
			oldAcks++
		}
	}

	// Heal, then the old leader must apply everything the new leader had
	// applied at that moment.
	healAt := time.Now()
	fl.Heal()
	target := nl.Node().State().AppliedIndex
	var caughtUp time.Duration
	for caughtUp == 0 {
		if old.Node().State().AppliedIndex >= target {
			caughtUp = time.Since(healAt)
		} else if time.Since(healAt) > 30*time.Second {
			rep.Fail("%s did not catch up to index %d within 30 s of healing (at %d)", old.ID, target, old.Node().State().AppliedIndex)
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(time.Second) // a little traffic on the healed group
	w.reportSpan(sendsView(w.h.Sends()), "log failing", faultAt, healAt, time.Now())
	rep.Faults = fmt.Sprintf("log write errors on leader %s for %v (%d refused)", old.ID, healAt.Sub(faultAt).Round(100*time.Millisecond), injected)
	rep.Note("%s stopped leading %v after the fault; ready leader %s after %v; old leader caught up %v after healing",
		old.ID, stepDown.Round(time.Millisecond), nl.ID, newLeader.Round(time.Millisecond), caughtUp.Round(time.Millisecond))
	rep.Note("acks by %s after the fault (entries stored before it): %d; elections it won again before a healthy leader: %d", old.ID, oldAcks, rewins)
	if stepDown > 2*time.Second {
		rep.Fail("step-down took %v (want ≤ 2 s: the next log write fails)", stepDown)
	}
	inprocFinish(t, g, w, &rep, start)
}

// TestD2PowerLoss: every node loses power at the same instant while the
// real clients' paced load (45 % of the measured maximum) sends: raft-wal writes not yet fsynced are undone (the leader's
// cut lands inside the fsync of a batch), CommitLog bytes past the store's
// flushed offset are zeroed, checkpoints are the ones on disk at the cut.
// All three restart: every acked message must be at its acked offset exactly
// once, replicas identical, and the group must take new writes.
//
// "sync" flushes the CommitLog before every append returns; "async-lagging"
// never flushes it on its own (flush interval and apply checkpoint interval
// of an hour; one snapshot midway is the only flush), so nearly the whole
// CommitLog is lost and raft's log has to rebuild it.
func TestD2PowerLoss(t *testing.T) {
	requireChaos(t, fullOnly)
	for _, mode := range []string{"sync", "async-lagging"} {
		t.Run(mode, func(t *testing.T) { runD2(t, mode) })
	}
}

func runD2(t *testing.T, mode string) {
	start := time.Now()
	rep := Report{Scenario: "D2/" + mode, Seed: start.UnixNano() % 1000}
	opts := testcluster.Options{Logger: inprocLogger()}
	var configure func(*node.Config)
	if mode == "sync" {
		opts.Store.FlushMode = store.FlushSync
	} else {
		opts.Store.FlushMode, opts.Store.FlushInterval = store.FlushAsync, time.Hour
		configure = func(cfg *node.Config) { cfg.CheckpointInterval = time.Hour }
	}
	faults := testcluster.NewFaults(configure)
	opts.Configure = faults.Configure
	c := testcluster.New(t, 3, opts)
	g := startInprocGroup(t, c, nil)
	// At load: 45 % of the group's measured maximum durable rate
	// (pacedload_test.go), so the power cut lands in a busy fsync.
	w := startPacedLoad(t, g, &rep, "ChaosD2Load", 4)
	if !w.waitAcks(start, 100, 20*time.Second) {
		t.Fatal("D2: workload never acked 100 sends")
	}
	time.Sleep(2 * time.Second)
	if mode != "sync" {
		for _, m := range c.Running() {
			if err := m.Node().Snapshot(); err != nil {
				t.Fatalf("snapshot on %s: %v", m.ID, err)
			}
		}
	}
	time.Sleep(3 * time.Second)

	// The leader's power fails inside the fsync of its next batch; every other
	// node's at the same time.
	l := c.WaitLeader(10 * time.Second)
	lv := faults.VFS(l.ID)
	lv.CutAtNextSync()
	for deadline := time.Now().Add(5 * time.Second); !lv.IsCut() && time.Now().Before(deadline); {
		time.Sleep(100 * time.Microsecond)
	}
	cutAt := time.Now()
	lost := c.PowerLoss(faults)
	// The brokers lose power with their nodes: closed right after the cut, not
	// before it (a closing leader's broker hands its leadership off, which no
	// power cut does). Until then they answer from dead nodes: refusals and
	// unknown outcomes the checker judges like any other.
	g.closeBrokers()
	var clLost, walLost int64
	for _, r := range lost {
		rep.Note("%s: CommitLog appended %d, flushed %d (lost %d bytes); raft log %d unsynced bytes in %d files undone",
			r.ID, r.Appended, r.Flushed, r.Appended-r.Flushed, r.RaftLog.Bytes, r.RaftLog.Files)
		clLost += int64(r.Appended - r.Flushed)
		walLost += int64(r.RaftLog.Bytes)
	}
	if mode != "sync" && clLost == 0 {
		rep.Fail("async-lagging lost no CommitLog bytes: the scenario did not exercise replay")
	}
	for _, m := range c.Members() {
		c.RestartNode(m.ID)
	}
	for _, m := range c.Members() {
		g.startBroker(m.ID) // on the node's new incarnation, at the same address
	}
	restartAt := time.Now()
	nl := c.WaitLeader(30 * time.Second)
	if !w.waitAcks(cutAt, 100, 30*time.Second) {
		rep.Fail("the group took no 100 new writes within 30 s of the restart")
	}
	if first := w.h.FirstAckAfter(cutAt, ""); !first.IsZero() {
		rep.Note("first ack %v after the power cut (restart included); leader %s", first.Sub(cutAt).Round(time.Millisecond), nl.ID)
	}
	time.Sleep(2 * time.Second)
	w.reportSpan(sendsView(w.h.Sends()), "power cut to restart", cutAt, restartAt, time.Now())
	rep.Faults = fmt.Sprintf("power loss of 3/3 nodes: CommitLog bytes lost %d, raft log bytes undone %d", clLost, walLost)
	inprocFinish(t, g, w, &rep, start)
}
