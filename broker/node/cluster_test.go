package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/devcert"
)

func TestReplicatesConcurrentProducers(t *testing.T) {
	c := testcluster.New(t, 3, testcluster.Options{})
	c.CreateTopic(testTopic, 100)
	h := &history{}
	start := time.Now()
	produce(t, c, h, 50, 200, 100, nil) // 10,000 messages
	t.Logf("10,000 messages in %s, proposer %+v", time.Since(start), c.Leader().Node().ProposerStats())
	if len(h.acks) != 10000 || h.failed.Load() != 0 || h.unknown.Load() != 0 {
		t.Fatalf("acks %d failed %d unknown %d, want 10000/0/0", len(h.acks), h.failed.Load(), h.unknown.Load())
	}
	c.AssertReplicasIdentical()
	verifyAcks(t, c, h)
	// Dense queue offsets: 100 messages per queue, offsets 0..99 each.
	perQueue := map[int32]map[int64]bool{}
	for _, a := range h.acks {
		if perQueue[a.queue] == nil {
			perQueue[a.queue] = map[int64]bool{}
		}
		perQueue[a.queue][int64(a.res.QueueOffset)] = true
	}
	for q, offs := range perQueue {
		for i := range int64(100) {
			if !offs[i] {
				t.Fatalf("queue %d: offset %d never acked", q, i)
			}
		}
	}
}

func TestReplicatesOverLoopbackTCP(t *testing.T) {
	c := testcluster.New(t, 3, testcluster.Options{TCP: true})
	c.CreateTopic(testTopic, 8)
	h := &history{}
	produce(t, c, h, 16, 64, 8, nil)
	if len(h.acks) != 16*64 {
		t.Fatalf("acks %d failed %d unknown %d", len(h.acks), h.failed.Load(), h.unknown.Load())
	}
	// A clean restart over TCP: the node rebinds its port and catches up.
	f := follower(c)
	c.StopNode(f.ID)
	produce(t, c, h, 16, 16, 8, nil)
	c.RestartNode(f.ID)
	c.AssertReplicasIdentical()
	verifyAcks(t, c, h)
}

// TestReplicatesOverMutualTLS: a group whose raft port runs mutual TLS
// (raftTlsEnable) elects a leader, replicates, and a restarted follower
// handshakes again and catches up.
func TestReplicatesOverMutualTLS(t *testing.T) {
	certs, err := devcert.Write(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Not FastTimings: its 50 ms lease is shorter than a TLS handshake on a
	// loaded two-core machine, so the leader would step down mid-run and
	// leave sends with an unknown outcome, which this test does not expect.
	c := testcluster.New(t, 3, testcluster.Options{TCP: true, Configure: tlsTimings,
		RaftTLS: &transport.StreamTLS{CertFile: certs.Cert, KeyFile: certs.Key, CAFile: certs.CACert}})
	c.CreateTopic(testTopic, 4)
	h := &history{}
	produce(t, c, h, 8, 32, 4, nil)
	f := follower(c)
	c.StopNode(f.ID)
	produce(t, c, h, 8, 8, 4, nil)
	c.RestartNode(f.ID)
	if len(h.acks) != 8*40 {
		t.Fatalf("acks %d failed %d unknown %d", len(h.acks), h.failed.Load(), h.unknown.Load())
	}
	c.AssertReplicasIdentical()
	verifyAcks(t, c, h)
}

// tlsTimings are a quarter of raft's defaults: elections stay well under a
// second, but a leader survives a slow TLS handshake to a restarted follower.
func tlsTimings(cfg *node.Config) {
	cfg.HeartbeatTimeout = 400 * time.Millisecond
	cfg.ElectionTimeout = 400 * time.Millisecond
	cfg.LeaderLeaseTimeout = 200 * time.Millisecond
	cfg.CommitTimeout = 5 * time.Millisecond
}

func TestSubscribersSeeLeaderOnlyAfterBarrier(t *testing.T) {
	c := testcluster.New(t, 3, testcluster.Options{FastTimings: true})
	c.CreateTopic(testTopic, 4)
	produce(t, c, &history{}, 4, 50, 4, nil)
	old := c.Leader()
	oldTerm := old.Node().State().Term
	acked := old.Node().FSM().CommitLogOffset() // everything acked so far ends here
	subs := map[*testcluster.Member]<-chan node.RoleEvent{}
	for _, m := range c.Members() {
		ch, cancel := m.Node().Subscribe()
		defer cancel()
		subs[m] = ch
		ev := <-ch // the current role comes first
		if (m == old) != (ev.Role == node.RoleLeader) {
			t.Fatalf("%s: initial role %s", m.ID, ev.Role)
		}
	}
	target := follower(c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := old.Node().TransferLeadership(ctx, target.ID); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-subs[target]:
			if ev.Role != node.RoleLeader {
				continue // candidate / leader-pending on the way
			}
			if ev.Term <= oldTerm || ev.LeaderID != target.ID {
				t.Fatalf("new leader event %+v (old term %d)", ev, oldTerm)
			}
			// The barrier ran: every entry the old leader acknowledged is
			// applied before the new one announces itself.
			if got := target.Node().FSM().CommitLogOffset(); got < acked {
				t.Fatalf("leader announced with CommitLog at %d, acked data ends at %d", got, acked)
			}
			for {
				select {
				case ev := <-subs[old]:
					if ev.Role == node.RoleFollower && ev.LeaderID == target.ID {
						return
					}
				case <-deadline:
					t.Fatal("old leader never published follower with the new leader")
				}
			}
		case <-deadline:
			t.Fatal("new leader never published RoleLeader")
		}
	}
}
