package broker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// raftBroker is one broker node over a real single-node raft group, a real
// nameserver and real TCP: what the ecosystem tests (Java tools' codes) talk to.
type raftBroker struct {
	b      *Broker
	rep    replica.Replica
	ns     *nameserver.Server
	client *transport.Client
}

func startRaftBroker(t *testing.T) *raftBroker {
	t.Helper()
	return startRaftBrokerWith(t, nil)
}

// startRaftBrokerWith is startRaftBroker with edit applied to the broker's
// Config before New (nil: none).
func startRaftBrokerWith(t testing.TB, edit func(*Config)) *raftBroker {
	t.Helper()
	return startRaftBrokerOn(t, testcluster.Options{FastTimings: true}, edit)
}

// startRaftBrokerOn is startRaftBrokerWith on a one-node group built with opts.
func startRaftBrokerOn(t testing.TB, opts testcluster.Options, edit func(*Config)) *raftBroker {
	t.Helper()
	group := testcluster.New(t, 1, opts)
	leader := group.WaitLeader(10 * time.Second)
	ns := startNameserver(t, nameserver.Config{})
	rep := replica.NewNode(leader.Node(), replica.NodeOptions{})
	addr := proctest.TestAddr(t)
	cfg := Config{
		ClusterName: "c", BrokerName: "broker-a", ListenAddr: addr, ClientAddr: addr,
		NamesrvAddrs: []string{ns.Addr()}, SelfID: string(leader.ID), Peers: []Peer{{ID: string(leader.ID), ClientAddr: addr}},
		MaxMessageSize: 1 << 20, AutoCreateTopicEnable: true, LongPollingEnable: true,
	}
	if edit != nil {
		edit(&cfg)
	}
	b, err := New(cfg, leader.Node().Store(), rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	c := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	t.Cleanup(func() {
		c.Close()
		_ = b.Close()
	})
	deadline := time.Now().Add(10 * time.Second)
	for b.Status().Role != replica.RoleLeader {
		if time.Now().After(deadline) {
			t.Fatal("the broker never saw itself lead")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &raftBroker{b: b, rep: rep, ns: ns, client: c}
}

func (rb *raftBroker) call(t *testing.T, code transport.RequestCode, ext map[string]string, body []byte) *transport.Command {
	t.Helper()
	return rb.callAt(t, rb.b.Addr(), code, ext, body)
}

func (rb *raftBroker) callAt(t *testing.T, addr string, code transport.RequestCode, ext map[string]string, body []byte) *transport.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := rb.client.Invoke(ctx, addr, transport.NewRequest(code, ext, body))
	if err != nil {
		t.Fatalf("invoke %s: %v", code, err)
	}
	return resp
}

// mustOK fails the test unless resp is SUCCESS.
func mustOK(t *testing.T, what string, resp *transport.Command) *transport.Command {
	t.Helper()
	if resp.ResponseCode() != transport.Success {
		t.Fatalf("%s: %s %q", what, resp.ResponseCode(), resp.Remark)
	}
	return resp
}

// consumerHeartbeat is a Java-shaped HEART_BEAT body: one consumer group
// subscribed to topics, plus the inner producer every Java client lists.
func consumerHeartbeat(t *testing.T, clientID, group, model string, topics ...string) []byte {
	t.Helper()
	subs := []any{}
	for _, topic := range topics {
		subs = append(subs, map[string]any{"classFilterMode": false, "topic": topic, "subString": "*",
			"tagsSet": []string{}, "codeSet": []int{}, "subVersion": 1700000000000, "expressionType": "TAG"})
	}
	body, err := json.Marshal(map[string]any{"clientID": clientID,
		"producerDataSet": []any{map[string]any{"groupName": "CLIENT_INNER_PRODUCER"}},
		"consumerDataSet": []any{map[string]any{"groupName": group, "consumeType": "CONSUME_PASSIVELY", "messageModel": model,
			"consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "subscriptionDataSet": subs, "unitMode": false}},
		"heartbeatFingerprint": 0, "withoutSub": false})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// routeOf asks the nameserver for topic's route until it has one (or 10 s pass).
func (rb *raftBroker) waitRoute(t *testing.T, topic string) nameserver.TopicRouteData {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp := rb.callAt(t, rb.ns.Addr(), transport.GetRouteInfoByTopic, map[string]string{"topic": topic}, nil)
		if resp.ResponseCode() == transport.Success {
			var rd nameserver.TopicRouteData
			if err := json.Unmarshal(resp.Body, &rd); err != nil {
				t.Fatalf("route of %s: %s: %v", topic, resp.Body, err)
			}
			return rd
		}
		if time.Now().After(deadline) {
			t.Fatalf("no route for %s at the nameserver: %s %q", topic, resp.ResponseCode(), resp.Remark)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
