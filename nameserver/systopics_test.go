package nameserver

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/rocketraft/rocketraft/transport"
)

// TestTCPSystemTopicList asks GET_SYSTEM_TOPIC_LIST_FROM_NS over TCP as the
// dashboard's client does: cluster and broker names, the registered system
// topics and the cluster's reply topic are listed, ordinary topics and
// %RETRY% topics are not, and no brokerAddr sends the client on to 305.
func TestTCPSystemTopicList(t *testing.T) {
	s := startServer(t, Config{})
	c := NewClient(newTransportClient(t))
	ctx := ctxT(t)
	if _, err := c.RegisterBroker(ctx, s.Addr(), reg("broker-a", "127.0.0.1:10911", 0, 1, 0,
		"Orders", "%RETRY%g1", "TBW102", "SCHEDULE_TOPIC_XXXX", "rmq_sys_wheel", "DefaultCluster_REPLY_TOPIC")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterBroker(ctx, s.Addr(), reg("broker-b", "127.0.0.1:10921", 0, 1, 0, "Orders")); err != nil {
		t.Fatal(err)
	}
	resp, err := newTransportClient(t).Invoke(ctx, s.Addr(), transport.NewRequest(transport.GetSystemTopicListFromNS, nil, nil))
	if err != nil || resp.ResponseCode() != transport.Success {
		t.Fatalf("304: %v %v", resp, err)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		t.Fatalf("304 body %s: %v", resp.Body, err)
	}
	if _, ok := body["brokerAddr"]; ok {
		t.Fatalf("304 body %s names a broker; the client would then ask it 305, which brokers do not serve", resp.Body)
	}
	var list []string
	if err := json.Unmarshal(body["topicList"], &list); err != nil {
		t.Fatalf("304 topicList in %s: %v", resp.Body, err)
	}
	want := []string{"DefaultCluster", "DefaultCluster_REPLY_TOPIC", "SCHEDULE_TOPIC_XXXX", "TBW102", "broker-a", "broker-b", "rmq_sys_wheel"}
	if !reflect.DeepEqual(list, want) {
		t.Fatalf("system topics = %v, want %v", list, want)
	}
}
