package broker

import (
	"github.com/rocketraft/rocketraft/broker/clientapi"
	"github.com/rocketraft/rocketraft/broker/replica"

	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

func TestReplyIsStoredAndPushedToTheRequester(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	pushed := make(chan *transport.Command, 1)
	requester := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second,
		OnRequest: transport.HandlerFunc(func(_ context.Context, _ *transport.Conn, req *transport.Command) *transport.Command {
			if req.RequestCode() == transport.PushReplyMessageToClient {
				pushed <- req
			}
			return transport.NewResponse(transport.Success, "")
		})})
	defer requester.Close()
	hb, _ := json.Marshal(map[string]any{"clientID": "10.0.0.9@42", "producerDataSet": []any{map[string]string{"groupName": "req"}}, "consumerDataSet": []any{}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r, err := requester.Invoke(ctx, tb.b.Addr(), transport.NewRequest(transport.HeartBeat, nil, hb)); err != nil || r.ResponseCode() != transport.Success {
		t.Fatalf("requester heartbeat: %v %v", r, err)
	}

	// A plain send gets the CLUSTER property a responder needs.
	tb.call(t, transport.SendMessage, sendExt("Req", 0, props(store.PropertyUniqKey, "R1")), []byte("question"))
	if err := tb.st.WaitDispatched(ctx, tb.st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	res, err := tb.st.GetMessages("Req", 0, 0, 1, 1<<20, nil)
	if err != nil || len(res.Messages) != 1 {
		t.Fatalf("stored request: %v %v", res, err)
	}
	m, _ := store.DecodeMessage(res.Messages[0], true)
	if v, _ := store.Property(m.Properties, "CLUSTER"); v != "c" {
		t.Fatalf("CLUSTER property %q, want c", v)
	}
	res.Release()

	replyProps := props("MSG_TYPE", "reply", "CORRELATION_ID", "corr-1", "REPLY_TO_CLIENT", "10.0.0.9@42", store.PropertyUniqKey, "A1")
	r := tb.call(t, transport.SendReplyMessage, sendExt(clientapi.ReplyTopic("c"), 0, replyProps), []byte("answer"))
	if r.ResponseCode() != transport.Success || r.Field("msgId") == "" {
		t.Fatalf("reply: code %d %q %v", r.Code, r.Remark, r.Fields())
	}
	select {
	case p := <-pushed:
		if string(p.Body) != "answer" || p.Field("topic") != "c_REPLY_TOPIC" {
			t.Fatalf("pushed %q to topic %q", p.Body, p.Field("topic"))
		}
		if got := store.ParseProperties(p.Field("properties")); got["CORRELATION_ID"] != "corr-1" {
			t.Fatalf("pushed properties %v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the reply was not pushed to the requester")
	}

	// A reply for a client that is not connected is stored but reported.
	gone := props("MSG_TYPE", "reply", "CORRELATION_ID", "corr-2", "REPLY_TO_CLIENT", "10.0.0.9@99")
	if r := tb.call(t, transport.SendReplyMessage, sendExt(clientapi.ReplyTopic("c"), 0, gone), []byte("late")); r.ResponseCode() != transport.SystemError {
		t.Fatalf("reply to an absent requester: code %d %q", r.Code, r.Remark)
	}
}

// A requester that has not heartbeated yet still gets its reply: the connection
// its request message came on is remembered.
func TestReplyReachesRequesterBeforeItsFirstHeartbeat(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	pushed := make(chan *transport.Command, 1)
	requester := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second,
		OnRequest: transport.HandlerFunc(func(_ context.Context, _ *transport.Conn, req *transport.Command) *transport.Command {
			pushed <- req
			return transport.NewResponse(transport.Success, "")
		})})
	defer requester.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ask := props("CORRELATION_ID", "c9", "REPLY_TO_CLIENT", "10.0.0.7@7")
	if r, err := requester.Invoke(ctx, tb.b.Addr(), transport.NewRequest(transport.SendMessage, sendExt("Ask", 0, ask), []byte("q"))); err != nil || r.ResponseCode() != transport.Success {
		t.Fatalf("request message: %v %v", r, err)
	}
	answer := props("MSG_TYPE", "reply", "CORRELATION_ID", "c9", "REPLY_TO_CLIENT", "10.0.0.7@7")
	if r := tb.call(t, transport.SendReplyMessage, sendExt(clientapi.ReplyTopic("c"), 0, answer), []byte("a")); r.ResponseCode() != transport.Success {
		t.Fatalf("reply: %d %q", r.Code, r.Remark)
	}
	select {
	case p := <-pushed:
		if string(p.Body) != "a" {
			t.Fatalf("pushed %q", p.Body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reply not pushed")
	}
}
