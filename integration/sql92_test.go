package integration

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// TestSQL92Subscription: a push consumer subscribed with MessageSelector.bySql sends
// the expression only in its heartbeat; the broker must evaluate it on every pull
// and deliver exactly the matching messages (the Go client does not re-filter SQL92).
func TestSQL92Subscription(t *testing.T) {
	c := shared(t)
	topic := unique(t, "T")
	p := newProducer(t, c)
	sendBodies(t, p, topic, []string{"seed-no-properties"})

	type props struct{ a, b string }
	var all []props
	for i := range 30 {
		pr := props{a: strconv.Itoa(i % 10), b: []string{"x", "y"}[i%2]}
		if i%7 == 0 {
			pr.a = "" // no property a: matches neither the expression nor its negation
		}
		all = append(all, pr)
	}
	var want []string
	for i, pr := range all {
		body := fmt.Sprintf("sql-%02d-a=%s-b=%s", i, pr.a, pr.b)
		msg := primitive.NewMessage(topic, []byte(body))
		if pr.a != "" {
			msg.WithProperty("a", pr.a)
		}
		msg.WithProperty("b", pr.b)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := p.SendSync(ctx, msg)
		cancel()
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send %s: %v %v", body, res, err)
		}
		if n, err := strconv.Atoi(pr.a); err == nil && n > 5 && pr.b == "x" {
			want = append(want, body)
		}
	}
	if len(want) == 0 {
		t.Fatal("test data has no matching message")
	}
	col := newCollector()
	sel := consumer.MessageSelector{Type: consumer.SQL92, Expression: "a > 5 AND b = 'x'"}
	newPushConsumer(t, c, unique(t, "CG"), topic, sel, col, consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	col.expectExactly(t, "SQL92 a > 5 AND b = 'x'", want, 15*time.Second, 2*time.Second)
}
