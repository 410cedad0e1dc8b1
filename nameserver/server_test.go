package nameserver

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/rocketraft/rocketraft/transport"
)

func startServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = "127.0.0.1:0"
	}
	s := New(cfg, nil)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newTransportClient(t *testing.T) *transport.Client {
	t.Helper()
	tc := transport.NewClient(transport.ClientConfig{DialTimeout: 2 * time.Second})
	t.Cleanup(func() { _ = tc.Close() })
	return tc
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond every 10 ms for up to 3 s; the drivers under test are
// asynchronous (ticker, connection-close callback).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTCPRegisterRouteExpire(t *testing.T) {
	s := startServer(t, Config{ScanInterval: 20 * time.Millisecond})
	c := NewClient(newTransportClient(t))
	ctx := ctxT(t)

	req := reg("broker-a", "127.0.0.1:10911", 0, 3, 0, "TopicTest")
	req.HeartbeatTimeout = 150 * time.Millisecond
	if _, err := c.RegisterBroker(ctx, s.Addr(), req); err != nil {
		t.Fatal(err)
	}
	slave := reg("broker-a", "127.0.0.1:10921", 1, 3, 0)
	slave.HeartbeatTimeout = 150 * time.Millisecond
	res, err := c.RegisterBroker(ctx, s.Addr(), slave)
	if err != nil {
		t.Fatal(err)
	}
	if res.MasterAddr != "127.0.0.1:10911" || res.HAServerAddr != "127.0.0.1:109111" {
		t.Fatalf("slave register result = %+v", res)
	}

	route, err := c.GetRoute(ctx, s.Addr(), "TopicTest")
	if err != nil {
		t.Fatal(err)
	}
	wantAddrs := BrokerAddrs{0: "127.0.0.1:10911", 1: "127.0.0.1:10921"}
	if len(route.BrokerDatas) != 1 || !reflect.DeepEqual(route.BrokerDatas[0].BrokerAddrs, wantAddrs) ||
		len(route.QueueDatas) != 1 || route.QueueDatas[0].WriteQueueNums != 4 {
		t.Fatalf("route = %+v", route)
	}

	eventually(t, "route to expire", func() bool {
		_, err := c.GetRoute(ctx, s.Addr(), "TopicTest")
		return errors.Is(err, ErrTopicNotExist)
	})
	if s.Registry().LiveCount() != 0 {
		t.Fatal("live brokers left after expiry")
	}
}

func TestTCPConnCloseRemovesBroker(t *testing.T) {
	s := startServer(t, Config{})
	admin := NewClient(newTransportClient(t))
	ctx := ctxT(t)

	brokerTC := transport.NewClient(transport.ClientConfig{})
	broker := NewClient(brokerTC)
	if _, err := broker.RegisterBroker(ctx, s.Addr(), reg("broker-a", "127.0.0.1:10911", 0, 1, 0, "T")); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.GetRoute(ctx, s.Addr(), "T"); err != nil {
		t.Fatal(err)
	}
	_ = brokerTC.Close()
	eventually(t, "broker removed on connection close", func() bool {
		_, err := admin.GetRoute(ctx, s.Addr(), "T")
		return errors.Is(err, ErrTopicNotExist)
	})
	ci, err := admin.GetClusterInfo(ctx, s.Addr())
	if err != nil || len(ci.BrokerAddrTable) != 0 {
		t.Fatalf("cluster info after close = %+v, %v", ci, err)
	}
}

func TestTCPTwoNameservers(t *testing.T) {
	s1 := startServer(t, Config{})
	s2 := startServer(t, Config{})
	c := NewClient(newTransportClient(t))
	ctx := ctxT(t)
	req := reg("broker-a", "127.0.0.1:10911", 0, 1, 0, "T")
	for _, s := range []*Server{s1, s2} {
		if _, err := c.RegisterBroker(ctx, s.Addr(), req); err != nil {
			t.Fatal(err)
		}
	}
	// Unregister from one only: the other keeps its own, independent table.
	if err := c.UnregisterBroker(ctx, s1.Addr(), UnregisterRequest{ClusterName: "DefaultCluster",
		BrokerName: "broker-a", BrokerAddr: "127.0.0.1:10911", BrokerID: 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetRoute(ctx, s1.Addr(), "T"); !errors.Is(err, ErrTopicNotExist) {
		t.Fatalf("ns1 route after unregister: %v", err)
	}
	if _, err := c.GetRoute(ctx, s2.Addr(), "T"); err != nil {
		t.Fatalf("ns2 route: %v", err)
	}
}

func TestTCPFencing(t *testing.T) {
	s := startServer(t, Config{})
	c := NewClient(newTransportClient(t))
	ctx := ctxT(t)
	if _, err := c.RegisterBroker(ctx, s.Addr(), reg("g", "127.0.0.1:1", 0, 5, 0, "T")); err != nil {
		t.Fatal(err)
	}
	_, err := c.RegisterBroker(ctx, s.Addr(), reg("g", "127.0.0.1:2", 0, 4, 0, "T"))
	if !errors.Is(err, ErrStaleStateVersion) || !errors.Is(err, ErrResponse) {
		t.Fatalf("stale leader registration err = %v, want ErrStaleStateVersion", err)
	}
	if _, err := c.RegisterBroker(ctx, s.Addr(), reg("g", "127.0.0.1:2", 0, 6, 0, "T")); err != nil {
		t.Fatalf("newer leader refused: %v", err)
	}
	route, err := c.GetRoute(ctx, s.Addr(), "T")
	if err != nil || route.BrokerDatas[0].BrokerAddrs[0] != "127.0.0.1:2" {
		t.Fatalf("route = %+v, %v", route, err)
	}
}

func TestTCPAdminRequests(t *testing.T) {
	s := startServer(t, Config{})
	c := NewClient(newTransportClient(t))
	ctx := ctxT(t)
	if _, err := c.RegisterBroker(ctx, s.Addr(), reg("broker-a", "127.0.0.1:10911", 0, 1, 0, "A", "B")); err != nil {
		t.Fatal(err)
	}
	// The route body on the wire is compact: the Go client's brokerAddrs parser
	// breaks on any whitespace.
	raw, err := newTransportClient(t).Invoke(ctx, s.Addr(),
		transport.NewRequest(transport.GetRouteInfoByTopic, map[string]string{"topic": "A"}, nil))
	if err != nil || raw.ResponseCode() != transport.Success {
		t.Fatalf("raw route: %v %v", raw, err)
	}
	if i := bytes.IndexFunc(raw.Body, unicode.IsSpace); i >= 0 || !bytes.Contains(raw.Body, []byte(`"brokerAddrs":{"0":"127.0.0.1:10911"}`)) {
		t.Fatalf("route body not compact (whitespace at %d): %s", i, raw.Body)
	}
	if got, err := c.GetTopicList(ctx, s.Addr()); err != nil || !reflect.DeepEqual(got, []string{"A", "B"}) {
		t.Fatalf("topic list = %v, %v", got, err)
	}
	ci, err := c.GetClusterInfo(ctx, s.Addr())
	if err != nil || !reflect.DeepEqual(ci.ClusterAddrTable, map[string][]string{"DefaultCluster": {"broker-a"}}) ||
		ci.BrokerAddrTable["broker-a"].BrokerAddrs[0] != "127.0.0.1:10911" {
		t.Fatalf("cluster info = %+v, %v", ci, err)
	}
	if err := c.DeleteTopic(ctx, s.Addr(), "A", ""); err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetTopicList(ctx, s.Addr()); err != nil || !reflect.DeepEqual(got, []string{"B"}) {
		t.Fatalf("topic list after delete = %v, %v", got, err)
	}
}

func TestTCPBadRequests(t *testing.T) {
	s := startServer(t, Config{})
	tc := newTransportClient(t)
	ctx := ctxT(t)

	goodExt, goodBody, err := encodeRegister(reg("g", "127.0.0.1:1", 0, 1, 0, "T"))
	if err != nil {
		t.Fatal(err)
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for kk, vv := range goodExt {
			m[kk] = vv
		}
		if v == "<delete>" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name       string
		req        *transport.Command
		wantCode   transport.ResponseCode
		wantRemark string
	}{
		{"unknown code", transport.NewRequest(transport.RequestCode(9999), nil, nil),
			transport.RequestCodeNotSupported, "9999"},
		{"crc mismatch", transport.NewRequest(transport.RegisterBroker, with(extBodyCRC32, "12345"), goodBody),
			transport.SystemError, "crc32 not match"},
		{"missing brokerAddr", transport.NewRequest(transport.RegisterBroker, with(extBrokerAddr, "<delete>"), goodBody),
			transport.InvalidParameter, "brokerAddr"},
		{"bad brokerId", transport.NewRequest(transport.RegisterBroker, with(extBrokerID, "x1"), goodBody),
			transport.InvalidParameter, "brokerId"},
		{"bad json body", transport.NewRequest(transport.RegisterBroker, with(extBodyCRC32, "0"), []byte("{not json")),
			transport.InvalidParameter, "register body"},
		{"compressed", transport.NewRequest(transport.RegisterBroker, with(extCompressed, "true"), goodBody),
			transport.InvalidParameter, "compressed"},
		{"route without topic", transport.NewRequest(transport.GetRouteInfoByTopic, nil, nil),
			transport.InvalidParameter, "topic"},
		{"unknown topic", transport.NewRequest(transport.GetRouteInfoByTopic, map[string]string{"topic": "nope"}, nil),
			transport.TopicNotExist, "nope"},
		{"unregister bad id", transport.NewRequest(transport.UnregisterBroker,
			map[string]string{"brokerName": "g", "brokerAddr": "a:1", "brokerId": ""}, nil),
			transport.InvalidParameter, "brokerId"},
		{"delete without topic", transport.NewRequest(transport.DeleteTopicInNameSrv, nil, nil),
			transport.InvalidParameter, "topic"},
	}
	for _, tc2 := range cases {
		t.Run(tc2.name, func(t *testing.T) {
			resp, err := tc.Invoke(ctx, s.Addr(), tc2.req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.ResponseCode() != tc2.wantCode || !strings.Contains(resp.Remark, tc2.wantRemark) {
				t.Fatalf("got code=%s remark=%q, want code=%s remark containing %q",
					resp.ResponseCode(), resp.Remark, tc2.wantCode, tc2.wantRemark)
			}
		})
	}
	if s.Registry().LiveCount() != 0 {
		t.Fatal("bad registrations changed the registry")
	}
}

func TestRegisterWireRoundTrip(t *testing.T) {
	in := reg("broker-a", "127.0.0.1:10911", 2, 7, 0, "T")
	in.HeartbeatTimeout = 90 * time.Second
	in.EnableActingMaster = true
	in.ZoneName = "z1"
	ext, body, err := encodeRegister(in)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range ext {
		if v == "" && k != extZoneName {
			t.Errorf("ext %s is empty", k)
		}
	}
	out, err := decodeRegister(ext, body)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip\n got %+v\nwant %+v", out, in)
	}
}
