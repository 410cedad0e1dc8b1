package transport_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/transport"
)

// TestGoClientProducerInterop drives the transport with the real rocketmq-client-go
// producer: one Server plays both nameserver (105) and broker (34, 10). It proves the
// client can decode our JSON responses and we can decode its requests, on the one
// connection it multiplexes per address.
func TestGoClientProducerInterop(t *testing.T) {
	rlog.SetLogLevel("error")
	var (
		mu   sync.Mutex
		seen = map[transport.RequestCode]*transport.Command{}
		addr string
	)
	h := transport.HandlerFunc(func(_ context.Context, _ *transport.Conn, req *transport.Command) *transport.Command {
		mu.Lock()
		seen[req.RequestCode()] = req
		mu.Unlock()
		switch req.RequestCode() {
		case transport.GetRouteInfoByTopic:
			resp := transport.NewResponse(transport.Success, "")
			resp.Body = []byte(`{"orderTopicConf":"","queueDatas":[{"brokerName":"broker-a","readQueueNums":1,` +
				`"writeQueueNums":1,"perm":6,"topicSysFlag":0}],"brokerDatas":[{"cluster":"c","brokerName":"broker-a",` +
				`"brokerAddrs":{"0":"` + addr + `"}}],"filterServerTable":{}}`)
			return resp
		case transport.SendMessage, transport.SendMessageV2:
			resp := transport.NewResponse(transport.Success, "")
			resp.ExtFields = map[string]string{"msgId": "7F00000100002A9F0000000000000042", "queueId": "0",
				"queueOffset": "42", "MSG_REGION": "DefaultRegion", "TRACE_ON": "false"}
			return resp
		default:
			return transport.NewResponse(transport.Success, "")
		}
	})
	srv := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0",
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: testWriter{t}})}, h)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr = srv.Addr()

	p, err := rocketmq.NewProducer(producer.WithNameServer([]string{addr}), producer.WithRetry(0),
		producer.WithGroupName("interop_pg"), producer.WithSendMsgTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown() }()

	msg := primitive.NewMessage("InteropTopic", []byte("hello from the go client"))
	msg.WithTag("tagA")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := p.SendSync(ctx, msg)
	if err != nil {
		t.Fatalf("SendSync through our transport: %v", err)
	}
	if res.Status != primitive.SendOK || res.QueueOffset != 42 || res.OffsetMsgID != "7F00000100002A9F0000000000000042" {
		t.Fatalf("send result %+v", res)
	}

	mu.Lock()
	defer mu.Unlock()
	send := seen[transport.SendMessage]
	if send == nil {
		t.Fatalf("no SEND_MESSAGE seen; codes: %v", keys(seen))
	}
	if string(send.Body) != "hello from the go client" || send.Language != "GO" || send.Version != 317 ||
		send.Field("topic") != "InteropTopic" || send.Field("producerGroup") != "interop_pg" || send.IsOneway() {
		t.Fatalf("SEND_MESSAGE decoded as %v body %q", send, send.Body)
	}
	if route := seen[transport.GetRouteInfoByTopic]; route == nil || route.Field("topic") != "InteropTopic" {
		t.Fatalf("route request %v", route)
	}
}

func keys(m map[transport.RequestCode]*transport.Command) []transport.RequestCode {
	var out []transport.RequestCode
	for k := range m {
		out = append(out, k)
	}
	return out
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
