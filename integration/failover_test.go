package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/transport"
)

// loadPause spaces the producer loop's sends: fast enough to have sends in flight at
// any moment, slow enough not to flood the logs of a 2-core machine.
const loadPause = 5 * time.Millisecond

// failoverSetup starts a private cluster, a producer loop on a fresh topic and a
// consumer group collecting it, and waits for the loop to be acknowledged steadily.
func failoverSetup(t *testing.T) (*cluster, *haltOnce, *collector) {
	t.Helper()
	c := startCluster(t)
	topic := unique(t, "T")
	p := newProducer(t, c)
	sendBodies(t, p, topic, []string{"load-seed"}) // creates the topic for the consumer
	col := newCollector()
	newPushConsumer(t, c, unique(t, "CG"), topic, selectAll, col)
	l := startLoad(p, topic, loadPause)
	halted := false
	t.Cleanup(func() {
		if !halted {
			l.halt()
		}
	})
	if !l.waitAckedAfter(time.Time{}, 100, 30*time.Second) {
		_, _, f := l.stats(time.Time{})
		t.Fatalf("producer loop never reached 100 acks before the fault (%d failures: %v)", len(f), firstFailures(f))
	}
	// Record the seed as sent so verifyDelivered accepts it.
	l.mu.Lock()
	l.attempted["load-seed"] = true
	l.acked["load-seed"] = time.Now()
	l.mu.Unlock()
	return c, &haltOnce{load: l, halted: &halted}, col
}

// haltOnce lets a test halt the loop itself while the cleanup still halts it on an
// early failure.
type haltOnce struct {
	*load
	halted *bool
}

func (h *haltOnce) halt() {
	if !*h.halted {
		*h.halted = true
		h.load.halt()
	}
}

func firstFailures(f []sendFailure) []string {
	var out []string
	for i, x := range f {
		if i == 5 {
			out = append(out, fmt.Sprintf("… %d more", len(f)-5))
			break
		}
		out = append(out, fmt.Sprintf("%s %s: %s", x.at.Format("15:04:05.000"), x.body, x.err))
	}
	return out
}

// leaderFaultUnderLoad removes the leader with fault while the producer loop runs,
// measures the time until the nameserver lists a new brokerId 0 and until the
// producer is acknowledged again, then checks nothing acknowledged was lost and the
// consumer group resumed. It returns the failed sends for the caller to judge.
func leaderFaultUnderLoad(t *testing.T, fault string, do func(*proctest.Proc) bool) []sendFailure {
	c, l, col := failoverSetup(t)
	leader, err := c.waitLeader(10*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}
	oldAddr := c.clientAddrs[leader]

	at := time.Now()
	clean := do(c.nodes[leader])
	stopped := time.Since(at)
	newLeader, err := c.waitLeader(60*time.Second, oldAddr, 1)
	if err != nil {
		t.Fatalf("after %s of leader n%d: %v", fault, leader, err)
	}
	nsGap := time.Since(at)
	t.Logf("%s of leader n%d took %v (clean exit: %v); n%d listed as brokerId 0 on the nameserver %v after the fault began",
		fault, leader, stopped.Round(time.Millisecond), clean, newLeader, nsGap.Round(time.Millisecond))

	if !l.waitAckedAfter(at, 200, 120*time.Second) {
		_, _, f := l.stats(at)
		t.Errorf("producer did not recover within 120 s after %s: %d acks since, %d failures: %v",
			fault, l.ackedAfter(at), len(f), firstFailures(f))
	}
	l.halt()
	firstOK, longestGap, failures := l.stats(at)
	if !firstOK.IsZero() {
		t.Logf("producer: first ack %v after the fault, longest silence between acks %v, %d failed sends %v",
			firstOK.Sub(at).Round(time.Millisecond), longestGap.Round(time.Millisecond), len(failures), firstFailures(failures))
	}
	verifyDelivered(t, l.load, col, 120*time.Second)

	// The old leader rejoins as a follower and is listed again under a non-zero id.
	if err := c.nodes[leader].Start(); err != nil {
		t.Fatalf("restart n%d: %v", leader, err)
	}
	if _, err := c.waitLeader(60*time.Second, "", groupSize); err != nil {
		t.Errorf("restarted n%d never listed again: %v", leader, err)
	}
	return failures
}

// TestKillLeaderDuringProducerLoop: kill -9 of the leader. The producer recovers
// after the client refreshes its route, every acknowledged message is consumed and
// the consumer group resumes where it was.
func TestKillLeaderDuringProducerLoop(t *testing.T) {
	requireLong(t)
	leaderFaultUnderLoad(t, "kill -9", func(p *proctest.Proc) bool { p.Kill(); return false })
}

// TestStopLeaderDuringProducerLoop: SIGTERM of the leader. A clean shutdown must exit
// promptly and lose nothing acknowledged. Raft does not hand over leadership on
// Close, so sends fail until the client refreshes its route, as with kill -9; the
// failures are logged, not asserted.
func TestStopLeaderDuringProducerLoop(t *testing.T) {
	requireLong(t)
	var clean bool
	leaderFaultUnderLoad(t, "SIGTERM", func(p *proctest.Proc) bool { clean = p.Stop(15 * time.Second); return clean })
	if !clean {
		t.Errorf("leader did not exit within 15 s of SIGTERM")
	}
}

// TestLeadershipTransferDuringProducerLoop moves leadership with the broker's
// ROCKETRAFT_RAFT_TRANSFER_LEADER admin request while the producer loop runs. The
// producer keeps its stale route (brokerAddrs[0] = the old leader) for up to 30 s;
// the old leader, now a follower, forwards every send, so not one send may fail.
func TestLeadershipTransferDuringProducerLoop(t *testing.T) {
	requireLong(t)
	c, l, col := failoverSetup(t)
	leader, err := c.waitLeader(10*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}
	target := (leader + 1) % groupSize
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	at := time.Now()
	resp, err := c.tc.Invoke(ctx, c.clientAddrs[leader], transport.NewRequest(transport.RaftTransferLeader,
		map[string]string{"id": fmt.Sprintf("n%d", target)}, nil))
	if err != nil {
		t.Fatalf("transfer request to n%d: %v", leader, err)
	}
	switch resp.ResponseCode() {
	case transport.Success:
	case transport.RequestCodeNotSupported:
		t.Skipf("broker answers REQUEST_CODE_NOT_SUPPORTED to %s: no way yet to move leadership without stopping the leader",
			transport.RaftTransferLeader)
	default:
		t.Fatalf("transfer to n%d: %s %s", target, resp.ResponseCode(), resp.Remark)
	}
	newLeader, err := c.waitLeader(30*time.Second, c.clientAddrs[leader], groupSize)
	if err != nil {
		t.Fatalf("after transfer: %v", err)
	}
	if newLeader != target {
		t.Errorf("leadership went to n%d, asked for n%d", newLeader, target)
	}
	t.Logf("transfer n%d → n%d listed on the nameserver after %v", leader, newLeader, time.Since(at).Round(time.Millisecond))

	// Keep producing through the stale route: these sends reach the old leader.
	if !l.waitAckedAfter(time.Now().Add(3*time.Second), 100, 60*time.Second) {
		t.Errorf("producer stalled after the transfer: %d acks since", l.ackedAfter(at))
	}
	l.halt()
	_, longestGap, failures := l.stats(at)
	t.Logf("producer: longest silence between acks %v, %d acks since the transfer", longestGap.Round(time.Millisecond), l.ackedAfter(at))
	if len(failures) > 0 {
		t.Errorf("%d sends failed across a leadership transfer, want 0: %v", len(failures), firstFailures(failures))
	}
	verifyDelivered(t, l.load, col, 60*time.Second)
}
