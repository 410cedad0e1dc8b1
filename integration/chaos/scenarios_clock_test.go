package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker"
	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/broker/transaction"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Clock scenarios C1–C5 (docs/reliability.md "Clock jumps"): one node's wall
// clock steps minutes forward and back, first the leader's, then a
// follower's, while the real clients' paced load of pacedload_test.go runs
// at 45 % of the group's measured maximum durable rate; each scenario watches one subsystem
// that reads the wall clock. Raft itself is not stepped: its timers run on
// time.Now's monotonic reading, which a wall-clock step does not move.

const (
	clockStep = 10 * time.Minute
	// clockLoadQueues is the load topic's queue count, as D7–D9's.
	clockLoadQueues = diskLoadQueues
)

// clockScenario starts the group and the measured-then-paced load, runs
// body, reports the load around every step and finishes with the usual
// checks (0 lost acked, 0 phantom, replicas identical).
func clockScenario(t *testing.T, name string, opts clockGroupOptions, body func(g *clockGroup, rep *Report)) {
	start := time.Now()
	rep := Report{Scenario: name, Seed: start.UnixNano() % 1000}
	g := startClockGroup(t, opts)
	p := startPacedLoad(t, g.inprocGroup, &rep, "Chaos"+name+"Load", clockLoadQueues)
	body(g, &rep)
	g.clocks.Reset()
	reset := time.Now()
	g.reportSteps(p, reset)
	if !p.waitAcks(reset, 20, 10*time.Second) {
		rep.Fail("no acks in the 10 s after the clocks were reset")
	}
	inprocFinish(t, g.inprocGroup, p, &rep, start)
}

// TestC1LockExpiryUnderClockJumps: consumer A holds orderly queues and renews
// every 2 s, consumer B asks for the same queues every 300 ms, alternately at
// the leader and at a follower (which forwards). The leader's clock steps +10
// min, then to -10 min, then back; then a follower's. B must never be granted
// a queue while A renews. Then, with the leader's clock 10 min behind, A stops
// renewing: B must get the queues LockExpiry (60 s) after A's last renewal,
// not 10 minutes later.
func TestC1LockExpiryUnderClockJumps(t *testing.T) {
	requireChaos(t, fullOnly)
	clockScenario(t, "C1", clockGroupOptions{}, func(g *clockGroup, rep *Report) {
		const topic = "ChaosC1Orderly"
		g.c.CreateTopic(topic, 4)
		var mqs []clients.MessageQueue
		for q := range int32(4) {
			mqs = append(mqs, clients.MessageQueue{Topic: topic, BrokerName: "broker-a", QueueID: q})
		}
		lock := func(id raft.ServerID, client string) ([]clients.MessageQueue, error) {
			body, _ := json.Marshal(map[string]any{"consumerGroup": "C1", "clientId": client, "mqSet": mqs})
			r, err := g.call(id, transport.LockBatchMQ, nil, body)
			if err != nil {
				return nil, err
			}
			if r.ResponseCode() != transport.Success {
				return nil, fmt.Errorf("lock by %s at %s: %s %s", client, id, r.ResponseCode(), r.Remark)
			}
			var ans struct {
				LockOKMQSet []clients.MessageQueue `json:"lockOKMQSet"`
			}
			err = json.Unmarshal(r.Body, &ans)
			return ans.LockOKMQSet, err
		}
		// A: the first grant needs the new term's grace window to be satisfied
		// (A the group's only client after 35 s of heartbeat collection).
		var aGot time.Time
		for deadline := time.Now().Add(90 * time.Second); aGot.IsZero(); {
			got, err := lock(g.leader(), "A")
			if err == nil && len(got) == len(mqs) {
				aGot = time.Now()
			} else if time.Now().After(deadline) {
				t.Fatalf("C1: A never got the %d queues (last: %v %v)", len(mqs), got, err)
			}
			time.Sleep(500 * time.Millisecond)
		}
		rep.Note("A holds %d queues %v after the start", len(mqs), aGot.Sub(g.started).Round(time.Second))
		var lastRenew atomic.Int64
		lastRenew.Store(time.Now().UnixNano())
		stopA, stopB := make(chan struct{}), make(chan struct{})
		var wg sync.WaitGroup
		var aRefused, bTries atomic.Int64
		// A renews every 2 s (the Go client every 20 s, 30 s stale).
		repeatEvery(&wg, stopA, 2*time.Second, func(int) {
			if got, err := lock(g.leader(), "A"); err == nil && len(got) == len(mqs) {
				lastRenew.Store(time.Now().UnixNano())
			} else {
				aRefused.Add(1)
			}
		})
		var bMu sync.Mutex
		var bGrant time.Time
		var bGrantWhileA []string
		aLive := atomic.Bool{}
		aLive.Store(true)
		// B asks every 300 ms, at the leader and at a follower in turn.
		repeatEvery(&wg, stopB, 300*time.Millisecond, func(i int) {
			at := g.leader()
			if i%2 == 1 {
				at = g.follower()
			}
			bTries.Add(1)
			got, err := lock(at, "B")
			if err != nil || len(got) == 0 {
				return
			}
			bMu.Lock()
			if aLive.Load() {
				bGrantWhileA = append(bGrantWhileA, fmt.Sprintf("%s via %s: %v", time.Now().Format("15:04:05.000"), at, got))
			} else if bGrant.IsZero() {
				bGrant = time.Now()
			}
			bMu.Unlock()
		})
		l := g.leader()
		for _, d := range []time.Duration{clockStep, -2 * clockStep, clockStep} {
			g.jump(rep, l, "leader", d)
			time.Sleep(5 * time.Second)
		}
		f := g.follower()
		for _, d := range []time.Duration{clockStep, -2 * clockStep, clockStep} {
			g.jump(rep, f, "follower", d)
			time.Sleep(5 * time.Second)
		}
		// A dies with the leader's clock 10 min behind.
		g.jump(rep, l, "leader", -clockStep)
		bMu.Lock()
		aLive.Store(false)
		bMu.Unlock()
		close(stopA)
		time.Sleep(100 * time.Millisecond) // an A renewal in flight lands first
		last := time.Unix(0, lastRenew.Load())
		for deadline := last.Add(clients.LockExpiry + 20*time.Second); ; {
			bMu.Lock()
			got := bGrant
			bMu.Unlock()
			if !got.IsZero() || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		close(stopB)
		wg.Wait()
		if len(bGrantWhileA) > 0 {
			rep.Fail("B was granted queues %d times while A held them: %v", len(bGrantWhileA), bGrantWhileA[:min(3, len(bGrantWhileA))])
		}
		if n := aRefused.Load(); n > 0 {
			rep.Fail("A's renewal was refused %d times", n)
		}
		switch {
		case bGrant.IsZero():
			rep.Fail("B never got A's queues within LockExpiry+20 s of A's last renewal (leader's clock %v behind)", clockStep)
		case bGrant.Sub(last) < clients.LockExpiry-time.Second:
			rep.Fail("B got A's queues %v after A's last renewal, before LockExpiry %v", bGrant.Sub(last), clients.LockExpiry)
		default:
			rep.Note("A stopped renewing with the leader's clock %v behind: B got the queues %v after A's last renewal (LockExpiry %v)",
				clockStep, bGrant.Sub(last).Round(100*time.Millisecond), clients.LockExpiry)
		}
		rep.Note("B asked %d times; granted while A held the queues: %d", bTries.Load(), len(bGrantWhileA))
		rep.Faults = fmt.Sprintf("leader's then a follower's clock stepped +%v, -%v, +%v while A held 4 orderly queues", clockStep, 2*clockStep, clockStep)
	})
}

// TestC2DelayLevelsUnderClockJumps: a producer sends a level-2 (5 s) delayed
// message every 200 ms to the leader while its clock steps +10 min, to -10
// min and back, then a follower's. Every delayed message must reach its real
// topic exactly once. Documented bounds (the Java rule): a message is early by
// at most its delay while the leader's clock is ahead or was ahead when it was
// stored, and never later than twice its delay; with only a follower's clock
// stepped, every message is on time.
func TestC2DelayLevelsUnderClockJumps(t *testing.T) {
	requireChaos(t, fullOnly)
	clockScenario(t, "C2", clockGroupOptions{}, func(g *clockGroup, rep *Report) {
		const topic = "ChaosC2Delayed"
		const delay = 5 * time.Second // level 2 of the default table
		g.c.CreateTopic(topic, 4)
		type delayed struct {
			sent  time.Time
			phase string
		}
		var mu sync.Mutex
		sent := map[string]delayed{}
		phase := atomic.Value{}
		phase.Store("normal")
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var sendErrs atomic.Int64
		repeatEvery(&wg, stop, 200*time.Millisecond, func(i int) {
			id := fmt.Sprintf("C2-%05d", i)
			at := time.Now()
			ext := clockSendExt(topic, int32(i%4), "C2p", id, map[string]string{store.PropertyDelayLevel: "2"})
			if _, err := g.send(g.leader(), ext, id); err != nil {
				sendErrs.Add(1)
				return
			}
			mu.Lock()
			sent[id] = delayed{sent: at, phase: phase.Load().(string)}
			mu.Unlock()
		})
		// The watcher: when each message first shows in its real topic.
		seen := map[string]time.Time{}
		dup := map[string]int{}
		stopWatch := make(chan struct{})
		next := map[int32]int64{}
		repeatEvery(&wg, stopWatch, 50*time.Millisecond, func(int) {
			n := g.c.Leader()
			if n == nil {
				return
			}
			for q := range int32(4) {
				msgs, err := g.readQueueAt(n.ID, topic, q)
				if err != nil {
					continue
				}
				now := time.Now()
				for _, m := range msgs {
					if m.offset < next[q] {
						continue
					}
					next[q] = m.offset + 1
					mu.Lock()
					if _, ok := seen[m.body]; ok {
						dup[m.body]++
					} else {
						seen[m.body] = now
					}
					mu.Unlock()
				}
			}
		})
		time.Sleep(6 * time.Second)
		l := g.leader()
		for _, s := range []struct {
			d     time.Duration
			phase string
		}{{clockStep, "leader+10m"}, {-2 * clockStep, "leader-10m"}, {clockStep, "leader back"}} {
			phase.Store(s.phase)
			g.jump(rep, l, "leader", s.d)
			time.Sleep(8 * time.Second)
		}
		f := g.follower()
		for _, s := range []struct {
			d     time.Duration
			phase string
		}{{clockStep, "follower+10m"}, {-2 * clockStep, "follower-10m"}, {clockStep, "follower back"}} {
			phase.Store(s.phase)
			g.jump(rep, f, "follower", s.d)
			time.Sleep(8 * time.Second)
		}
		close(stop)
		time.Sleep(2*delay + 3*time.Second)
		close(stopWatch)
		wg.Wait()

		type tally struct{ n, early, late int }
		per := map[string]*tally{}
		var maxLate, maxEarly time.Duration
		missing := 0
		for id, d := range sent {
			tl := per[d.phase]
			if tl == nil {
				tl = &tally{}
				per[d.phase] = tl
			}
			tl.n++
			at, ok := seen[id]
			if !ok {
				missing++
				rep.Fail("delayed %s (sent %s, phase %s) never reached %s", id, d.sent.Format("15:04:05.000"), d.phase, topic)
				continue
			}
			off := at.Sub(d.sent.Add(delay))
			switch {
			case off < -time.Second:
				tl.early++
				maxEarly = max(maxEarly, -off)
			case off > 3*time.Second:
				tl.late++
				maxLate = max(maxLate, off)
			}
			if off > delay+3*time.Second {
				rep.Fail("delayed %s (phase %s) delivered %v late, past the bound of its delay", id, d.phase, off.Round(time.Millisecond))
			}
			if len(d.phase) > 8 && d.phase[:8] == "follower" && (off < -time.Second || off > 3*time.Second) {
				rep.Fail("delayed %s sent while only a follower's clock was stepped (%s) delivered %v off its due time", id, d.phase, off.Round(time.Millisecond))
			}
		}
		for id, n := range dup {
			rep.Fail("delayed %s delivered %d extra times", id, n)
		}
		for id := range seen {
			if _, ok := sent[id]; !ok && sendErrs.Load() == 0 {
				rep.Fail("phantom delayed message %s", id)
			}
		}
		phases := make([]string, 0, len(per))
		for p := range per {
			phases = append(phases, p)
		}
		sort.Strings(phases)
		for _, p := range phases {
			tl := per[p]
			rep.Note("delayed messages sent during %s: %d, early by >1 s: %d, late by >3 s: %d", p, tl.n, tl.early, tl.late)
		}
		rep.Note("largest earliness %v, largest lateness %v (delay %v); missing %d; send errors %d", maxEarly.Round(time.Millisecond),
			maxLate.Round(time.Millisecond), delay, missing, sendErrs.Load())
		rep.Faults = fmt.Sprintf("leader's then a follower's clock stepped +%v, -%v, +%v while level-2 messages were sent", clockStep, 2*clockStep, clockStep)
	})
}

// TestC3RetentionUnderClockJumps: segments are kept 15 min (fileReservedTime)
// and retention may run at any hour, every second. A filler topic grows the
// CommitLog over several 1 MiB segments. The leader's clock stepping +10 min
// must delete nothing (every segment is younger than 15 min even then); a
// follower's stepping +20 min deletes, on that follower only, exactly what
// the rule says with its clock (every full segment); a -10 min step deletes
// nothing. Committed data never changes: the replicas' bytes over the range
// they all hold are identical, and every acknowledged message is on the
// nodes that kept their segments and above the follower's new minimum on it.
func TestC3RetentionUnderClockJumps(t *testing.T) {
	requireChaos(t, fullOnly)
	hours := make([]int, 24)
	for i := range hours {
		hours[i] = i
	}
	start := time.Now()
	rep := Report{Scenario: "C3", Seed: start.UnixNano() % 1000}
	g := startClockGroup(t, clockGroupOptions{
		Store:  store.Config{FileReservedTime: 15 * time.Minute, DeleteWhenHours: hours},
		Broker: func(c *broker.Config) { c.RetentionInterval = time.Second },
	})
	topic := "ChaosC3Load"
	g.c.CreateTopic("ChaosC3Fill", 1)
	stopFill := make(chan struct{})
	var fillWG sync.WaitGroup
	fillWG.Add(1)
	// The filler is not load but the fault's fuel (segments old enough to
	// delete), so it proposes on the node directly: no client is needed
	// to grow the CommitLog, and its topic is not judged.
	go func() { // 4 KiB bodies, about 1 MiB a second: a segment a second
		defer fillWG.Done()
		body := make([]byte, 4<<10)
		for {
			select {
			case <-stopFill:
				return
			case <-time.After(4 * time.Millisecond):
			}
			if l := g.c.Leader(); l != nil {
				if n := l.Node(); n != nil {
					_, _ = n.Propose(t.Context(), [][]byte{testcluster.Message("ChaosC3Fill", 0, body)})
				}
			}
		}
	}()
	// The filler runs while the load's maximum is measured: it is part of
	// what the group carries throughout.
	p := startPacedLoad(t, g.inprocGroup, &rep, topic, clockLoadQueues)
	mins := func() map[raft.ServerID]store.PhysicalOffset {
		out := map[raft.ServerID]store.PhysicalOffset{}
		for _, m := range g.c.Running() {
			out[m.ID] = m.Node().Store().MinPhysicalOffset()
		}
		return out
	}
	time.Sleep(2 * time.Second) // the load's 8 s of measuring beside the filler grew the CommitLog already
	before := mins()
	l := g.leader()
	g.jump(&rep, l, "leader", clockStep)
	time.Sleep(4 * time.Second)
	if got := mins(); fmt.Sprint(got) != fmt.Sprint(before) {
		rep.Fail("a +%v step on the leader deleted segments (min offsets %v → %v) although every one is younger than 15 min even then", clockStep, before, got)
	}
	g.jump(&rep, l, "leader", -clockStep)
	f := g.follower()
	g.jump(&rep, f, "follower", 2*clockStep)
	time.Sleep(4 * time.Second)
	afterF := mins()
	g.jump(&rep, f, "follower", -2*clockStep)
	for id, off := range afterF {
		switch {
		case id == f && off == before[id]:
			rep.Fail("a +%v step on follower %s deleted nothing: its full segments are 20 min old by its clock", 2*clockStep, f)
		case id != f && off != before[id]:
			rep.Fail("%s deleted segments (min %d → %d) while only follower %s's clock was stepped", id, before[id], off, f)
		}
	}
	rep.Note("follower %s's +%v step: its min CommitLog offset %d → %d (%d segments); the others kept %v", f, 2*clockStep,
		before[f], afterF[f], (afterF[f]-before[f])>>20, before)
	g.jump(&rep, l, "leader", -clockStep)
	time.Sleep(4 * time.Second)
	if got := mins(); fmt.Sprint(got) != fmt.Sprint(afterF) {
		rep.Fail("a -%v step on the leader deleted segments (%v → %v)", clockStep, afterF, got)
	}
	g.clocks.Reset()
	reset := time.Now()
	g.reportSteps(p, reset)
	if !p.waitAcks(reset, 20, 10*time.Second) {
		rep.Fail("no acks in the 10 s after the clocks were reset")
	}
	close(stopFill)
	fillWG.Wait()
	p.stop()
	// The drain reads the load's topic from offset 0 through brokerId 0,
	// which only a node that kept every segment can answer: not f.
	var drain map[QueueKey][]string
	if l := g.leader(); l != f {
		drain = p.drain()
	} else {
		rep.Note("final drain not run: %s, whose retention deleted the topic's first segments, leads", f)
	}
	g.closeBrokers()

	// The bytes all replicas hold are identical; then the checker on the two
	// that kept every segment, and the follower's queues above its minimum.
	g.c.WaitConverged(30 * time.Second)
	var from, to store.PhysicalOffset
	for i, m := range g.c.Running() {
		lo, hi := m.Node().Store().MinPhysicalOffset(), m.Node().FSM().CommitLogOffset()
		if i == 0 || lo > from {
			from = lo
		}
		if i == 0 || hi < to {
			to = hi
		}
	}
	var ref testcluster.ReplicaDigest
	for i, m := range g.c.Running() {
		d, err := testcluster.Digest(m, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			ref = d
		} else if d.CommitLogSHA != ref.CommitLogSHA || d.AppliedIndex != ref.AppliedIndex {
			rep.Fail("%s's CommitLog [%d,%d) or applied index differs from the first replica's", m.ID, from, to)
		}
	}
	var logs []ReplicaLog
	var fLog ReplicaLog
	for _, m := range g.c.Members() {
		g.c.StopNode(m.ID)
		rl, err := readInprocReplica(string(m.ID), filepath.Join(m.Dir, node.StoreDirName), topic, inprocLogger())
		if err != nil {
			rep.Fail("read replica %s: %v", m.ID, err)
			continue
		}
		if m.ID == f {
			fLog = rl
		} else {
			logs = append(logs, rl)
		}
	}
	got := Check(p.h, logs, drain)
	expired := 0
	if len(logs) > 0 {
		for q, ids := range logs[0].Queues {
			fids := fLog.Queues[q]
			if len(fids) != len(ids) {
				got.Failures = append(got.Failures, fmt.Sprintf("follower %s queue %s holds %d entries, the others %d", f, q, len(fids), len(ids)))
				continue
			}
			for i := range ids {
				switch {
				case fids[i] == "":
					expired++
				case fids[i] != ids[i]:
					got.Failures = append(got.Failures, fmt.Sprintf("follower %s queue %s@%d holds %q, the others %q", f, q, i, fids[i], ids[i]))
				}
			}
		}
	}
	rep.Note("load messages below follower %s's new minimum (deleted by its retention, as its clock said): %d; the others hold all", f, expired)
	got.Replicas = len(g.c.Members())
	got.Identical = len(logs) + 1
	got.Scenario, got.Seed, got.Notes, got.Duration = rep.Scenario, rep.Seed, rep.Notes, time.Since(start)
	got.Faults = fmt.Sprintf("leader's clock +%v; a follower's +%v; the leader's -%v (fileReservedTime 15m)", clockStep, 2*clockStep, clockStep)
	got.Failures = append(got.Failures, rep.Failures...)
	t.Logf("\n%s", got.String())
	appendReport(got.String())
	if !got.OK() {
		t.Errorf("C3 failed its checks (details above)")
	}
}

// TestC4TransactionCheckBackUnderClockJumps: transactional producers send
// half messages and commit or roll back some of them at once, leaving the
// rest to the check-back (timeout 3 s, a round a second); the producer never
// answers a check-back, so only its own END_TRANSACTION decides. While the
// leader's clock is 10 min ahead, check-backs come early (by at most the
// step; documented), never a decision; after it steps back 20 min, half
// messages stored after the step must still be asked about after 3 s (the
// scan used to stop at the first half message stamped in the clock's future:
// the C4 fix). Committed messages reach their topic exactly once, rolled-back
// and undecided ones never, and nothing goes to the check-max topic.
func TestC4TransactionCheckBackUnderClockJumps(t *testing.T) {
	requireChaos(t, fullOnly)
	const timeout = 3 * time.Second
	clockScenario(t, "C4", clockGroupOptions{Broker: func(c *broker.Config) {
		c.TransactionTimeout, c.TransactionCheckInterval = timeout, time.Second
	}}, func(g *clockGroup, rep *Report) {
		const topic = "ChaosC4Tx"
		g.c.CreateTopic(topic, 4)
		type half struct {
			id         string
			sent       time.Time
			halfOffset int64
			phys       int64
		}
		n := 0
		sendHalves := func(k int) []half {
			var out []half
			for range k {
				id := fmt.Sprintf("C4-%04d", n)
				n++
				ext := clockSendExt(topic, int32(n%4), "C4p", id, map[string]string{store.PropertyTransaction: "true", store.PropertyProducerGroup: "C4p"})
				ext["sysFlag"] = strconv.Itoa(int(store.SysFlagTxPrepared))
				at := time.Now()
				ack, err := g.send(g.leader(), ext, id)
				if err != nil {
					rep.Fail("prepared send %s: %v", id, err)
					continue
				}
				out = append(out, half{id: id, sent: at, halfOffset: ack.queueOffset, phys: ack.physOffset})
			}
			return out
		}
		decided := map[string]int32{}
		end := func(h half, state int32) {
			ext := map[string]string{"producerGroup": "C4p", "tranStateTableOffset": strconv.FormatInt(h.halfOffset, 10),
				"commitLogOffset": strconv.FormatInt(h.phys, 10), "commitOrRollback": strconv.Itoa(int(state)),
				"fromTransactionCheck": "false", "msgId": h.id, "transactionId": h.id}
			r, err := g.call(g.leader(), transport.EndTransaction, ext, nil)
			if err != nil || r.ResponseCode() != transport.Success {
				rep.Fail("end transaction %s (%d): %v %v", h.id, state, r, err)
				return
			}
			decided[h.id] = state
		}
		firstCheck := func(hs []half, since time.Time) map[string]time.Duration {
			out := map[string]time.Duration{}
			for _, c := range g.checksSince(since) {
				for _, h := range hs {
					if c.txID == h.id {
						if _, ok := out[h.id]; !ok {
							out[h.id] = c.at.Sub(h.sent)
						}
					}
				}
			}
			return out
		}
		phase := func(name string, hs []half, since time.Time, wantAfter time.Duration, early bool) {
			got := firstCheck(hs, since)
			var lo, hi time.Duration
			for i, h := range hs {
				d, ok := got[h.id]
				if !ok {
					rep.Fail("%s: %s (half offset %d) never asked about", name, h.id, h.halfOffset)
					continue
				}
				if i == 0 || d < lo {
					lo = d
				}
				hi = max(hi, d)
				if !early && d < wantAfter-500*time.Millisecond {
					rep.Fail("%s: %s asked about %v after it was sent, before the %v timeout", name, h.id, d.Round(time.Millisecond), wantAfter)
				}
			}
			rep.Note("%s: %d half messages, first check-back %v–%v after the send (timeout %v)", name, len(hs), lo.Round(time.Millisecond), hi.Round(time.Millisecond), timeout)
		}

		// Normal: asked after the timeout; three committed, two rolled back.
		t0 := time.Now()
		a := sendHalves(5)
		time.Sleep(timeout + 3*time.Second)
		phase("normal", a, t0, timeout, false)
		for i, h := range a {
			end(h, map[bool]int32{true: transaction.CommitType, false: transaction.RollbackType}[i < 3])
		}
		// Leader +10 min: half messages stored before the step look old at
		// once (asked early, by at most the step); those stored after it are
		// stamped in the stepped frame and wait the timeout as usual.
		l := g.leader()
		pre := sendHalves(3)
		g.jump(rep, l, "leader", clockStep)
		t1 := time.Now()
		b := sendHalves(5)
		time.Sleep(timeout + 3*time.Second)
		phase("leader +10m (stored after the step)", b, t1, timeout, false)
		phase("leader +10m (stored just before the step)", pre, pre[0].sent, timeout, true)
		for _, h := range append(pre, b...) {
			end(h, transaction.CommitType)
		}
		// Half messages stored now are stamped 10 min ahead; after the step
		// back they lie 20 min in the clock's future.
		ahead := sendHalves(3)
		g.jump(rep, l, "leader", -2*clockStep)
		t2 := time.Now()
		c := sendHalves(5)
		time.Sleep(timeout + 3*time.Second)
		phase("leader -10m (stored after the step)", c, t2, timeout, false)
		if got := firstCheck(ahead, t2); len(got) > 0 {
			rep.Note("leader -10m: %d of %d half messages stamped 20 min in the clock's future asked about anyway", len(got), len(ahead))
		} else {
			rep.Note("leader -10m: %d half messages stamped 20 min in the clock's future not asked about (held until the clock passes their stamp + timeout: bounded by the step)", len(ahead))
		}
		for _, h := range append(ahead, c...) {
			end(h, transaction.CommitType)
		}
		g.jump(rep, l, "leader", clockStep)
		// A follower's clock: nothing changes.
		f := g.follower()
		for _, d := range []time.Duration{clockStep, -2 * clockStep} {
			g.jump(rep, f, "follower", d)
			t3 := time.Now()
			e := sendHalves(4)
			time.Sleep(timeout + 3*time.Second)
			phase(fmt.Sprintf("follower %+v", g.clocks.Offset(f)), e, t3, timeout, false)
			for i, h := range e {
				end(h, map[bool]int32{true: transaction.CommitType, false: transaction.RollbackType}[i%2 == 0])
			}
		}
		g.jump(rep, f, "follower", clockStep)
		time.Sleep(2 * time.Second)

		// Committed exactly once, the rest never; nothing in the check-max topic.
		count := map[string]int{}
		for q := range int32(4) {
			msgs, err := g.readQueueAt(g.leader(), topic, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				count[m.body]++
			}
		}
		commits := 0
		for id, st := range decided {
			want := 0
			if st == transaction.CommitType {
				want = 1
				commits++
			}
			if count[id] != want {
				rep.Fail("%s (state %d) is %d times in %s, want %d", id, st, count[id], topic, want)
			}
		}
		for id := range count {
			if _, ok := decided[id]; !ok {
				rep.Fail("%s reached %s without a decision", id, topic)
			}
		}
		if msgs, _ := g.readQueueAt(g.leader(), transaction.CheckMaxTopic, 0); len(msgs) > 0 {
			rep.Fail("%d half messages were moved to %s", len(msgs), transaction.CheckMaxTopic)
		}
		rep.Note("%d half messages, %d committed (each once in %s), %d rolled back (none there); check-backs received %d",
			len(decided), commits, topic, len(decided)-commits, len(g.checksSince(t0)))
		rep.Faults = fmt.Sprintf("leader's clock +%v, -%v, +%v; then a follower's", clockStep, 2*clockStep, clockStep)
	})
}

// TestC5StoreTimestampsUnderClockJumps: a producer sends to one queue every
// 20 ms while the leader's clock steps back 10 min for 4 s and forward again;
// then a follower's. Store timestamps come from the leader's clock, so they
// go backwards at the step; SEARCH_OFFSET_BY_TIMESTAMP must still answer,
// within [min, max] and at a boundary of the stored sequence (an entry at or
// after the time whose predecessor is before it), and exactly for times
// outside the repeated window. A follower's step must not touch the stamps.
func TestC5StoreTimestampsUnderClockJumps(t *testing.T) {
	requireChaos(t, fullOnly)
	clockScenario(t, "C5", clockGroupOptions{}, func(g *clockGroup, rep *Report) {
		const topic = "ChaosC5Stamps"
		g.c.CreateTopic(topic, 1)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var sendErrs atomic.Int64
		repeatEvery(&wg, stop, 20*time.Millisecond, func(i int) {
			id := fmt.Sprintf("C5-%05d", i)
			if _, err := g.send(g.leader(), clockSendExt(topic, 0, "C5p", id, nil), id); err != nil {
				sendErrs.Add(1)
			}
		})
		time.Sleep(3 * time.Second)
		l := g.leader()
		g.jump(rep, l, "leader", -clockStep)
		time.Sleep(4 * time.Second)
		g.jump(rep, l, "leader", clockStep)
		time.Sleep(3 * time.Second)
		fStart := time.Now()
		f := g.follower()
		g.jump(rep, f, "follower", -clockStep)
		time.Sleep(3 * time.Second)
		g.jump(rep, f, "follower", clockStep)
		fEnd := time.Now()
		time.Sleep(time.Second)
		close(stop)
		wg.Wait()

		msgs, err := g.readQueueAt(g.leader(), topic, 0)
		if err != nil || len(msgs) < 100 {
			t.Fatalf("C5: read %s: %d messages, %v", topic, len(msgs), err)
		}
		back := 0
		var biggest int64
		for i := 1; i < len(msgs); i++ {
			if d := msgs[i-1].storeTS - msgs[i].storeTS; d > 0 {
				back++
				biggest = max(biggest, d)
				if msgs[i].storeTS >= fStart.UnixMilli()-clockStep.Milliseconds()/2 && msgs[i].storeTS <= fEnd.UnixMilli() {
					rep.Fail("store timestamps went back %d ms at offset %d while only the follower's clock was stepped", d, msgs[i].offset)
				}
			}
		}
		if back == 0 {
			rep.Fail("no store timestamp went backwards: the leader's step did not reach the stamps")
		}
		rep.Note("store timestamps went backwards %d time(s), by up to %v, over %d messages", back, time.Duration(biggest)*time.Millisecond, len(msgs))
		search := func(ts int64) (int64, error) {
			r, err := g.call(g.leader(), transport.SearchOffsetByTimestamp, map[string]string{"topic": topic, "queueId": "0", "timestamp": strconv.FormatInt(ts, 10)}, nil)
			if err != nil {
				return 0, err
			}
			if r.ResponseCode() != transport.Success {
				return 0, fmt.Errorf("%s %s", r.ResponseCode(), r.Remark)
			}
			return strconv.ParseInt(r.Field("offset"), 10, 64)
		}
		minO, maxO := msgs[0].offset, msgs[len(msgs)-1].offset+1
		exact, boundary := 0, 0
		var examples []string
		for i := 0; i < len(msgs); i += max(1, len(msgs)/60) {
			ts := msgs[i].storeTS
			got, err := search(ts)
			if err != nil {
				rep.Fail("search for %d: %v", ts, err)
				continue
			}
			if got < minO || got > maxO {
				rep.Fail("search for %d answered %d, outside [%d, %d]", ts, got, minO, maxO)
				continue
			}
			k := int(got - minO)
			isBoundary := (k == len(msgs) || msgs[k].storeTS >= ts) && (k == 0 || msgs[k-1].storeTS < ts)
			if !isBoundary {
				rep.Fail("search for %d answered %d, not a boundary of the stored sequence", ts, got)
			}
			// The first message stamped at or after ts in a sorted world.
			want := -1
			for j := range msgs {
				if msgs[j].storeTS >= ts {
					want = j
					break
				}
			}
			switch {
			case int64(want)+minO == got:
				exact++
			case isBoundary:
				boundary++
				if len(examples) < 3 {
					examples = append(examples, fmt.Sprintf("time of offset %d → offset %d", msgs[i].offset, got))
				}
			}
		}
		oldest := msgs[0].storeTS
		for _, m := range msgs {
			oldest = min(oldest, m.storeTS)
		}
		if got, err := search(oldest - 60_000); err != nil || got != minO {
			rep.Fail("search before every message answered %d %v, want %d", got, err, minO)
		}
		if got, err := search(time.Now().Add(time.Hour).UnixMilli()); err != nil || got != maxO {
			rep.Fail("search after every message answered %d %v, want %d", got, err, maxO)
		}
		rep.Note("offset searches: %d exact, %d at another boundary (%v); none outside [min,max]; send errors %d",
			exact, boundary, examples, sendErrs.Load())
		rep.Faults = fmt.Sprintf("leader's clock -%v for 4 s, then a follower's -%v for 3 s", clockStep, clockStep)
	})
}

// appendReport adds a report block to ROCKETRAFT_CHAOS_REPORT, if set.
func appendReport(block string) {
	if path := os.Getenv(envReport); path != "" {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			fmt.Fprintf(f, "%s\n\n", block)
			_ = f.Close()
		}
	}
}
