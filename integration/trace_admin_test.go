package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// traceTopic is the trace topic of the Go client and of Apache's default
// msgTraceTopicName.
const traceTopic = "RMQ_SYS_TRACE_TOPIC"

// traceChildEnv marks the process TestAdminMessageTraceOfGoClients re-runs
// itself in (not a ROCKETRAFT_ variable: the brokers it starts inherit it).
const traceChildEnv = "IT_GO_TRACE_CHILD"

// TestAdminMessageTraceOfGoClients: the official Go client's producer and
// push consumer with WithTrace write Pub, SubBefore and SubAfter records of
// one message to the trace topic, and `admin message trace <msgId>` finds
// them by key and decodes each (Go's records carry their client host).
//
// It runs in a process of its own: rocketmq-client-go keeps one trace client
// per process (instance INNER_TRACE_CLIENT_DEFAULT), bound to the nameservers
// of the first WithTrace; a later WithTrace naming other nameservers gets a
// nil dispatcher and the producer panics on its first send
// (internal.GetOrNewRocketMQClient). TestApacheDLedgerSampleConfigsStartAGroup
// traces against its own nameserver in this package.
func TestAdminMessageTraceOfGoClients(t *testing.T) {
	if os.Getenv(traceChildEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAdminMessageTraceOfGoClients$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), traceChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("in a process of its own:\n%s", out)
		if err != nil {
			t.Fatalf("trace test process: %v", err)
		}
		if !strings.Contains(string(out), "--- PASS: TestAdminMessageTraceOfGoClients") {
			t.Fatal("trace test process did not run the test")
		}
		return
	}
	c := shared(t)
	// The shared cluster runs without traceTopicEnable, and the Go client
	// sends nothing while the trace topic has no route: create it.
	runAdmin(t, c, "topic", "create", traceTopic, "-r", "1", "-w", "1")
	deadline := time.Now().Add(routeWait)
	for !strings.Contains(runAdmin(t, c, "topic", "list"), traceTopic) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached the nameserver", traceTopic)
		}
		time.Sleep(200 * time.Millisecond)
	}
	topic, group := unique(t, "TT"), unique(t, "CGT")
	cfg := func() *primitive.TraceConfig {
		return &primitive.TraceConfig{GroupName: unique(t, "TG"), Access: primitive.Local, NamesrvAddrs: []string{c.nsAddr}}
	}
	p := newProducer(t, c, producer.WithTrace(cfg()))
	res := sendBodies(t, p, topic, []string{"traced"})
	col := newCollector()
	newPushConsumer(t, c, group, topic, selectAll, col, consumer.WithTrace(cfg()),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	col.expectExactly(t, "traced", []string{"traced"}, deliverTimeout, 0)
	id := res[0].MsgID

	type record struct {
		Type, Group, Topic, ClientHost, OffsetMsgID string
		Success                                     bool
	}
	var doc struct {
		MsgID   string   `json:"msgId"`
		Records []record `json:"records"`
	}
	byType := map[string]record{}
	var out string
	deadline = time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) { // trace records are sent in the background
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		b, err := exec.CommandContext(ctx, binPath, "admin", "-n", c.nsAddr, "message", "trace", id, "-o", "json").CombinedOutput()
		cancel()
		out = string(b)
		if err == nil && json.Unmarshal(b, &doc) == nil {
			for _, r := range doc.Records {
				byType[r.Type] = r
			}
			if len(byType) >= 3 {
				break
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	pub, before, after := byType["Pub"], byType["SubBefore"], byType["SubAfter"]
	if doc.MsgID != id || pub.Type == "" || before.Type == "" || after.Type == "" {
		t.Fatalf("trace of %s: want Pub, SubBefore and SubAfter, got %v\n%s", id, byType, out)
	}
	if pub.Topic != topic || !pub.Success || pub.OffsetMsgID != res[0].OffsetMsgID || pub.ClientHost == "" {
		t.Errorf("Pub: %+v, want topic %s, success, offset msgId %s, a client host", pub, topic, res[0].OffsetMsgID)
	}
	if before.Group != group || after.Group != group || !after.Success {
		t.Errorf("SubBefore %+v / SubAfter %+v: want group %s, success", before, after, group)
	}
}
