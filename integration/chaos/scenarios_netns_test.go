package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Network scenarios on a real network (R1–R5): every process in its own
// network namespace (netns.go), raft links direct, faults by the kernel. Each
// runs the default recorded workload plus the background load every scenario
// runs (load_test.go), and notes the load around its own phases.

const (
	// leaderLease is raftLeaderLeaseTimeout as every R node is configured
	// (the broker's default, written explicitly so this test knows it).
	leaderLease = 500 * time.Millisecond
	// staleMargin bounds when an isolated leader's last ack may arrive after
	// the isolation: hashicorp/raft checks the lease every leaderLease (the
	// last contact may be up to one period old at a check, so it steps down
	// at most 2×leaderLease after losing its quorum), plus 250 ms for an
	// answer already on the wire on two loaded cores.
	staleMargin = leaderLease + 250*time.Millisecond
)

// beginNet starts scenario id on a fresh Network with the default workload
// and the load. The Network is removed after the cluster has stopped, also
// when the test fails or panics.
func beginNet(t *testing.T, id string, copts Options) (*scenario, LoadLevel) {
	t.Helper()
	requireNetns(t)
	nw, err := NewNetwork(3)
	if err != nil {
		t.Fatalf("%s: network: %v", id, err)
	}
	t.Cleanup(func() {
		if err := nw.Close(); err != nil {
			t.Errorf("%s: network cleanup: %v", id, err)
		}
	})
	copts.Net = nw
	copts.ExtraConfig = append(copts.ExtraConfig, "raftLeaderLeaseTimeout="+leaderLease.String())
	s := begin(t, id, copts, defaultWorkload())
	return s, s.level
}

// answeredBy reports whether node i answered op or stored it as leader.
func (s *scenario) answeredBy(op SendOp, i int) bool {
	return op.Addr == s.c.Nodes[i].ClientAddr || s.storeHost(op) == i
}

// recover heals, waits for a leader and for old to catch up, and fails the
// scenario if either does not happen.
func (s *scenario) recover(old int, what string) {
	s.c.HealAll()
	if err := waitCaughtUp(s, old, 30*time.Second); err != nil {
		s.rep.Fail("%s: after healing: %v", what, err)
	}
}

// TestR1BlackholedLeader takes the leader's link down (no RST: peers and
// clients only time out) for 8 s at load, then brings it back. The majority
// elects a new leader, clients fail over, and the old leader catches up.
func TestR1BlackholedLeader(t *testing.T) {
	requireChaos(t, fullOnly)
	s, load := beginNet(t, "R1", Options{})
	before := time.Now()
	sleep(3 * time.Second)
	old := s.leader()
	fault := time.Now()
	if err := s.c.Net().Blackhole(old); err != nil {
		t.Fatal(err)
	}
	nl, took := waitOtherLeader(s, old, fault, 15*time.Second)
	if nl < 0 {
		s.rep.Fail("no new leader within 15 s of blackholing leader n%d", old)
	} else {
		s.rep.Note("blackholed leader n%d: n%d leader after %v", old, nl, took.Round(time.Millisecond))
	}
	sleep(time.Until(fault.Add(8 * time.Second)))
	heal := time.Now()
	s.recover(old, "blackholed leader")
	sleep(time.Until(heal.Add(5 * time.Second)))
	end := time.Now()
	s.rep.Faults = "blackholed leader 8s"
	s.noteLoad(load, fault, heal, window{"before", before, fault}, window{"during", fault, heal}, window{"after", heal, end})
	s.finish()
}

// TestR2StaleLeader drops every packet between the leader and both followers
// (nft in its namespace) while clients and the nameserver still reach it: the
// stale-leader case. The old leader must acknowledge nothing it was sent after
// the isolation, and no ack at all may come from it later than leaderLease +
// staleMargin after the isolation; every ack's time and answering node are
// recorded (SendOp.Return, Addr, and the STOREHOST of its msgId).
func TestR2StaleLeader(t *testing.T) {
	requireChaos(t, inShort)
	s, load := beginNet(t, "R2", Options{})
	before := time.Now()
	sleep(2 * time.Second)
	old := s.leader()
	if err := s.c.Net().IsolateFromPeers(old); err != nil {
		t.Fatal(err)
	}
	fault := time.Now() // the rules are in place: nothing old sends reaches a peer
	// Clients pinned to the isolated leader keep writing through it for the
	// whole isolation (four, each with a 1 s timeout), into the same history.
	stopPin := make(chan struct{})
	var pinWG sync.WaitGroup
	for k := range 4 {
		pinned := NewRawSender(fmt.Sprintf("pinned%d", k), s.c, time.Second)
		pinned.Pin = s.c.Nodes[old].ClientAddr
		pinWG.Add(1)
		go func() {
			defer pinWG.Done()
			defer pinned.Close()
			for n := 0; ; n++ {
				select {
				case <-stopPin:
					return
				case <-time.After(20 * time.Millisecond):
				}
				id := fmt.Sprintf("Chaos%s-%s-%d", s.id, pinned.Name, n)
				s.w.History().AddSend(pinned.Send(context.Background(), QueueKey{s.w.Topic(), int32(n % 4)}, id, 0))
			}
		}()
	}
	stepDown := time.Duration(-1)
	nl, took := -1, time.Duration(0)
	for time.Since(fault) < 15*time.Second && (stepDown < 0 || nl < 0) {
		if stepDown < 0 {
			if ti, err := s.c.RuntimeInfo(context.Background(), old); err == nil && !strings.EqualFold(ti["role"], "leader") {
				stepDown = time.Since(fault)
			}
		}
		if nl < 0 {
			for i := range s.c.Nodes {
				if i == old {
					continue
				}
				if ti, err := s.c.RuntimeInfo(context.Background(), i); err == nil && strings.EqualFold(ti["role"], "leader") {
					nl, took = i, time.Since(fault)
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if nl < 0 {
		s.rep.Fail("majority elected no leader within 15 s of isolating n%d", old)
	}
	if stepDown < 0 {
		s.rep.Fail("isolated n%d still reports role leader 15 s after losing its quorum", old)
	}
	holdFor := 6 * time.Second
	if !isFull() {
		holdFor = 4 * time.Second
	}
	sleep(time.Until(fault.Add(holdFor)))
	close(stopPin)
	pinWG.Wait()
	heal := time.Now()
	s.recover(old, "stale leader")
	sleep(time.Until(heal.Add(4 * time.Second)))
	end := time.Now()

	// Every ack answered by, or stored under the leadership of, the old leader
	// while it was cut off from its peers.
	var afterLease, calledAfter, sentToOld, ackedBefore int
	pinned := map[Outcome]int{}
	var lastAck time.Duration = -1
	var example string
	for _, op := range s.w.History().Sends() {
		if op.Call.After(fault) && op.Call.Before(heal) && op.Addr == s.c.Nodes[old].ClientAddr {
			sentToOld++
		}
		if strings.HasPrefix(op.Client, "pinned") {
			pinned[op.Outcome]++
		}
		if op.Outcome == OK && s.answeredBy(op, old) && op.Return.Before(fault) {
			ackedBefore++ // the attribution works: it names the old leader for its earlier acks
		}
		if op.Outcome != OK || !s.answeredBy(op, old) || op.Return.Before(fault) || !op.Return.Before(heal) {
			continue
		}
		if d := op.Return.Sub(fault); d > lastAck {
			lastAck = d
		}
		if op.Call.After(fault) {
			calledAfter++
			if example == "" {
				example = fmt.Sprintf("%s called %v after the isolation, acked at %s@%d", op.ID, op.Call.Sub(fault).Round(time.Millisecond), op.Queue, op.Offset)
			}
		}
		if op.Return.After(fault.Add(leaderLease + staleMargin)) {
			afterLease++
			if example == "" {
				example = fmt.Sprintf("%s acked %v after the isolation at %s@%d", op.ID, op.Return.Sub(fault).Round(time.Millisecond), op.Queue, op.Offset)
			}
		}
	}
	if calledAfter > 0 || afterLease > 0 {
		s.rep.Fail("isolated leader n%d acknowledged %d sends called after the isolation and %d sends later than lease %v + margin %v (e.g. %s)",
			old, calledAfter, afterLease, leaderLease, staleMargin, example)
	}
	last := "none"
	if lastAck >= 0 {
		last = lastAck.Round(time.Millisecond).String() + " after it (sent before it)"
	}
	if ackedBefore == 0 {
		s.rep.Fail("no ack attributed to n%d before the isolation either: the attribution of acks to nodes is broken", old)
	}
	s.rep.Note("stale leader n%d: stepped down %v after the isolation, n%d leader after %v; sends that reached it meanwhile %d (a client pinned to it and the raw producers); acks by it: %d before the isolation, after it last %s, after lease+margin (%v) %d",
		old, stepDown.Round(time.Millisecond), nl, took.Round(time.Millisecond), sentToOld, ackedBefore, last, leaderLease+staleMargin, afterLease)
	s.rep.Note("clients pinned to n%d: %d ok, %d refused, %d unknown", old, pinned[OK], pinned[Fail], pinned[Unknown])
	s.rep.Faults = fmt.Sprintf("leader isolated from both followers %v", holdFor)
	s.noteLoad(load, fault, heal, window{"before", before, fault}, window{"during", fault, heal}, window{"after", heal, end})
	s.finish()
}

// TestR3OneWayLoss: first every packet from the leader to one follower
// dropped (the follower hears nothing, the leader still hears it), then 30 %
// of the leader's packets to both followers dropped at random. No divergence;
// the group keeps acknowledging through the loss.
func TestR3OneWayLoss(t *testing.T) {
	requireChaos(t, fullOnly)
	s, load := beginNet(t, "R3", Options{})
	old := s.leader()
	follower := (old + 1) % len(s.c.Nodes)
	before := time.Now()
	sleep(2 * time.Second)
	fault := time.Now()
	if err := s.c.Net().DropFrom(old, follower, 100); err != nil {
		t.Fatal(err)
	}
	sleep(6 * time.Second)
	mid := time.Now()
	s.c.HealAll()
	for j := range s.c.Nodes {
		if j != old {
			if err := s.c.Net().DropFrom(old, j, 30); err != nil {
				t.Fatal(err)
			}
		}
	}
	sleep(6 * time.Second)
	heal := time.Now()
	s.recover(follower, "one-way loss")
	sleep(time.Until(heal.Add(4 * time.Second)))
	end := time.Now()
	sends := s.w.History().Sends()
	if r := ackRate(sends, fault, mid); r == 0 {
		s.rep.Fail("nothing acknowledged while only n%d → n%d was dropped (the leader keeps a quorum with the other follower)", old, follower)
	}
	s.rep.Faults = fmt.Sprintf("n%d → n%d dropped 6s, then 30%% of n%d → followers 6s", old, follower, old)
	s.noteLoad(load, fault, heal, window{"before", before, fault}, window{"100% one-way", fault, mid},
		window{"30% loss", mid, heal}, window{"after", heal, end})
	s.finish()
}

// TestR4NamesrvIsolatedNode cuts the leader, then a follower, off from the
// nameserver only (8 s each): their registrations go stale but the group and
// its clients carry on, and the nameserver lists a leader throughout. Then a
// follower is cut off from the nameserver and made leader (RaftTransferLeader):
// the nameserver cannot learn of it until the cut heals, clients with a
// cached route reach the old leader, which forwards; after healing the new
// leader must be listed as brokerId 0 within a few seconds.
func TestR4NamesrvIsolatedNode(t *testing.T) {
	requireChaos(t, fullOnly)
	s, load := beginNet(t, "R4", Options{})
	before := time.Now()
	sleep(2 * time.Second)
	old := s.leader()
	var windows []window
	windows = append(windows, window{"before", before, time.Now()})
	fault := time.Now()
	var heal time.Time
	for round, who := range []int{old, (old + 1) % len(s.c.Nodes)} {
		at := time.Now()
		if err := s.c.Net().IsolateFromNamesrv(who); err != nil {
			t.Fatal(err)
		}
		missing := 0
		for time.Since(at) < 8*time.Second {
			if _, err := s.c.Leader(context.Background()); err != nil {
				missing++
			}
			time.Sleep(250 * time.Millisecond)
		}
		if missing > 0 {
			s.rep.Fail("round %d: nameserver listed no leader in %d of its polls while n%d was cut off from it", round+1, missing, who)
		}
		heal = time.Now()
		windows = append(windows, window{fmt.Sprintf("n%d cut off", who), at, heal})
		s.recover(who, fmt.Sprintf("round %d", round+1))
		if r := ackRate(s.w.History().Sends(), at, heal); r == 0 {
			s.rep.Fail("round %d: nothing acknowledged while n%d was cut off from the nameserver only", round+1, who)
		}
	}

	// Round 3: the new leader is the node the nameserver cannot hear.
	from := s.leader()
	to := (from + 1) % len(s.c.Nodes)
	at := time.Now()
	if err := s.c.Net().IsolateFromNamesrv(to); err != nil {
		t.Fatal(err)
	}
	if err := s.c.TransferLeader(context.Background(), from, to); err != nil {
		s.rep.Fail("round 3: transfer n%d → n%d: %v", from, to, err)
	}
	nl, took := waitOtherLeader(s, from, at, 15*time.Second)
	sleep(time.Until(at.Add(6 * time.Second)))
	listed, _ := s.c.Leader(context.Background())
	heal = time.Now()
	windows = append(windows, window{fmt.Sprintf("leader n%d unheard by the nameserver", to), at, heal})
	s.c.HealAll()
	lctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	got, err := s.c.WaitLeader(lctx, from, len(s.c.Nodes))
	cancel()
	switch {
	case nl != to:
		s.rep.Fail("round 3: leadership went to n%d, asked for n%d", nl, to)
	case err != nil:
		s.rep.Fail("round 3: new leader n%d not listed as brokerId 0 within 15 s of healing: %v", to, err)
	default:
		s.rep.Note("round 3: n%d leader %v after the transfer while cut off from the nameserver, which listed brokerId 0 = %s meanwhile; listed n%d %v after healing",
			to, took.Round(time.Millisecond), nodeName(listed), got, time.Since(heal).Round(time.Millisecond))
	}
	sleep(3 * time.Second)
	windows = append(windows, window{"after", heal, time.Now()})
	s.rep.Faults = fmt.Sprintf("leader n%d, then a follower, cut off from the nameserver 8s each; then the new leader n%d 6s", old, to)
	s.noteLoad(load, fault, heal, windows...)
	s.finish()
}

func nodeName(i int) string {
	if i < 0 {
		return "none"
	}
	return fmt.Sprintf("n%d", i)
}

// TestR5FlappingLink takes the leader's link down and up every second for
// 12 s at load, then leaves it up. Elections may come and go; afterwards one
// leader acks, the flapped node catches up, nothing is lost or diverges.
func TestR5FlappingLink(t *testing.T) {
	requireChaos(t, fullOnly)
	s, load := beginNet(t, "R5", Options{})
	before := time.Now()
	sleep(2 * time.Second)
	old := s.leader()
	fault := time.Now()
	st, err := s.c.Net().Flap(old, time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sleep(12 * time.Second)
	s.c.Net().StopFlap(old)
	heal := time.Now()
	if st.Err != nil {
		s.rep.Fail("flap: %v", st.Err)
	}
	s.recover(old, "flapping link")
	sleep(time.Until(heal.Add(4 * time.Second)))
	end := time.Now()
	s.rep.Faults = fmt.Sprintf("leader n%d's link down/up every 1s for 12s (%d downs)", old, st.Downs)
	s.noteLoad(load, fault, heal, window{"before", before, fault}, window{"flapping", fault, heal}, window{"after", heal, end})
	s.finish()
}
