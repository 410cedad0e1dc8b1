package chaos

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/internal/testcluster"
)

// Disks at load (docs/reliability.md "Disks at load"): D7 slow fsyncs, D8 a
// stalled follower disk, D9 ENOSPC part way through a batch. Each runs the
// in-process group of diskload_test.go, with the real clients' load at ~45 %
// of the maximum durable rate it measured first. Full matrix only (each is 20–40 s).

// D7: every fsync of one node's raft log and CommitLog takes 20–50 ms longer
// for 8 s, on a follower and, separately, on the leader.
const (
	d7SlowMin, d7SlowMax = 20 * time.Millisecond, 50 * time.Millisecond
	d7Duration           = 8 * time.Second
)

// TestD7SlowFsync: a follower with slow fsyncs must cost nothing (the leader
// commits with the other follower); a leader with slow fsyncs keeps leading
// (its lease holds: followers answer) and acks at the rate its fsync allows.
func TestD7SlowFsync(t *testing.T) {
	requireChaos(t, fullOnly)
	for _, who := range []string{"follower", "leader"} {
		t.Run(who, func(t *testing.T) { runD7(t, who) })
	}
}

func runD7(t *testing.T, who string) {
	d := startDiskLoad(t, "D7/"+who)
	leader, victim := d.pick()
	if who == "leader" {
		victim = leader
	}
	disk := d.disks.Disk(victim.ID)
	faultAt := time.Now()
	disk.SlowSyncs(d7SlowMin, d7SlowMax)
	time.Sleep(d7Duration)
	disk.SlowSyncs(0, 0)
	healAt := time.Now()
	st := disk.Stats()
	if st.SlowSyncs == 0 {
		d.rep.Fail("no fsync of %s was slowed: the fault was not exercised", victim.ID)
	}
	stepped, desc := d.leaders.since(faultAt, healAt)
	d.rep.Faults = fmt.Sprintf("fsync +%v–%v on %s %s for %v (%d fsyncs slowed)", d7SlowMin, d7SlowMax, who, victim.ID, d7Duration, st.SlowSyncs)
	d.rep.Note("leadership during the fault: %s; stepped down: %v", desc, stepped)
	d.report("slow fsync", faultAt, healAt, 4*time.Second)
	if who == "follower" && stepped {
		d.rep.Fail("leadership changed while only a follower's fsyncs were slow")
	}
	if d.throughput(healAt, time.Now()) == 0 {
		d.rep.Fail("nothing acknowledged after the fault healed")
	}
	d.finish()
}

// D8: one follower's disk stops answering for 10 s (every raft log and
// CommitLog write and fsync blocks), then resumes. The stall starts at the
// follower's next CommitLog write, so its FSM is caught inside an apply.
const d8Stall = 10 * time.Second

// TestD8FollowerDiskStall: the leader keeps committing with the other
// follower; status reads of the stalled node still answer (they once waited
// for the FSM's lock, held across the stalled write); the stalled follower
// catches up after its disk resumes.
func TestD8FollowerDiskStall(t *testing.T) {
	requireChaos(t, fullOnly)
	runD8(t, "D8", false)
}

func runD8(t *testing.T, scenario string, onLeader bool) {
	d := startDiskLoad(t, scenario)
	leader, victim := d.pick()
	if onLeader {
		victim = leader
	}
	disk := d.disks.Disk(victim.ID)
	faultAt := time.Now()
	disk.StallAtNextStoreWrite()
	for deadline := time.Now().Add(5 * time.Second); disk.Stats().StalledStore == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	stalledAt := time.Now()
	applied, okAt := appliedWithin(victim, time.Second)
	time.Sleep(time.Until(stalledAt.Add(d8Stall)))
	frozen, okEnd := appliedWithin(victim, time.Second)
	disk.Resume()
	healAt := time.Now()
	if !okAt || !okEnd {
		d.rep.Fail("%s's status (applied index) did not answer within 1 s while its disk was stalled", victim.ID)
	}
	caught, ok := d.waitCaughtUp(victim, 30*time.Second)
	if !ok {
		d.rep.Fail("%s did not catch up within 30 s of its disk resuming", victim.ID)
	}
	st := disk.Stats()
	if st.StalledStore == 0 {
		d.rep.Fail("no CommitLog write of %s waited: the stall was not exercised", victim.ID)
	}
	stepped, desc := d.leaders.since(faultAt, healAt)
	role := "follower"
	if onLeader {
		role = "leader"
	}
	d.rep.Faults = fmt.Sprintf("%s %s disk stalled %v from inside an apply (%d writes/fsyncs blocked, %d of them CommitLog)", role, victim.ID, healAt.Sub(stalledAt).Round(100*time.Millisecond), st.Stalled, st.StalledStore)
	d.rep.Note("%s applied index %d at the stall, %d when it resumed; caught up %v after resuming", victim.ID, applied, frozen, caught.Round(time.Millisecond))
	d.rep.Note("leadership during the stall: %s; stepped down: %v", desc, stepped)
	if stepped && !onLeader {
		d.rep.Fail("leadership changed while only a follower's disk stalled")
	}
	if onLeader {
		leaderFaultChecks(d, victim.ID, stalledAt, healAt)
	}
	d.report("stalled", stalledAt, healAt, 4*time.Second)
	d.finish()
}

// TestD8LeaderDiskStall is D8 on the leader: it used to keep leading (and
// heartbeating) for the whole stall with 0 acks; the node's disk guard now
// fences its raft RPCs after DiskStallTimeout, so the group elects another
// leader and keeps acking.
func TestD8LeaderDiskStall(t *testing.T) {
	requireChaos(t, fullOnly)
	runD8(t, "D8/leader", true)
}

// appliedWithin reads m's applied index, giving up after timeout (a status
// read must never hang behind a stalled disk).
func appliedWithin(m *testcluster.Member, timeout time.Duration) (uint64, bool) {
	got := make(chan uint64, 1)
	go func() { got <- m.Node().State().AppliedIndex }()
	select {
	case idx := <-got:
		return idx, true
	case <-time.After(timeout):
		return 0, false
	}
}

// D9: a node's disk fills part way through a batch: a raft log append (the
// write of a batch of entries cut short with ENOSPC) or the CommitLog append
// of a multi-message entry being applied (ENOSPC at its second record). The
// disk stays full 4 s, then space returns.
const d9Full = 4 * time.Second

// TestD9DiskFullMidBatch: on a follower the group keeps acking; on the leader
// it stops leading (a failed raft log write makes hashicorp/raft step down; a
// failed apply makes the node transfer leadership) and another node acks. No
// node crashes, and after space returns the full node catches up to
// identical bytes.
func TestD9DiskFullMidBatch(t *testing.T) {
	requireChaos(t, fullOnly)
	for _, c := range []struct{ name, where, who string }{
		{"raftlog-follower", "raftlog", "follower"},
		{"raftlog-leader", "raftlog", "leader"},
		{"apply-follower", "apply", "follower"},
		{"apply-leader", "apply", "leader"},
	} {
		t.Run(c.name, func(t *testing.T) { runD9(t, c.where, c.who) })
	}
}

func runD9(t *testing.T, where, who string) {
	d := startDiskLoad(t, fmt.Sprintf("D9/%s-%s", where, who))
	leader, victim := d.pick()
	if who == "leader" {
		victim = leader
	}
	disk := d.disks.Disk(victim.ID)
	faultAt := time.Now()
	if where == "raftlog" {
		disk.FillRaftLogAfter(int64(64 + rand.IntN(4096)))
	} else {
		disk.FillStoreAt(1)
	}
	hit := time.Time{}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if disk.IsFull() {
			hit = time.Now()
			break
		}
	}
	if hit.IsZero() {
		t.Fatalf("D9: %s's disk never filled: no %s batch reached it within 10 s", victim.ID, where)
	}
	time.Sleep(d9Full)
	alive := victim.Node() != nil
	disk.Free()
	healAt := time.Now()
	st := disk.Stats()
	caught, ok := d.waitCaughtUp(victim, 30*time.Second)
	if !ok {
		d.rep.Fail("%s did not catch up within 30 s of space returning", victim.ID)
	}
	if !alive {
		d.rep.Fail("%s's node was gone while its disk was full", victim.ID)
	}
	stepped, desc := d.leaders.since(faultAt, healAt)
	cut := st.CutWrite
	if where == "apply" {
		cut = st.CutBatch
	}
	d.rep.Faults = fmt.Sprintf("ENOSPC on %s %s's %s mid-batch (%s), full %v", who, victim.ID, where, cut, d9Full)
	d.rep.Note("disk full %v after arming; refused while full: raft log %d, CommitLog %d; %s caught up %v after space returned",
		hit.Sub(faultAt).Round(time.Millisecond), st.RaftENOSPC, st.StoreENOSPC, victim.ID, caught.Round(time.Millisecond))
	d.rep.Note("leadership while full: %s; stepped down: %v", desc, stepped)
	if who == "leader" {
		leaderFaultChecks(d, victim.ID, hit, healAt)
	} else if stepped {
		d.rep.Fail("leadership changed while only a follower's disk was full")
	}
	d.report("disk full", hit, healAt, 4*time.Second)
	d.finish()
}

// leaderFaultChecks: a leader whose disk is full or stalled must stop
// leading, another node must ack while the fault lasts, and the faulty node
// must acknowledge nothing called later than 2 s into the fault (a failing
// raft log can still win an election, then fails at its first write, as D1
// records; a stalled one is fenced after node.Config.DiskStallTimeout, 2 s).
func leaderFaultChecks(d *diskLoad, full raft.ServerID, hit, healAt time.Time) {
	// Who acknowledged is who stored: the STOREHOST of the ack's msgId names
	// the leader that proposed the entry (a follower's broker relays a send
	// to the leader).
	sends := d.h.Sends()
	var other time.Time
	for _, s := range sends {
		if s.Outcome == OK && d.g.storedBy(s) != full && s.Return.After(hit) && s.Return.Before(healAt) &&
			(other.IsZero() || s.Return.Before(other)) {
			other = s.Return
		}
	}
	if other.IsZero() {
		d.rep.Fail("no ack from another leader while %s's disk was faulty", full)
	} else {
		d.rep.Note("first ack by another leader %v into the fault", other.Sub(hit).Round(time.Millisecond))
	}
	var oldAcks int
	for _, s := range sends {
		if s.Outcome == OK && d.g.storedBy(s) == full && s.Call.After(hit.Add(2*time.Second)) && s.Return.Before(healAt) {
			oldAcks++
		}
	}
	if oldAcks > 0 {
		d.rep.Fail("%s acknowledged %d sends called more than 2 s into the fault", full, oldAcks)
	}
}
