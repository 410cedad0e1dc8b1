package broker

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/adminapi"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// newAdminBroker builds (without starting) a broker over f and a fresh store
// of its own; requests go straight to its handler chain.
func newAdminBroker(t *testing.T, f func(st *store.Store) *fakereplica.Replica) (*Broker, *fakereplica.Replica, *store.Store) {
	t.Helper()
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	rep := f(st)
	b, err := New(Config{ClusterName: "c", BrokerName: "broker-a", ClientAddr: "127.0.0.1:10911", SelfID: "n0",
		Peers: []Peer{{ID: "n0", ClientAddr: "127.0.0.1:10911"}, {ID: "n1"}}}, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.client.Close() })
	return b, rep, st
}

// leaderFake is a leader at term 3 with two peers and raft counters set.
func leaderFake(st *store.Store) *fakereplica.Replica {
	f := fakereplica.New(st, replica.RoleLeader)
	f.SetStatusQuietly(replica.Status{Role: replica.RoleLeader, Term: 3, SelfID: "n0", LeaderID: "n0", AppliedIndex: 40, CommitIndex: 41, LastIndex: 42})
	f.PeerList = []replica.Peer{{ID: "n0", Address: "127.0.0.1:40911", Suffrage: "Voter"},
		{ID: "n1", Address: "127.0.0.1:40921", Suffrage: "Nonvoter"}}
	f.Stats = map[string]string{"last_contact": "0", "num_peers": "2", "last_snapshot_index": "7", "applied_index": "41"}
	return f
}

func call(t *testing.T, b *Broker, code transport.RequestCode, ext map[string]string) *transport.Command {
	t.Helper()
	resp := b.serve.ServeRemoting(context.Background(), nil, transport.NewRequest(code, ext, nil))
	if resp == nil {
		t.Fatalf("%s: no response", code)
	}
	return resp
}

func TestRuntimeInfoTable(t *testing.T) {
	b, _, _ := newAdminBroker(t, leaderFake)
	resp := call(t, b, transport.GetBrokerRuntimeInfo, nil)
	var body struct{ Table map[string]string }
	if err := json.Unmarshal(resp.Body, &body); err != nil || resp.ResponseCode() != transport.Success {
		t.Fatalf("code=%s body=%s err=%v", resp.ResponseCode(), resp.Body, err)
	}
	want := map[string]string{"role": "LEADER", "term": "3", "leaderId": "n0", "appliedIndex": "40",
		"commitIndex": "41", "lastIndex": "42", "raftAppliedIndex": "41", "brokerName": "broker-a", "commitLogMaxOffset": "0", "numPeers": "2"}
	for k, v := range want {
		if body.Table[k] != v {
			t.Errorf("table[%s] = %q, want %q", k, body.Table[k], v)
		}
	}
}

func TestRaftPeersMarksLeader(t *testing.T) {
	b, _, _ := newAdminBroker(t, leaderFake)
	var body struct{ Servers []replica.Peer }
	if err := json.Unmarshal(call(t, b, transport.RaftPeers, nil).Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Servers) != 2 || !body.Servers[0].Leader || body.Servers[1].Leader || body.Servers[1].Suffrage != "Nonvoter" {
		t.Fatalf("servers = %+v", body.Servers)
	}
}

func TestRaftChangesOnLeader(t *testing.T) {
	b, f, _ := newAdminBroker(t, leaderFake)
	ok := func(code transport.RequestCode, ext map[string]string) {
		t.Helper()
		if r := call(t, b, code, ext); r.ResponseCode() != transport.Success {
			t.Fatalf("%s %v: %s %s", code, ext, r.ResponseCode(), r.Remark)
		}
	}
	ok(transport.RaftAddVoter, map[string]string{"id": "n3", "address": "127.0.0.1:40941"})
	ok(transport.RaftAddNonvoter, map[string]string{"id": "n4", "address": "127.0.0.1:40951"})
	ok(transport.RaftRemoveServer, map[string]string{"id": "n4"})
	ok(transport.RaftTransferLeader, map[string]string{"id": "n1"})
	if got := strings.Join(f.Calls(), ","); got != "voter n3 127.0.0.1:40941,nonvoter n4 127.0.0.1:40951,remove n4" {
		t.Fatalf("calls = %s", got)
	}
	if got := f.TransferTargets(); len(got) != 1 || got[0] != "n1" {
		t.Fatalf("transfers = %q, want [n1]", got)
	}
	ok(transport.RaftTransferLeader, nil)
	if got := f.TransferTargets(); len(got) != 2 || got[1] != "" {
		t.Fatalf("transfer to any = %q, want a second, empty target", got)
	}

	bad := []struct {
		code transport.RequestCode
		ext  map[string]string
		want string
	}{
		{transport.RaftAddVoter, map[string]string{"id": "n3"}, "address"},
		{transport.RaftRemoveServer, nil, "id"},
		{transport.RaftTransferLeader, map[string]string{"id": "n9"}, "not a member"},
	}
	for _, c := range bad {
		r := call(t, b, c.code, c.ext)
		if r.ResponseCode() != transport.InvalidParameter || !strings.Contains(r.Remark, c.want) {
			t.Errorf("%s %v: %s %q, want INVALID_PARAMETER naming %s", c.code, c.ext, r.ResponseCode(), r.Remark, c.want)
		}
	}
}

func TestRaftChangeOnFollowerForwardsOrRefuses(t *testing.T) {
	b, f, _ := newAdminBroker(t, func(st *store.Store) *fakereplica.Replica {
		f := leaderFake(st)
		st0 := f.Status()
		st0.Role, st0.LeaderID = replica.RoleFollower, "n1" // n1 has no client address
		f.SetStatusQuietly(st0)
		return f
	})
	r := call(t, b, transport.RaftRemoveServer, map[string]string{"id": "n0"})
	if r.ResponseCode() != transport.ServiceNotAvailable || len(f.Calls()) != 0 {
		t.Fatalf("follower executed or misanswered: %s %q calls=%v", r.ResponseCode(), r.Remark, f.Calls())
	}
	// A request already forwarded once is never forwarded again.
	r = call(t, b, transport.ConsumerProgress, map[string]string{"consumerGroup": "g", "rocketraftForwarded": "n2"})
	if r.ResponseCode() != transport.ServiceNotAvailable || !strings.Contains(r.Remark, "not the leader") {
		t.Fatalf("forward loop guard: %s %q", r.ResponseCode(), r.Remark)
	}
}

func TestRaftSnapshotNothingNewIsSuccess(t *testing.T) {
	b, f, _ := newAdminBroker(t, leaderFake)
	f.SnapshotErr = replica.ErrNothingToSnapshot
	r := call(t, b, transport.RaftSnapshot, nil)
	if r.ResponseCode() != transport.Success || !strings.Contains(string(r.Body), "nothing new") {
		t.Fatalf("%s %s", r.ResponseCode(), r.Body)
	}
	f.SnapshotErr = errors.New("disk full")
	if r := call(t, b, transport.RaftSnapshot, nil); r.ResponseCode() != transport.SystemError {
		t.Fatalf("failure answered %s", r.ResponseCode())
	}
}

func appendMessages(t *testing.T, st *store.Store, topic string, queue int32, n int) {
	t.Helper()
	host := netip.MustParseAddrPort("127.0.0.1:10911")
	var recs [][]byte
	for range n {
		rec, err := store.AppendMessage(nil, &store.Message{Topic: topic, QueueID: queue, Body: []byte("x"), BornHost: host, StoreHost: host})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if _, err := st.AppendBatch(recs, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.WaitDispatched(ctx, st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
}

func TestConsumerProgress(t *testing.T) {
	b, f, st := newAdminBroker(t, leaderFake)
	ctx := context.Background()
	for _, topic := range []fsm.TopicConfig{{Name: "T", ReadQueueNums: 2, WriteQueueNums: 2}, {Name: "U", ReadQueueNums: 1, WriteQueueNums: 1}} {
		if err := f.UpsertTopic(ctx, topic); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.CommitOffsets(ctx, []fsm.OffsetEntry{{Group: "g", Topic: "T", QueueID: 0, Offset: 3}}); err != nil {
		t.Fatal(err)
	}
	appendMessages(t, st, "T", 0, 5)
	appendMessages(t, st, "T", 1, 2)
	b.offsets.Put("g", "T", 1, 1) // pending on the leader: counts

	decode := func(ext map[string]string) adminapi.GroupProgress {
		t.Helper()
		r := call(t, b, transport.ConsumerProgress, ext)
		var gp adminapi.GroupProgress
		if err := json.Unmarshal(r.Body, &gp); err != nil || r.ResponseCode() != transport.Success {
			t.Fatalf("%s %q %v", r.ResponseCode(), r.Remark, err)
		}
		return gp
	}
	gp := decode(map[string]string{"consumerGroup": "g"})
	want := []adminapi.QueueProgress{
		{Topic: "T", QueueID: 0, BrokerOffset: 5, ConsumerOffset: 3, Lag: 2},
		{Topic: "T", QueueID: 1, BrokerOffset: 2, ConsumerOffset: 1, Lag: 1},
	}
	if gp.BrokerName != "broker-a" || len(gp.Queues) != 2 || gp.Queues[0] != want[0] || gp.Queues[1] != want[1] {
		t.Fatalf("progress = %+v", gp)
	}
	// Naming a topic lists its queues even without an offset.
	gp = decode(map[string]string{"consumerGroup": "g", "topic": "U"})
	if len(gp.Queues) != 1 || gp.Queues[0] != (adminapi.QueueProgress{Topic: "U", QueueID: 0, BrokerOffset: 0, ConsumerOffset: -1, Lag: 0}) {
		t.Fatalf("topic U = %+v", gp.Queues)
	}
	if r := call(t, b, transport.ConsumerProgress, nil); r.ResponseCode() != transport.InvalidParameter {
		t.Fatalf("missing group: %s", r.ResponseCode())
	}
}
