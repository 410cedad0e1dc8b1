package adminapi

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/transport"
)

// TestAllTopicConfigsBody checks GET_ALL_TOPIC_CONFIG (21) as the dashboard's
// topic page decodes it: every stored topic under topicConfigTable with Java's
// field names, attributes an object even when none were set, a dataVersion.
func TestAllTopicConfigsBody(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	for _, ext := range []map[string]string{
		{"topic": "Orders", "readQueueNums": "4", "writeQueueNums": "4"},
		{"topic": "Audit", "readQueueNums": "2", "writeQueueNums": "1", "perm": "4"},
	} {
		if _, err := fx.api.createTopic(ctx, request(transport.UpdateAndCreateTopic, ext)); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := fx.api.allTopicConfigs(ctx, request(transport.GetAllTopicConfig, nil))
	if err != nil || resp.ResponseCode() != transport.Success {
		t.Fatalf("21: %v %v", resp, err)
	}
	var body struct {
		TopicConfigTable map[string]struct {
			TopicName       string             `json:"topicName"`
			ReadQueueNums   int                `json:"readQueueNums"`
			WriteQueueNums  int                `json:"writeQueueNums"`
			Perm            int                `json:"perm"`
			TopicFilterType string             `json:"topicFilterType"`
			Attributes      *map[string]string `json:"attributes"`
		} `json:"topicConfigTable"`
		DataVersion *struct {
			Counter int64 `json:"counter"`
		} `json:"dataVersion"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		t.Fatalf("21 body %s: %v", resp.Body, err)
	}
	if len(body.TopicConfigTable) != 2 || body.DataVersion == nil {
		t.Fatalf("21 body %s: want 2 topics and a dataVersion", resp.Body)
	}
	audit := body.TopicConfigTable["Audit"]
	if audit.TopicName != "Audit" || audit.ReadQueueNums != 2 || audit.WriteQueueNums != 1 || audit.Perm != int(fsm.PermRead) ||
		audit.TopicFilterType != fsm.TopicFilterSingleTag || audit.Attributes == nil {
		t.Fatalf("21 Audit entry = %+v in %s", audit, resp.Body)
	}
	if o := body.TopicConfigTable["Orders"]; o.ReadQueueNums != 4 || o.Attributes == nil {
		t.Fatalf("21 Orders entry = %+v in %s", o, resp.Body)
	}
}

// TestAllProducersOverTCP registers producers through real heartbeats on real
// connections and checks GET_ALL_PRODUCER_INFO (328) lists each group with its
// client id, address, language, version and last update, as the exporter reads
// ProducerTableInfo; a consumer-only heartbeat adds no producer group.
func TestAllProducersOverTCP(t *testing.T) {
	fx := newFixture(t)
	now := time.UnixMilli(1_700_000_000_000)
	srv := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0"},
		transport.HandlerFunc(func(_ context.Context, conn *transport.Conn, req *transport.Command) *transport.Command {
			var hb clients.Heartbeat
			if err := json.Unmarshal(req.Body, &hb); err != nil {
				return transport.NewResponse(transport.SystemError, err.Error())
			}
			fx.api.d.Clients.Heartbeat(conn, hb, now)
			return transport.NewResponse(transport.Success, "")
		}))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	beat := func(body string) {
		t.Helper()
		c := transport.NewClient(transport.ClientConfig{})
		t.Cleanup(func() { _ = c.Close() })
		req := transport.NewRequest(transport.HeartBeat, nil, []byte(body))
		req.Language, req.Version = "JAVA", 409
		resp, err := c.Invoke(context.Background(), srv.Addr(), req)
		if err != nil || resp.ResponseCode() != transport.Success {
			t.Fatalf("heartbeat: %v %v", resp, err)
		}
	}
	beat(`{"clientID":"10.0.0.1@p1","producerDataSet":[{"groupName":"OrderProducer"},{"groupName":"CLIENT_INNER_PRODUCER"}]}`)
	beat(`{"clientID":"10.0.0.1@p2","producerDataSet":[{"groupName":"OrderProducer"}]}`)
	beat(`{"clientID":"10.0.0.1@c1","consumerDataSet":[{"groupName":"OrderConsumer","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[]}]}`)

	resp, err := fx.api.allProducers(context.Background(), request(transport.GetAllProducerInfo, nil))
	if err != nil || resp.ResponseCode() != transport.Success {
		t.Fatalf("328: %v %v", resp, err)
	}
	var body struct {
		Data map[string][]struct {
			ClientID            string `json:"clientId"`
			RemoteIP            string `json:"remoteIP"`
			Language            string `json:"language"`
			Version             int    `json:"version"`
			LastUpdateTimestamp int64  `json:"lastUpdateTimestamp"`
		} `json:"data"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		t.Fatalf("328 body %s: %v", resp.Body, err)
	}
	groups := map[string][]string{}
	for g, list := range body.Data {
		for _, p := range list {
			groups[g] = append(groups[g], p.ClientID)
			if p.RemoteIP == "" || p.Language != "JAVA" || p.Version != 409 || p.LastUpdateTimestamp != now.UnixMilli() {
				t.Errorf("328 %s entry %+v: want the connection's address, JAVA, 409 and the heartbeat time", g, p)
			}
		}
	}
	want := map[string][]string{"OrderProducer": {"10.0.0.1@p1", "10.0.0.1@p2"}, "CLIENT_INNER_PRODUCER": {"10.0.0.1@p1"}}
	if !reflect.DeepEqual(groups, want) {
		t.Fatalf("328 groups = %v, want %v (body %s)", groups, want, resp.Body)
	}
}
