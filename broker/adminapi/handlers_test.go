package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/offsets"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// These call the handlers directly; the over-the-wire tests (forwarding,
// relaying to a client) live with the broker's wiring.

type fixture struct {
	api     *API
	rep     *fakereplica.Replica
	changed atomic.Int32
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	fx := &fixture{rep: fakereplica.New(st, replica.RoleLeader)}
	fx.rep.PeerList = []replica.Peer{{ID: "n0", Address: "127.0.0.1:40911", Suffrage: "Voter"},
		{ID: "n1", Address: "127.0.0.1:40921", Suffrage: "Nonvoter"}}
	fx.rep.Stats = map[string]string{"last_contact": "0", "num_peers": "2", "last_snapshot_index": "7", "applied_index": "41",
		"group_commit_entries": "12", "group_commit_messages": "345",
		"log_deferred_fsyncs": "7", "log_deferred_fsync_ns": "2500000000"}
	fx.api = New(Deps{
		Config:  Config{ClusterName: "c", BrokerName: "broker-a", ClientAddr: "127.0.0.1:10911", SelfID: "n0"},
		Store:   st,
		Replica: fx.rep, Offsets: offsets.NewBuffer(fx.rep, time.Now),
		Clients: clients.NewRegistry(time.Unix(0, 0)), Pulls: clients.NewPullWaiters(),
		TopicsChanged: func() { fx.changed.Add(1) },
	})
	return fx
}

func request(code transport.RequestCode, ext map[string]string) *route.Request {
	return &route.Request{Command: transport.NewRequest(code, ext, nil)}
}

func TestCreateAndDeleteTopic(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	for _, ext := range []map[string]string{
		{"topic": "T", "perm": "8"},
		{"topic": "T", "readQueueNums": "0"},
		{"topic": "T", "writeQueueNums": "1025"},
		{"topic": "T", "order": "yes"},
		{},
	} {
		if _, err := fx.api.createTopic(ctx, request(transport.UpdateAndCreateTopic, ext)); !errors.Is(err, route.ErrBadHeader) {
			t.Errorf("%v: %v, want ErrBadHeader", ext, err)
		}
	}
	if _, err := fx.api.createTopic(ctx, request(transport.UpdateAndCreateTopic, map[string]string{"topic": "a/b"})); !errors.Is(err, route.ErrTopicInvalid) {
		t.Errorf("bad name: %v", err)
	}
	resp, err := fx.api.createTopic(ctx, request(transport.UpdateAndCreateTopic, map[string]string{"topic": "T", "readQueueNums": "4", "writeQueueNums": "2", "order": "true"}))
	if err != nil || resp.ResponseCode() != transport.Success {
		t.Fatalf("create: %v %v", resp, err)
	}
	want := fsm.TopicConfig{Name: "T", ReadQueueNums: 4, WriteQueueNums: 2, Perm: fsm.PermRead | fsm.PermWrite,
		TopicFilterType: fsm.TopicFilterSingleTag, Order: true}
	if got, _ := fx.rep.Topic("T"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stored %+v, want %+v", got, want)
	}
	if _, err := fx.api.deleteTopic(ctx, request(transport.DeleteTopicInBroker, map[string]string{"topic": "T"})); err != nil {
		t.Fatal(err)
	}
	if _, ok := fx.rep.Topic("T"); ok {
		t.Error("topic still there after delete")
	}
	if n := fx.changed.Load(); n != 2 {
		t.Errorf("TopicsChanged called %d times, want 2 (create, delete)", n)
	}
}

// TestTopicConfigReadsWhatCreateStored: GET_TOPIC_CONFIG answers the stored
// config with RocketMQ's field names, TOPIC_NOT_EXIST (via the error table's
// fsm.ErrTopicNotFound row) for a missing topic and a bad-name error for an
// invalid one.
func TestTopicConfigReadsWhatCreateStored(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	if _, err := fx.api.createTopic(ctx, request(transport.UpdateAndCreateTopic, map[string]string{"topic": "T",
		"readQueueNums": "3", "writeQueueNums": "5", "perm": "4", "topicSysFlag": "1", "order": "true"})); err != nil {
		t.Fatal(err)
	}
	resp, err := fx.api.topicConfig(ctx, request(transport.GetTopicConfig, map[string]string{"topic": "T"}))
	if err != nil || resp.ResponseCode() != transport.Success {
		t.Fatalf("read: %v %v", resp, err)
	}
	var got map[string]any
	if err := json.Unmarshal(resp.Body, &got); err != nil {
		t.Fatalf("%s: %v", resp.Body, err)
	}
	for key, want := range map[string]any{"topicName": "T", "readQueueNums": 3.0, "writeQueueNums": 5.0, "perm": 4.0,
		"topicSysFlag": 1.0, "order": true, "topicFilterType": fsm.TopicFilterSingleTag} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v (body %s)", key, got[key], want, resp.Body)
		}
	}
	if attrs, ok := got["attributes"].(map[string]any); !ok || len(attrs) != 0 {
		t.Errorf("attributes = %#v, want {} (the dashboard NPEs on null; body %s)", got["attributes"], resp.Body)
	}
	_, err = fx.api.topicConfig(ctx, request(transport.GetTopicConfig, map[string]string{"topic": "Missing"}))
	if !errors.Is(err, fsm.ErrTopicNotFound) || route.ResponseCode(err) != transport.TopicNotExist || !strings.Contains(err.Error(), "Missing") {
		t.Errorf("missing topic: %v (code %s)", err, route.ResponseCode(err))
	}
	if _, err := fx.api.topicConfig(ctx, request(transport.GetTopicConfig, nil)); !errors.Is(err, route.ErrTopicInvalid) {
		t.Errorf("no topic: %v", err)
	}
}

func TestAllSubscriptionGroupsBody(t *testing.T) {
	fx := newFixture(t)
	if err := fx.rep.UpsertSubscriptionGroup(context.Background(), fsm.DefaultSubscriptionGroup("g")); err != nil {
		t.Fatal(err)
	}
	resp, err := fx.api.allSubscriptionGroups(context.Background(), request(transport.GetAllSubscriptionGroupConfig, nil))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		SubscriptionGroupTable map[string]map[string]any `json:"subscriptionGroupTable"`
		DataVersion            map[string]int64          `json:"dataVersion"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		t.Fatalf("%s: %v", resp.Body, err)
	}
	g := body.SubscriptionGroupTable["g"]
	for key, want := range map[string]any{"groupName": "g", "consumeEnable": true, "consumeFromMinEnable": true,
		"retryMaxTimes": 16.0, "whichBrokerWhenConsumeSlowly": 1.0, "notifyConsumerIdsChangedEnable": true} {
		if g[key] != want {
			t.Errorf("%s = %v, want %v (body %s)", key, g[key], want, resp.Body)
		}
	}
	if body.DataVersion["counter"] != 1 || body.DataVersion["timestamp"] != 0 {
		t.Errorf("dataVersion %v", body.DataVersion)
	}
}

func TestRaftHandlersOverFake(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	fx.rep.SetStatusQuietly(replica.Status{Role: replica.RoleLeader, Term: 3, SelfID: "n0", LeaderID: "n1", AppliedIndex: 40, CommitIndex: 41, LastIndex: 42})

	info := fx.api.runtimeInfo()
	for key, want := range map[string]string{"brokerName": "broker-a", "brokerClusterName": "c", "brokerAddr": "127.0.0.1:10911",
		"role": "LEADER", "term": "3", "leaderId": "n1", "appliedIndex": "40", "raftAppliedIndex": "41",
		"lastSnapshotIndex": "7", "numPeers": "2", "lastContact": "0", "longPollWaiters": "0", "commitLogMaxOffset": "0",
		"groupCommitEntries": "12", "groupCommitMessages": "345",
		"raftLogDeferredFsyncs": "7", "raftLogDeferredFsyncNanos": "2500000000"} {
		if info[key] != want {
			t.Errorf("runtime %s = %q, want %q", key, info[key], want)
		}
	}

	resp, err := fx.api.raftPeers(ctx, request(transport.RaftPeers, nil))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(resp.Body); !strings.Contains(s, `"id":"n1","address":"127.0.0.1:40921","suffrage":"Nonvoter","leader":true`) ||
		!strings.Contains(s, `"id":"n0","address":"127.0.0.1:40911","suffrage":"Voter","leader":false`) {
		t.Errorf("peers body %s", s)
	}

	if _, err := fx.api.raftChange(ctx, request(transport.RaftTransferLeader, map[string]string{"id": "n9"})); !errors.Is(err, route.ErrBadHeader) {
		t.Errorf("transfer to a non-member: %v, want ErrBadHeader", err)
	}
	if _, err := fx.api.raftChange(ctx, request(transport.RaftAddVoter, map[string]string{"id": "n2"})); !errors.Is(err, route.ErrBadHeader) {
		t.Errorf("add voter without address: %v", err)
	}
	for code, ext := range map[transport.RequestCode]map[string]string{
		transport.RaftAddVoter:       {"id": "n2", "address": "a2"},
		transport.RaftAddNonvoter:    {"id": "n3", "address": "a3"},
		transport.RaftRemoveServer:   {"id": "n1"},
		transport.RaftTransferLeader: {"id": "n1"},
	} {
		if _, err := fx.api.raftChange(ctx, request(code, ext)); err != nil {
			t.Errorf("%s: %v", code, err)
		}
	}
	if _, err := fx.api.raftChange(ctx, request(transport.RaftTransferLeader, nil)); err != nil {
		t.Errorf("transfer to any: %v", err)
	}
	calls := strings.Join(fx.rep.Calls(), ",")
	for _, want := range []string{"voter n2 a2", "nonvoter n3 a3", "remove n1"} {
		if !strings.Contains(calls, want) {
			t.Errorf("calls %q lack %q", calls, want)
		}
	}
	if got := strings.Join(fx.rep.TransferTargets(), ","); got != "n1," {
		t.Errorf("transfer targets %q, want \"n1,\"", got)
	}

	fx.rep.SnapshotErr = fmt.Errorf("%w: raft says so", replica.ErrNothingToSnapshot)
	resp, err = fx.api.raftSnapshot(ctx, request(transport.RaftSnapshot, nil))
	if err != nil || !strings.Contains(string(resp.Body), `"result":"nothing new to snapshot"`) || !strings.Contains(string(resp.Body), `"lastIndex":"7"`) {
		t.Errorf("nothing to snapshot: %v %v", resp, err)
	}
	fx.rep.SnapshotErr = replica.ErrUnknownOutcome
	if _, err := fx.api.raftSnapshot(ctx, request(transport.RaftSnapshot, nil)); !errors.Is(err, replica.ErrUnknownOutcome) {
		t.Errorf("failed snapshot: %v", err)
	}
}

func TestProgressAndResetOverFake(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	if err := fx.rep.UpsertTopic(ctx, fsm.NewTopic("T", 2, fsm.PermRead|fsm.PermWrite)); err != nil {
		t.Fatal(err)
	}
	fx.api.d.Offsets.Put("g", "T", 1, 0) // pending on the leader: counts as committed

	resp, err := fx.api.consumerProgress(ctx, request(transport.ConsumerProgress, map[string]string{"consumerGroup": "g"}))
	if err != nil {
		t.Fatal(err)
	}
	var gp GroupProgress
	if err := json.Unmarshal(resp.Body, &gp); err != nil || gp.BrokerName != "broker-a" || len(gp.Queues) != 1 || gp.Queues[0].QueueID != 1 {
		t.Errorf("progress %s %v", resp.Body, err)
	}
	if _, err := fx.api.consumerProgress(ctx, request(transport.ConsumerProgress, nil)); !errors.Is(err, route.ErrBadHeader) {
		t.Errorf("missing group: %v", err)
	}

	ext := map[string]string{"topic": "nope", "group": "g", "timestamp": "-1", "isForce": "true"}
	if _, err := fx.api.resetOffset(ctx, request(transport.InvokeBrokerToResetOffset, ext)); !errors.Is(err, fsm.ErrTopicNotFound) {
		t.Errorf("unknown topic: %v, want fsm.ErrTopicNotFound", err)
	}
	ext["topic"] = "T"
	resp, err = fx.api.resetOffset(ctx, request(transport.InvokeBrokerToResetOffset, ext))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:0,{"brokerName":"broker-a","queueId":1,"topic":"T"}:0}}`; string(resp.Body) != want {
		t.Errorf("reset body %s\nwant %s", resp.Body, want)
	}
	if off, ok := fx.rep.ConsumerOffset("g", "T", 0); !ok || off != 0 {
		t.Errorf("reset not replicated: %d %v", off, ok)
	}
}

func TestRunningInfoOfAbsentConsumer(t *testing.T) {
	fx := newFixture(t)
	resp, err := fx.api.consumerRunningInfo(context.Background(), request(transport.GetConsumerRunningInfo, map[string]string{"consumerGroup": "g", "clientId": "c1"}))
	if err != nil || resp.ResponseCode() != transport.SystemError || resp.Remark != "consumer c1 of group g is not connected to n0" {
		t.Errorf("absent consumer: %v %v", resp, err)
	}
	if _, err := fx.api.consumerRunningInfo(context.Background(), request(transport.GetConsumerRunningInfo, nil)); !errors.Is(err, route.ErrBadHeader) {
		t.Errorf("missing ext: %v", err)
	}
}
