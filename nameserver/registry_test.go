package nameserver

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func topics(names ...string) map[string]TopicConfig {
	m := map[string]TopicConfig{}
	for _, n := range names {
		m[n] = TopicConfig{TopicName: n, ReadQueueNums: 4, WriteQueueNums: 4, Perm: PermRead | PermWrite}
	}
	return m
}

func reg(name, addr string, id BrokerID, term int64, conn ConnID, tops ...string) RegisterRequest {
	return RegisterRequest{
		ClusterName: "DefaultCluster", BrokerName: name, BrokerAddr: addr, HAServerAddr: addr + "1",
		BrokerID: id, Topics: topics(tops...), DataVersion: DataVersion{StateVersion: term}, ConnID: conn,
	}
}

func mustRegister(t *testing.T, r *Registry, req RegisterRequest, now time.Time) RegisterResult {
	t.Helper()
	res, err := r.Register(req, now)
	if err != nil {
		t.Fatalf("register %+v: %v", req, err)
	}
	return res
}

func addrsOf(t *testing.T, r *Registry, name string) BrokerAddrs {
	t.Helper()
	bd, ok := r.ClusterInfo().BrokerAddrTable[name]
	if !ok {
		return nil
	}
	return bd.BrokerAddrs
}

func TestRegisterRouteBasic(t *testing.T) {
	r := NewRegistry(0)
	mustRegister(t, r, reg("broker-a", "10.0.0.1:10911", 0, 1, 1, "T1", "T2"), t0)
	res := mustRegister(t, r, reg("broker-a", "10.0.0.2:10911", 1, 1, 2, "IGNORED"), t0)
	if res.MasterAddr != "10.0.0.1:10911" || res.HAServerAddr != "10.0.0.1:109111" {
		t.Fatalf("slave result = %+v, want master addr and its HA addr", res)
	}
	if res := mustRegister(t, r, reg("broker-a", "10.0.0.1:10911", 0, 1, 1, "T1", "T2"), t0); res != (RegisterResult{}) {
		t.Fatalf("master result = %+v, want empty", res)
	}

	route, ok := r.Route("T1")
	if !ok {
		t.Fatal("route T1 missing")
	}
	want := TopicRouteData{
		QueueDatas: []QueueData{{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}},
		BrokerDatas: []BrokerData{{Cluster: "DefaultCluster", BrokerName: "broker-a",
			BrokerAddrs: BrokerAddrs{0: "10.0.0.1:10911", 1: "10.0.0.2:10911"}}},
		FilterServerTable: map[string][]string{},
	}
	if !reflect.DeepEqual(route, want) {
		t.Fatalf("route = %+v\nwant %+v", route, want)
	}
	if _, ok := r.Route("IGNORED"); ok {
		t.Fatal("a slave's topic table must not create queue data")
	}
	if got := r.TopicList(); !reflect.DeepEqual(got, []string{"T1", "T2"}) {
		t.Fatalf("topic list = %v", got)
	}
}

func TestRegisterFencing(t *testing.T) {
	cases := []struct {
		name       string
		oldTerm    int64
		newTerm    int64
		oldLive    bool // old master still live when the newcomer registers
		wantErr    error
		wantMaster string
		accepted   bool
	}{
		{"higher term takes id 0", 3, 4, true, nil, "B:1", true},
		{"equal term takes id 0", 3, 3, true, nil, "B:1", true},
		{"lower term refused", 4, 3, true, ErrStaleStateVersion, "A:1", false},
		{"lower term accepted once old master gone", 4, 3, false, nil, "B:1", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry(0)
			mustRegister(t, r, reg("g", "A:1", 0, tc.oldTerm, 1, "T"), t0)
			mustRegister(t, r, reg("g", "B:1", 2, tc.oldTerm, 2), t0)
			if !tc.oldLive {
				r.RemoveByConn(1)
			}
			_, err := r.Register(reg("g", "B:1", 0, tc.newTerm, 2, "T"), t0.Add(time.Second))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			addrs := addrsOf(t, r, "g")
			if addrs[0] != tc.wantMaster {
				t.Fatalf("id 0 = %q, want %q (addrs %v)", addrs[0], tc.wantMaster, addrs)
			}
			// A refused registration changes nothing: B keeps its follower id.
			_, stillFollower := addrs[2]
			if stillFollower == tc.accepted {
				t.Fatalf("follower id 2 present=%v after register (accepted=%v); addrs %v", stillFollower, tc.accepted, addrs)
			}
		})
	}
}

func TestSameAddrOtherIDRemoved(t *testing.T) {
	r := NewRegistry(0)
	mustRegister(t, r, reg("g", "A:1", 0, 1, 1, "T"), t0)
	mustRegister(t, r, reg("g", "B:1", 1, 1, 2), t0)
	mustRegister(t, r, reg("g", "C:1", 2, 1, 3), t0)
	// B wins term 2 and moves from id 1 to id 0; A is overwritten.
	mustRegister(t, r, reg("g", "B:1", 0, 2, 2, "T"), t0)
	if got, want := addrsOf(t, r, "g"), (BrokerAddrs{0: "B:1", 2: "C:1"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("addrs = %v, want %v", got, want)
	}
	// A's orphaned live entry expiring or closing must not take B's id 0 with it.
	r.RemoveByConn(1)
	if got, want := addrsOf(t, r, "g"), (BrokerAddrs{0: "B:1", 2: "C:1"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("after old master conn close addrs = %v, want %v", got, want)
	}
	// A rejoins as follower 1.
	mustRegister(t, r, reg("g", "A:1", 1, 2, 4), t0)
	if got, want := addrsOf(t, r, "g"), (BrokerAddrs{0: "B:1", 1: "A:1", 2: "C:1"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("addrs = %v, want %v", got, want)
	}
}

func TestExpireBefore(t *testing.T) {
	r := NewRegistry(0)
	mustRegister(t, r, reg("g", "A:1", 0, 1, 0, "T"), t0)
	short := reg("g", "B:1", 1, 1, 0)
	short.HeartbeatTimeout = 10 * time.Second
	mustRegister(t, r, short, t0)

	steps := []struct {
		at        time.Duration
		wantGone  []RemovedBroker
		wantRoute bool
	}{
		{10 * time.Second, nil, true}, // exactly at the deadline: still alive
		{10*time.Second + time.Millisecond, []RemovedBroker{{"g", "B:1"}}, true},
		{120 * time.Second, nil, true},
		{120*time.Second + time.Millisecond, []RemovedBroker{{"g", "A:1"}}, false},
	}
	for _, s := range steps {
		got := r.ExpireBefore(t0.Add(s.at))
		if !reflect.DeepEqual(got, s.wantGone) {
			t.Fatalf("at %v expired %v, want %v", s.at, got, s.wantGone)
		}
		if _, ok := r.Route("T"); ok != s.wantRoute {
			t.Fatalf("at %v route present=%v, want %v", s.at, ok, s.wantRoute)
		}
	}
	if len(r.ClusterInfo().ClusterAddrTable) != 0 || len(r.TopicList()) != 0 || r.LiveCount() != 0 {
		t.Fatalf("registry not empty after all expired: %+v %v", r.ClusterInfo(), r.TopicList())
	}
}

func TestReRegisterRefreshesExpiry(t *testing.T) {
	r := NewRegistry(30 * time.Second)
	mustRegister(t, r, reg("g", "A:1", 0, 1, 0, "T"), t0)
	mustRegister(t, r, reg("g", "A:1", 0, 1, 0, "T"), t0.Add(25*time.Second))
	if got := r.ExpireBefore(t0.Add(40 * time.Second)); len(got) != 0 {
		t.Fatalf("refreshed broker expired: %v", got)
	}
	if got := r.ExpireBefore(t0.Add(56 * time.Second)); len(got) != 1 {
		t.Fatalf("expected expiry 30s after last registration, got %v", got)
	}
}

func TestRemoveByConn(t *testing.T) {
	r := NewRegistry(0)
	mustRegister(t, r, reg("a", "A:1", 0, 1, 7, "T"), t0)
	mustRegister(t, r, reg("b", "B:1", 0, 1, 8, "T"), t0)
	// A reconnects: a close of its old connection must not drop it.
	mustRegister(t, r, reg("a", "A:1", 0, 1, 9, "T"), t0)
	if got := r.RemoveByConn(7); len(got) != 0 {
		t.Fatalf("stale conn removed %v", got)
	}
	if got, want := r.RemoveByConn(8), []RemovedBroker{{"b", "B:1"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("removed %v, want %v", got, want)
	}
	route, ok := r.Route("T")
	if !ok || len(route.QueueDatas) != 1 || route.QueueDatas[0].BrokerName != "a" || len(route.BrokerDatas) != 1 {
		t.Fatalf("route after b's conn closed = %+v ok=%v", route, ok)
	}
	if got := r.RemoveByConn(0); got != nil {
		t.Fatalf("conn 0 means none, removed %v", got)
	}
}

func TestLastAddressDropsQueueData(t *testing.T) {
	r := NewRegistry(0)
	mustRegister(t, r, reg("a", "A:1", 0, 1, 1, "T", "OnlyA"), t0)
	mustRegister(t, r, reg("a", "A:2", 1, 1, 2), t0)
	mustRegister(t, r, reg("b", "B:1", 0, 1, 3, "T"), t0)

	// Master gone, follower left: queue data stay, route has no id 0.
	if !r.Unregister(UnregisterRequest{ClusterName: "DefaultCluster", BrokerName: "a", BrokerAddr: "A:1", BrokerID: 0}) {
		t.Fatal("unregister reported nothing removed")
	}
	route, ok := r.Route("OnlyA")
	if !ok || route.BrokerDatas[0].BrokerAddrs[0] != "" || route.BrokerDatas[0].BrokerAddrs[1] != "A:2" {
		t.Fatalf("route with follower only = %+v ok=%v", route, ok)
	}
	r.RemoveByConn(2)
	if _, ok := r.Route("OnlyA"); ok {
		t.Fatal("route of a topic whose only group is gone must not exist")
	}
	route, ok = r.Route("T")
	if !ok || len(route.QueueDatas) != 1 || route.QueueDatas[0].BrokerName != "b" {
		t.Fatalf("route T = %+v", route)
	}
	ci := r.ClusterInfo()
	if _, ok := ci.BrokerAddrTable["a"]; ok || !reflect.DeepEqual(ci.ClusterAddrTable["DefaultCluster"], []string{"b"}) {
		t.Fatalf("cluster info still lists a: %+v", ci)
	}
	if got := r.TopicList(); !reflect.DeepEqual(got, []string{"T"}) {
		t.Fatalf("topics = %v", got)
	}
}

func TestUnregisterStaleAddrKeepsNewMaster(t *testing.T) {
	r := NewRegistry(0)
	mustRegister(t, r, reg("g", "A:1", 0, 1, 1, "T"), t0)
	mustRegister(t, r, reg("g", "B:1", 0, 2, 2, "T"), t0)
	r.Unregister(UnregisterRequest{ClusterName: "DefaultCluster", BrokerName: "g", BrokerAddr: "A:1", BrokerID: 0})
	if got := addrsOf(t, r, "g"); got[0] != "B:1" {
		t.Fatalf("late unregister of deposed master removed new master: %v", got)
	}
}

func TestDeleteTopic(t *testing.T) {
	r := NewRegistry(0)
	mustRegister(t, r, reg("a", "A:1", 0, 1, 1, "T", "U"), t0)
	b := reg("b", "B:1", 0, 1, 2, "T")
	b.ClusterName = "Other"
	mustRegister(t, r, b, t0)

	if r.DeleteTopic("missing", "") {
		t.Fatal("deleting a missing topic reported a removal")
	}
	if !r.DeleteTopic("T", "Other") {
		t.Fatal("delete T in cluster Other removed nothing")
	}
	route, ok := r.Route("T")
	if !ok || len(route.QueueDatas) != 1 || route.QueueDatas[0].BrokerName != "a" {
		t.Fatalf("route T after cluster delete = %+v", route)
	}
	if !r.DeleteTopic("T", "") {
		t.Fatal("delete T removed nothing")
	}
	if _, ok := r.Route("T"); ok {
		t.Fatal("T still routed after delete")
	}
	if got := r.TopicList(); !reflect.DeepEqual(got, []string{"U"}) {
		t.Fatalf("topics = %v", got)
	}
	// The master re-registering brings it back (the broker still has it).
	mustRegister(t, r, reg("a", "A:1", 0, 1, 1, "T"), t0)
	if _, ok := r.Route("T"); !ok {
		t.Fatal("re-registration did not restore T")
	}
}

func TestRegisterInvalid(t *testing.T) {
	r := NewRegistry(0)
	bad := []RegisterRequest{
		{BrokerName: "g", BrokerAddr: "A:1"},
		{ClusterName: "c", BrokerAddr: "A:1"},
		{ClusterName: "c", BrokerName: "g"},
		{ClusterName: "c", BrokerName: "g", BrokerAddr: "A:1", BrokerID: -1},
		{ClusterName: "c", BrokerName: "g", BrokerAddr: "A: 1"},
		{ClusterName: "c", BrokerName: "g", BrokerAddr: "A:1,B:2"},
	}
	for _, req := range bad {
		if _, err := r.Register(req, t0); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("register %+v: err = %v, want ErrInvalidRequest", req, err)
		}
	}
	if r.LiveCount() != 0 {
		t.Fatal("invalid registrations left state behind")
	}
}

func TestBrokerMovesGroup(t *testing.T) {
	r := NewRegistry(0)
	mustRegister(t, r, reg("a", "A:1", 0, 1, 1, "T"), t0)
	mustRegister(t, r, reg("b", "A:1", 0, 1, 1, "T"), t0)
	ci := r.ClusterInfo()
	if _, ok := ci.BrokerAddrTable["a"]; ok {
		t.Fatalf("address still listed under its old group: %+v", ci)
	}
	route, _ := r.Route("T")
	if len(route.QueueDatas) != 1 || route.QueueDatas[0].BrokerName != "b" {
		t.Fatalf("route = %+v", route)
	}
}
