package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

func TestTableAlignsAndFillsEmptyCells(t *testing.T) {
	tb := Table{Header: []string{"A", "LONG-HEADER", "C"}, Rows: [][]string{{"xxxxx", "", "tab\there"}, {"y", "z", "w"}},
		Footer: []string{"total: 2"}}
	want := "" +
		"A      LONG-HEADER  C\n" +
		"xxxxx  -            tab here\n" +
		"y      z            w\n" +
		"total: 2\n"
	if got := tb.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestClusterTableLagAndUnreachable(t *testing.T) {
	rows := withLag([]NodeStatus{
		{Group: "broker-a", BrokerID: 0, Addr: "a:1", SelfID: "n0", Role: "LEADER", Term: 4, LeaderID: "n0", AppliedIndex: 100, CommitIndex: 100},
		{Group: "broker-a", BrokerID: 2, Addr: "a:2", SelfID: "n1", Role: "FOLLOWER", Term: 4, LeaderID: "n0", AppliedIndex: 90, CommitIndex: 95},
		{Group: "broker-a", BrokerID: 3, Addr: "a:3", Err: errors.New("connection refused")},
	})
	if rows[0].Lag != 0 || rows[1].Lag != 10 || rows[2].Lag != 0 {
		t.Fatalf("lags %d %d %d", rows[0].Lag, rows[1].Lag, rows[2].Lag)
	}
	out := ClusterTable(rows).String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 {
		t.Fatalf("want header, 3 rows, 1 footer:\n%s", out)
	}
	if f := strings.Fields(lines[2]); f[4] != "n1" || f[5] != "FOLLOWER" || f[8] != "90" || f[11] != "10" {
		t.Fatalf("follower row %q", f)
	}
	if !strings.Contains(lines[3], "UNREACHABLE") || !strings.Contains(lines[4], "a:3: connection refused") {
		t.Fatalf("unreachable node:\n%s", out)
	}
	// Columns line up: every row starts its ADDR column where the header does.
	col := strings.Index(lines[0], "ADDR")
	for _, l := range lines[1:4] {
		if !strings.HasPrefix(l[col:], "a:") {
			t.Fatalf("misaligned %q (ADDR at %d)", l, col)
		}
	}
}

func TestProgressAndStatusTotals(t *testing.T) {
	p := GroupProgressTable("g", []QueueProgress{
		{BrokerGroup: "broker-a", Topic: "T", QueueID: 0, BrokerOffset: 10, ConsumerOffset: 7, Lag: 3},
		{BrokerGroup: "broker-a", Topic: "T", QueueID: 1, BrokerOffset: 5, ConsumerOffset: -1, Lag: 5},
	}).String()
	if !strings.Contains(p, "total lag 8 over 2 queues") || !strings.Contains(p, "T      broker-a      1      5              -") {
		t.Fatalf("progress:\n%s", p)
	}
	s := TopicStatusTable("T", []QueueStatus{{Group: "broker-a", QueueID: 0, MinOffset: 2, MaxOffset: 9}, {Group: "broker-a", QueueID: 1, Err: ErrNoTarget}}).String()
	if !strings.Contains(s, "total messages: 7 in 2 queues") || !strings.Contains(s, "ERROR: admin: no broker target") {
		t.Fatalf("status:\n%s", s)
	}
}

func TestPermStringAndSelectGroups(t *testing.T) {
	if got := permString(6); got != "RW-(6)" {
		t.Errorf("perm 6 = %s", got)
	}
	if got := permString(7); got != "RWX(7)" {
		t.Errorf("perm 7 = %s", got)
	}
	all := groupsOf(nameserver.ClusterInfo{BrokerAddrTable: map[string]nameserver.BrokerData{
		"broker-b": {Cluster: "c1", BrokerName: "broker-b", BrokerAddrs: nameserver.BrokerAddrs{2: "b:2", 1: "b:1"}},
		"broker-a": {Cluster: "c1", BrokerName: "broker-a", BrokerAddrs: nameserver.BrokerAddrs{0: "a:0", 1: "a:1"}},
		"broker-x": {Cluster: "c2", BrokerName: "broker-x"},
	}})
	if len(all) != 3 || all[0].Name != "broker-a" || all[2].Name != "broker-x" {
		t.Fatalf("groups %+v", all)
	}
	if all[0].Target() != "a:0" || all[1].Target() != "b:1" || all[2].Target() != "" {
		t.Fatalf("targets %q %q %q", all[0].Target(), all[1].Target(), all[2].Target())
	}
	if gs, err := selectGroups(all, "c1", ""); err != nil || len(gs) != 2 {
		t.Fatalf("cluster c1: %v %v", gs, err)
	}
	if _, err := selectGroups(all, "", "broker-z"); !errors.Is(err, ErrNoTarget) {
		t.Fatalf("unknown group: %v", err)
	}
}

func encodedMessage(t *testing.T, topic string, phys store.PhysicalOffset, props map[string]string, body string) []byte {
	t.Helper()
	host := netip.MustParseAddrPort("127.0.0.1:10911")
	rec, err := store.AppendMessage(nil, &store.Message{Topic: topic, QueueID: 1, Body: []byte(body),
		Properties: store.EncodeProperties(props), BornHost: host, StoreHost: host,
		BornTimestamp: 1700000000000, StoreTimestamp: 1700000000001})
	if err != nil {
		t.Fatal(err)
	}
	store.PatchOffsets(rec, 5, phys)
	return rec
}

func TestDecodeMessagesAndView(t *testing.T) {
	a := encodedMessage(t, "T", 0, map[string]string{"KEYS": "k1 k2", "TAGS": "tagA", "UNIQ_KEY": "U1"}, "hello")
	b := encodedMessage(t, "T", int64ToPhys(len(a)), map[string]string{"KEYS": "k3"}, strings.Repeat("é", 40))
	ms, err := decodeMessages(append(append([]byte{}, a...), b...))
	if err != nil || len(ms) != 2 {
		t.Fatalf("%d messages, %v", len(ms), err)
	}
	m := ms[0]
	if m.Tags != "tagA" || strings.Join(m.Keys, ",") != "k1,k2" || m.MsgID != "U1" || m.QueueOffset != 5 ||
		m.BodyPreview != `"hello"` || m.OffsetMsgID != store.OffsetMsgID(netip.MustParseAddrPort("127.0.0.1:10911"), 0) {
		t.Fatalf("view %+v", m)
	}
	if p := ms[1].BodyPreview; !strings.HasSuffix(p, "…") || strings.ContainsRune(p, '\uFFFD') {
		t.Fatalf("long preview %q", p)
	}
	if _, err := decodeMessages(a[:len(a)-1]); !errors.Is(err, ErrBadAnswer) {
		t.Fatalf("truncated: %v", err)
	}
	out := MessagesText(ms).String()
	for _, want := range []string{"Tags             tagA", "Keys             k1 k2", "Properties       KEYS=k1 k2 TAGS=tagA UNIQ_KEY=U1", "BodySize         5"} {
		if !strings.Contains(out, want) {
			t.Errorf("message text lacks %q:\n%s", want, out)
		}
	}
}

func int64ToPhys(n int) store.PhysicalOffset { return store.PhysicalOffset(n) }

// fakeCluster is one remoting server answering as nameserver and as the only
// node of broker-a, so the client's wire decoding runs without processes.
func fakeCluster(t *testing.T) (addr string, seen chan *transport.Command) {
	t.Helper()
	seen = make(chan *transport.Command, 64)
	// self is written after Start and read by handlers: the race detector cannot
	// see the happens-before that the network gives, so it is atomic.
	var selfAddr atomic.Value
	msg := encodedMessage(t, "T", 0, map[string]string{"KEYS": "order-1", "TAGS": "tagA", "UNIQ_KEY": "ABC"}, "payload")
	ok := func(body any, ext map[string]string) *transport.Command {
		r := transport.NewResponse(transport.Success, "")
		r.ExtFields = ext
		if body != nil {
			b, err := json.Marshal(body)
			if err != nil {
				panic(err)
			}
			r.Body = b
		}
		return r
	}
	h := func(_ context.Context, _ *transport.Conn, req *transport.Command) *transport.Command {
		seen <- req
		self, _ := selfAddr.Load().(string)
		switch req.RequestCode() {
		case transport.GetBrokerClusterInfo:
			return ok(nameserver.ClusterInfo{
				BrokerAddrTable:  map[string]nameserver.BrokerData{"broker-a": {Cluster: "C", BrokerName: "broker-a", BrokerAddrs: nameserver.BrokerAddrs{0: self}}},
				ClusterAddrTable: map[string][]string{"C": {"broker-a"}},
			}, nil)
		case transport.GetRouteInfoByTopic:
			return ok(nameserver.TopicRouteData{
				QueueDatas:  []nameserver.QueueData{{BrokerName: "broker-a", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}},
				BrokerDatas: []nameserver.BrokerData{{Cluster: "C", BrokerName: "broker-a", BrokerAddrs: nameserver.BrokerAddrs{0: self}}},
			}, nil)
		case transport.GetBrokerRuntimeInfo:
			return ok(map[string]any{"table": map[string]string{"selfId": "n0", "role": "LEADER", "term": "7", "leaderId": "n0",
				"appliedIndex": "12", "raftAppliedIndex": "13", "commitIndex": "13", "lastIndex": "13", "commitLogMaxOffset": "999"}}, nil)
		case transport.GetMinOffset:
			return ok(nil, map[string]string{"offset": "1"})
		case transport.GetMaxOffset:
			return ok(nil, map[string]string{"offset": "4"})
		case transport.QueryMessage:
			r := ok(nil, nil)
			r.Body = msg
			return r
		case transport.ViewMessageByID:
			r := ok(nil, nil)
			r.Body = msg
			return r
		case transport.ConsumerProgress:
			return ok(map[string]any{"group": "g", "brokerName": "broker-a", "queues": []map[string]any{
				{"topic": "T", "queueId": 0, "brokerOffset": 4, "consumerOffset": 2, "lag": 2}}}, nil)
		case transport.RaftPeers:
			return ok(map[string]any{"servers": []map[string]any{{"id": "n0", "address": "x:1", "suffrage": "Voter", "leader": true}}}, nil)
		case transport.RaftRemoveServer:
			return transport.NewResponse(transport.InvalidParameter, `id="n9": not a member`)
		}
		return transport.NewResponse(transport.RequestCodeNotSupported, "")
	}
	srv := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0"}, transport.HandlerFunc(h))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	selfAddr.Store(srv.Addr())
	return srv.Addr(), seen
}

func TestClientAgainstFakeCluster(t *testing.T) {
	addr, seen := fakeCluster(t)
	c := New(Config{NamesrvAddrs: []string{"127.0.0.1:1", addr}, Timeout: 2 * time.Second}) // first nameserver is down
	defer c.Close()
	ctx := context.Background()

	nodes, err := c.Cluster(ctx)
	if err != nil || len(nodes) != 1 || nodes[0].Term != 7 || nodes[0].AppliedIndex != 13 || nodes[0].CommitLogMaxOffset != 999 {
		t.Fatalf("cluster %+v %v", nodes, err)
	}
	qs, err := c.TopicStatus(ctx, "T")
	if err != nil || len(qs) != 2 || qs[1].MinOffset != 1 || qs[1].MaxOffset != 4 {
		t.Fatalf("status %+v %v", qs, err)
	}
	ms, err := c.MessageByKey(ctx, "T", "order-1", 8)
	if err != nil || len(ms) != 1 || ms[0].Tags != "tagA" || ms[0].Group != "broker-a" {
		t.Fatalf("by key %+v %v", ms, err)
	}
	if _, err := c.MessageByKey(ctx, "T", "other-key", 8); !errors.Is(err, ErrNotFound) {
		t.Fatalf("hash match with a different key must be filtered out: %v", err)
	}
	// The offset msgId names 127.0.0.1:10911, which is not our server: use --broker.
	cb := New(Config{BrokerAddr: addr, Timeout: 2 * time.Second})
	defer cb.Close()
	ms, err = cb.MessageByID(ctx, ms[0].OffsetMsgID, "")
	if err != nil || len(ms) != 1 || ms[0].MsgID != "ABC" {
		t.Fatalf("by id %+v %v", ms, err)
	}
	if _, err := cb.MessageByID(ctx, "not-hex", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bad id without topic: %v", err)
	}
	gp, err := c.GroupProgress(ctx, "g", "T", "")
	if err != nil || len(gp) != 1 || gp[0].Lag != 2 || gp[0].BrokerGroup != "broker-a" {
		t.Fatalf("progress %+v %v", gp, err)
	}
	g, peers, err := c.RaftPeers(ctx, "")
	if err != nil || g.Name != "broker-a" || len(peers) != 1 || !peers[0].Leader {
		t.Fatalf("peers %+v %v", peers, err)
	}
	r, err := c.RaftRemove(ctx, "broker-a", "n9")
	if err != nil || !errors.Is(r.Err, ErrBrokerResponse) || !strings.Contains(r.Err.Error(), "not a member") {
		t.Fatalf("remove: %+v %v", r, err)
	}
	if _, err := c.RaftRemove(ctx, "broker-z", "n1"); !errors.Is(err, ErrNoTarget) {
		t.Fatalf("unknown group: %v", err)
	}
	// Every request the client sent carried the headers the broker reads.
	for len(seen) > 0 {
		req := <-seen
		switch req.RequestCode() {
		case transport.QueryMessage:
			if req.Field("topic") != "T" || req.Field("maxNum") != "8" {
				t.Errorf("query headers %v", req.Fields())
			}
		case transport.RaftRemoveServer:
			if req.Field("id") != "n9" {
				t.Errorf("remove headers %v", req.Fields())
			}
		case transport.ConsumerProgress:
			if req.Field("consumerGroup") != "g" || req.Field("topic") != "T" {
				t.Errorf("progress headers %v", req.Fields())
			}
		}
	}
}
