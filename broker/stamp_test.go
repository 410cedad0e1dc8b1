package broker

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// TestStoredMessagesCarryRegionAndTraceOn: every message the official Go
// producer sends (single and batched) is stored with the broker's CLUSTER,
// MSG_REGION (regionId) and TRACE_ON (traceOn), as Apache's broker stamps them,
// and the Go push consumer's pulls read them back; a message whose producer set
// MSG_REGION and TRACE_ON keeps its own values.
func TestStoredMessagesCarryRegionAndTraceOn(t *testing.T) {
	rb := startRaftBrokerWith(t, func(c *Config) { c.RegionID = "eu-test-1" })
	const topic = "Stamped"
	if err := rb.rep.UpsertTopic(context.Background(), fsmTopic(topic)); err != nil {
		t.Fatal(err)
	}
	rb.b.registerAll()
	rb.waitRoute(t, topic)
	ns := []string{rb.ns.Addr()}
	run := time.Now().UnixNano()

	p, err := rocketmq.NewProducer(producer.WithNameServer(ns), producer.WithGroupName("PG_stamp"),
		producer.WithInstanceName(fmt.Sprintf("stamp-producer-%d", run)), producer.WithRetry(0), producer.WithSendMsgTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	single := primitive.NewMessage(topic, []byte("single"))
	own := primitive.NewMessage(topic, []byte("own values"))
	own.WithProperty("MSG_REGION", "producer-region")
	own.WithProperty("TRACE_ON", "false")
	for _, m := range []*primitive.Message{single, own} {
		if _, err := p.SendSync(context.Background(), m); err != nil {
			t.Fatalf("send %s: %v", m.Body, err)
		}
	}
	batch := []*primitive.Message{primitive.NewMessage(topic, []byte("batch 0")), primitive.NewMessage(topic, []byte("batch 1"))}
	for _, m := range batch {
		m.WithTag("b") // the last property a Java/Go producer writes has no separator after it
	}
	if _, err := p.SendSync(context.Background(), batch...); err != nil {
		t.Fatalf("send a batch: %v", err)
	}
	_ = p.Shutdown()

	var mu sync.Mutex
	got := map[string]*primitive.MessageExt{}
	done := make(chan struct{})
	pc, err := rocketmq.NewPushConsumer(consumer.WithNameServer(ns), consumer.WithGroupName("CG_stamp"),
		consumer.WithInstance(fmt.Sprintf("stamp-consumer-%d", run)), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		t.Fatal(err)
	}
	err = pc.Subscribe(topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			got[string(m.Body)] = m
		}
		if len(got) == 4 {
			select {
			case <-done:
			default:
				close(done)
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
	defer func() { _ = pc.Shutdown() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("consumed %d of 4 messages", len(got))
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string][3]string{ // body → CLUSTER, MSG_REGION, TRACE_ON
		"single":     {"c", "eu-test-1", "true"},
		"own values": {"c", "producer-region", "false"},
		"batch 0":    {"c", "eu-test-1", "true"},
		"batch 1":    {"c", "eu-test-1", "true"},
	}
	for body, w := range want {
		m := got[body]
		if m == nil {
			t.Errorf("%q not consumed", body)
			continue
		}
		if c, r, tr := m.GetProperty("CLUSTER"), m.GetProperty("MSG_REGION"), m.GetProperty("TRACE_ON"); [3]string{c, r, tr} != w {
			t.Errorf("%q stored CLUSTER=%q MSG_REGION=%q TRACE_ON=%q, want %q", body, c, r, tr, w)
		}
		// (The Go client gives only a batch's wrapper a UNIQ_KEY.)
		if len(body) > 5 && body[:5] != "batch" && m.GetProperty(store.PropertyUniqKey) == "" {
			t.Errorf("%q lost its UNIQ_KEY: %v", body, m.GetProperties())
		}
	}
	if tag := got["batch 1"].GetTags(); tag != "b" {
		t.Errorf("batch message tag = %q after stamping, want b", tag)
	}
}

// TestTraceOffStampsAndAnswers: with traceOn=false the send answer and the
// stored message say TRACE_ON=false; an unset regionId is Apache's
// DefaultRegion in both.
func TestTraceOffStampsAndAnswers(t *testing.T) {
	rb := startRaftBrokerWith(t, func(c *Config) { c.TraceOff = true })
	resp := mustOK(t, "send", rb.call(t, transport.SendMessage, sendExt("TraceOff", 0, props(store.PropertyUniqKey, "T1")), []byte("t")))
	if resp.Field("MSG_REGION") != "DefaultRegion" || resp.Field("TRACE_ON") != "false" {
		t.Fatalf("send answer ext %v", resp.Fields())
	}
	if err := rb.b.store.WaitDispatched(context.Background(), rb.b.store.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	ext := pullExt("traceOffGroup", "TraceOff", 0, 0, 0)
	ext["sysFlag"], ext["subscription"] = strconv.Itoa(pullFlagSubscription), "*"
	msgs := primitive.DecodeMessage(mustOK(t, "pull", rb.call(t, transport.PullMessage, ext, nil)).Body)
	if len(msgs) != 1 || msgs[0].GetProperty("TRACE_ON") != "false" || msgs[0].GetProperty("MSG_REGION") != "DefaultRegion" {
		t.Fatalf("pulled %d messages: %v", len(msgs), msgs)
	}
}
