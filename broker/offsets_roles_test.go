package broker

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// TestPendingOffsetsAcrossLeadershipChanges: consumer offsets the leader holds
// but has not replicated (the flush interval is an hour here) are replicated
// before a planned leadership transfer, and dropped when leadership is lost
// unplanned, so a later re-election cannot flush them over newer offsets.
// (Found by TestGroupResumesFromCommittedOffset failing under load: an
// election in the shared cluster lost the offsets a consumer committed at
// shutdown.)
func TestPendingOffsetsAcrossLeadershipChanges(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, []Peer{{ID: "n0", ClientAddr: "127.0.0.1:10911"}, {ID: "n1"}})
	tb.replica.PeerList = []replica.Peer{{ID: "n0", Address: "127.0.0.1:40911", Suffrage: "Voter"},
		{ID: "n1", Address: "127.0.0.1:40921", Suffrage: "Voter"}}
	tb.call(t, transport.SendMessage, sendExt("TO", 0, ""), []byte("x"))
	commit := func(off string) { t.Helper(); updateOffset(t, tb, "g", "TO", off) }
	replicated := func() (int64, bool) {
		off, ok := tb.replica.ConsumerOffset("g", "TO", 0)
		return int64(off), ok
	}

	commit("1")
	if off, ok := replicated(); ok {
		t.Fatalf("offset %d replicated before any flush; the test needs it pending", off)
	}
	if r := tb.call(t, transport.RaftTransferLeader, map[string]string{"id": "n1"}, nil); r.ResponseCode() != transport.Success {
		t.Fatalf("transfer: %s", r.Remark)
	}
	if off, ok := replicated(); !ok || off != 1 {
		t.Fatalf("after a planned transfer the replica holds %d (%v), want 1 flushed before it", off, ok)
	}
	if got := tb.replica.TransferTargets(); len(got) != 1 || got[0] != "n1" {
		t.Fatalf("transfer targets %v, want [n1]", got)
	}

	// Pending again, then leadership is lost without a transfer.
	commit("2")
	st := tb.replica.Status()
	tb.replica.SetStatus(replica.Status{Role: replica.RoleFollower, Term: st.Term + 1, SelfID: "n0", LeaderID: "n1"})
	waitRole(t, tb.b, replica.RoleFollower)
	if off, ok := tb.b.offsets.Committed("g", "TO", 0); !ok || off != 1 {
		t.Fatalf("after losing leadership the broker reports %d (%v), want the replicated 1", off, ok)
	}
	tb.replica.SetStatus(replica.Status{Role: replica.RoleLeader, Term: st.Term + 2, SelfID: "n0", LeaderID: "n0"})
	waitRole(t, tb.b, replica.RoleLeader)
	if err := tb.b.offsets.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if off, _ := replicated(); off != 1 {
		t.Fatalf("re-elected leader flushed the stale offset: replica holds %d, want 1", off)
	}
}

func waitRole(t *testing.T, b *Broker, role replica.Role) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for b.Status().Role != role {
		if time.Now().After(deadline) {
			t.Fatalf("broker role %v, want %v", b.Status().Role, role)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestR2QueriedOffsetNeverGoesBack: QUERY_CONSUMER_OFFSET answers never move
// back when the leader loses leadership with offsets pending. Found by chaos
// scenario R2 (the leader isolated from its followers): the consumer-side
// checker saw a group's committed offset go 271 → 259 and 332 → 326 on one
// node, because the answer was the pending offset, which a flush in flight and
// the drop at leadership loss take away again. Each answer is now replicated
// before it is given (offsets.Buffer.Durable).
func TestR2QueriedOffsetNeverGoesBack(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	tb.call(t, transport.SendMessage, sendExt("TR2", 0, ""), []byte("x"))
	q := map[string]string{"consumerGroup": "g", "topic": "TR2", "queueId": "0", "setZeroIfNotFound": "false"}
	query := func() int64 {
		t.Helper()
		r := tb.call(t, transport.QueryConsumerOffset, q, nil)
		if r.ResponseCode() != transport.Success {
			t.Fatalf("query: code %d %s", r.Code, r.Remark)
		}
		off, err := strconv.ParseInt(r.Field("offset"), 10, 64)
		if err != nil {
			t.Fatalf("query: offset %q", r.Field("offset"))
		}
		return off
	}
	commit := func(off string) { t.Helper(); updateOffset(t, tb, "g", "TR2", off) }
	commit("5")
	first := query()
	commit("9")
	second := query()
	if rep, _ := tb.replica.ConsumerOffset("g", "TR2", 0); int64(rep) != second {
		t.Errorf("answered %d while the replicas hold %d: an answer that is not replicated can be lost", second, rep)
	}
	st := tb.replica.Status()
	tb.replica.SetStatus(replica.Status{Role: replica.RoleFollower, Term: st.Term + 1, SelfID: "n0", LeaderID: "n1"})
	waitRole(t, tb.b, replica.RoleFollower)
	if first != 5 || second != 9 {
		t.Fatalf("answers %d then %d, want 5 and 9", first, second)
	}
	// A follower relays the query to the leader (TestK3N3FollowerRelaysOffsetQueries);
	// with no leader known it gives no offset at all rather than an older one.
	if r := tb.call(t, transport.QueryConsumerOffset, q, nil); r.ResponseCode() == transport.Success {
		if off, _ := strconv.ParseInt(r.Field("offset"), 10, 64); off < second {
			t.Fatalf("answered %d after losing leadership, below %d", off, second)
		}
	}
}

// TestK3N3FollowerRelaysOffsetQueries: QUERY_CONSUMER_OFFSET is the leader's
// to answer. A node that is not the ready leader relayed none and answered from
// its own applied offsets, which lag: chaos K3 (every node killed and
// restarted) saw a restarted node answer 911 and then, replaying its log,
// 772; N3 (partitions) saw the new leader's address answer 506 a second after
// the old leader's 610. A follower now relays the query, as it relays writes.
func TestK3N3FollowerRelaysOffsetQueries(t *testing.T) {
	leader := startTestBroker(t, replica.RoleLeader, nil)
	follower := startTestBroker(t, replica.RoleFollower, []Peer{{ID: "n0", ClientAddr: leader.b.Addr()}})
	if err := leader.replica.CommitOffsets(context.Background(), []fsm.OffsetEntry{{Group: "g", Topic: "TQ", QueueID: 0, Offset: 911}}); err != nil {
		t.Fatal(err)
	}
	// The follower's own applied state lags the leader's.
	if err := follower.replica.CommitOffsets(context.Background(), []fsm.OffsetEntry{{Group: "g", Topic: "TQ", QueueID: 0, Offset: 772}}); err != nil {
		t.Fatal(err)
	}
	q := map[string]string{"consumerGroup": "g", "topic": "TQ", "queueId": "0", "setZeroIfNotFound": "false"}
	r := follower.call(t, transport.QueryConsumerOffset, q, nil)
	if r.ResponseCode() != transport.Success || r.Field("offset") != "911" {
		t.Fatalf("query on a follower: code %d offset %q, want the leader's 911 (its own lagging 772?)", r.Code, r.Field("offset"))
	}
}

// TestK1RunningGroupsCommitsNeverLowerTheOffset: chaos K1 at load saw a
// committed offset go 1050 → 990 on one leader 200 ms apart: after a
// rebalance the new owner persisted the offset it had queried, the previous
// owner's last commit having come in between. While a group has consumers
// online its UPDATE_CONSUMER_OFFSET is progress and never lowers the offset;
// with none online (an operator's tool) any value is set.
func TestK1RunningGroupsCommitsNeverLowerTheOffset(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	tb.call(t, transport.SendMessage, sendExt("TK1", 0, ""), []byte("x"))
	commit := func(group, off string) { t.Helper(); updateOffset(t, tb, group, "TK1", off) }
	committed := func(group string) store.QueueOffset { t.Helper(); return replicatedOffset(t, tb, group, "TK1") }
	heartbeat(t, tb, "g", "TK1")
	commit("g", "1050")
	commit("g", "990") // the new owner's stale persist
	if off := committed("g"); off != 1050 {
		t.Fatalf("running group: committed %d after 1050 then 990, want 1050", off)
	}
	commit("g", "1100")
	if off := committed("g"); off != 1100 {
		t.Fatalf("running group: committed %d after 1100, want 1100", off)
	}
	// No consumer of "ops" online, and the registry has heard every live
	// client: an operator's tool sets what it sends.
	registryComplete(tb.b)
	commit("ops", "500")
	commit("ops", "200")
	if off := committed("ops"); off != 200 {
		t.Fatalf("group with no consumer online: committed %d after 500 then 200, want 200", off)
	}
}

// TestK3FreshNodeCommitsNeverLowerTheOffset: chaos K3 (every node killed and
// restarted) saw a committed offset go 876 → 715 on one leader 200 ms apart.
// The restarted leader's registry was empty until the group's consumers
// heartbeated it (every 30 s), so a consumer's stale UPDATE_CONSUMER_OFFSET
// was set as an operator's would be. Until a node has collected heartbeats for
// ConsumerCoverage, every group's commits are progress.
func TestK3FreshNodeCommitsNeverLowerTheOffset(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	tb.call(t, transport.SendMessage, sendExt("TK3", 0, ""), []byte("x"))
	commit := func(off string) { t.Helper(); updateOffset(t, tb, "g", "TK3", off) }
	committed := func() store.QueueOffset { t.Helper(); return replicatedOffset(t, tb, "g", "TK3") }
	commit("876")
	commit("715") // a consumer's stale commit, before any heartbeat reached this node
	if off := committed(); off != 876 {
		t.Fatalf("fresh node, no heartbeat yet: committed %d after 876 then 715, want 876", off)
	}
	registryComplete(tb.b)
	commit("700") // the registry now lists every live client, and g has none
	if off := committed(); off != 700 {
		t.Fatalf("registry complete, no consumer online: committed %d after 700, want 700", off)
	}
}

// updateOffset sends UPDATE_CONSUMER_OFFSET for queue 0 of topic.
func updateOffset(t *testing.T, tb *testBroker, group, topic, off string) {
	t.Helper()
	u := map[string]string{"consumerGroup": group, "topic": topic, "queueId": "0", "commitOffset": off}
	if r := tb.call(t, transport.UpdateConsumerOffset, u, nil); r.ResponseCode() != transport.Success {
		t.Fatalf("commit %s: %s", off, r.Remark)
	}
}

// replicatedOffset flushes the broker's pending offsets and returns the
// replicated offset of queue 0 of topic.
func replicatedOffset(t *testing.T, tb *testBroker, group, topic string) store.QueueOffset {
	t.Helper()
	if err := tb.b.offsets.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	off, _ := tb.replica.ConsumerOffset(group, topic, 0)
	return off
}
