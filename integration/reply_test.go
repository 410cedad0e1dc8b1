package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// TestRequestReply drives rocketmq-client-go's request/reply: the requester's
// Request blocks until the responder's reply (SEND_REPLY_MESSAGE, 324) is pushed
// back to it by the broker (PUSH_REPLY_MESSAGE_TO_CLIENT, 326), matched by
// correlation id. Every request must get its own answer.
func TestRequestReply(t *testing.T) {
	c := shared(t)
	topic := unique(t, "RQ")
	requester := newProducer(t, c)
	responder := newProducer(t, c)
	createTopic(t, c, topic, 4) // and waits until the nameserver routes it

	var mu sync.Mutex
	var replyErrs []error
	pc, err := rocketmq.NewPushConsumer(
		consumer.WithNameServer([]string{c.nsAddr}),
		consumer.WithGroupName(unique(t, "RG")),
		consumer.WithInstance(unique(t, "ri")),
	)
	if err != nil {
		t.Fatal(err)
	}
	err = pc.Subscribe(topic, selectAll, func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range msgs {
			reply, err := consumer.CreateReplyMessage(m, nil)
			if err == nil {
				// The pinned client's CreateReplyMessage parses its body argument as
				// properties and never sets Body, so the responder sets it.
				reply.Body = []byte("re:" + string(m.Body))
				_, err = responder.SendSync(ctx, reply)
			}
			if err != nil {
				mu.Lock()
				replyErrs = append(replyErrs, err)
				mu.Unlock()
			}
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Shutdown() })

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for i := 0; i < 5; i++ {
		body := fmt.Sprintf("q-%d", i)
		reply, err := requester.Request(ctx, 20*time.Second, primitive.NewMessage(topic, []byte(body)))
		if err != nil {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("Request %s: %v (responder errors: %v)", body, err, replyErrs)
		}
		if string(reply.Body) != "re:"+body {
			t.Fatalf("Request %s got reply %q", body, reply.Body)
		}
	}
}
