package integration

import (
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
)

// TestBroadcastingEveryInstanceGetsEverything: two instances of one BROADCASTING
// group each receive every message once (offsets are kept by each client, the
// broker holds no group offset; like Apache it still creates %RETRY%<group>).
func TestBroadcastingEveryInstanceGetsEverything(t *testing.T) {
	c := shared(t)
	topic := unique(t, "T")
	p := newProducer(t, c)
	seed := []string{"broadcast-seed"}
	sendBodies(t, p, topic, seed)

	group := unique(t, "CG")
	opts := []consumer.Option{
		consumer.WithConsumerModel(consumer.BroadCasting),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	}
	first, second := newCollector(), newCollector()
	newPushConsumer(t, c, group, topic, selectAll, first, opts...)
	newPushConsumer(t, c, group, topic, selectAll, second, opts...)

	want := append(seed, bodies("broadcast", 40)...)
	sendBodies(t, p, topic, want[1:])
	first.expectExactly(t, "first instance", want, 20*time.Second, time.Second)
	second.expectExactly(t, "second instance", want, 10*time.Second, time.Second)
}
