package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// sendRetryRefused sends m with SendSync, retrying for up to 30 s while the
// connection is refused: right after a failover the producer's route may still name
// the dead leader, and a refused connection stored nothing, so a retry cannot
// store a second copy. Any other error fails the test.
func sendRetryRefused(t *testing.T, p rocketmq.Producer, m *primitive.Message) *primitive.SendResult {
	t.Helper()
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		res, err := p.SendSync(ctx, m)
		cancel()
		if err == nil && res.Status == primitive.SendOK {
			return res
		}
		if err == nil || !strings.Contains(err.Error(), "connection refused") || attempt == 60 {
			t.Fatalf("send %q to %s: res %v err %v", m.Body, m.Topic, res, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// sendSQLBatch sends n messages whose properties a and b vary (some lack a) and
// returns the bodies matching "a > 5 AND b = 'x'" and the ones that do not.
func sendSQLBatch(t *testing.T, p rocketmq.Producer, topic, prefix string, n int) (match, other []string) {
	t.Helper()
	for i := range n {
		a, b := strconv.Itoa(i%10), []string{"x", "y"}[i%2]
		if i%7 == 0 {
			a = "" // no property a: matches neither the expression nor its negation
		}
		body := fmt.Sprintf("%s-%02d-a=%s-b=%s", prefix, i, a, b)
		m := primitive.NewMessage(topic, []byte(body))
		if a != "" {
			m.WithProperty("a", a)
		}
		m.WithProperty("b", b)
		sendRetryRefused(t, p, m)
		if v, err := strconv.Atoi(a); err == nil && v > 5 && b == "x" {
			match = append(match, body)
		} else {
			other = append(other, body)
		}
	}
	return match, other
}

// TestSQL92SurvivesLeaderKill: a SQL92 push consumer receives exactly the matching
// messages of a batch sent before the leader is SIGKILLed and of a batch sent to
// the new leader. The expression reaches the brokers only in heartbeats, so the
// new leader must filter with it too: a non-matching message is never delivered,
// and every matching one is, each stored copy once (a re-delivery of the same
// queue offset, at least once, is logged).
func TestSQL92SurvivesLeaderKill(t *testing.T) {
	requireLong(t)
	c := startCluster(t)
	topic := unique(t, "TS")
	p := newProducer(t, c)
	sendBodies(t, p, topic, []string{"seed-no-properties"})

	col := newCollector()
	sel := consumer.MessageSelector{Type: consumer.SQL92, Expression: "a > 5 AND b = 'x'"}
	newPushConsumer(t, c, unique(t, "CG"), topic, sel, col, consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))

	want, never := sendSQLBatch(t, p, topic, "before", 40)
	if !col.waitDistinct(len(want), deliverTimeout) {
		t.Fatalf("before the kill: received %d of %d matching messages", col.distinct(), len(want))
	}

	leader, err := c.waitLeader(5*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	c.nodes[leader].Kill()
	if _, err := c.waitLeader(30*time.Second, c.clientAddrs[leader], 2); err != nil {
		t.Fatalf("no new leader after killing n%d: %v", leader, err)
	}
	t.Logf("new leader listed %v after killing n%d", time.Since(at).Round(time.Millisecond), leader)
	// A fresh producer resolves the new leader at once; the old one would wait for
	// its 30 s route refresh.
	p2 := newProducer(t, c)
	match, other := sendSQLBatch(t, p2, topic, "after", 40)
	want = append(want, match...)
	never = append(never, other...)

	if !col.waitDistinct(len(want), 60*time.Second) {
		_, got := col.snapshot()
		set := map[string]bool{}
		for _, w := range want {
			set[w] = true
		}
		t.Fatalf("after the kill: received %d of %d matching messages; missing %s", len(got), len(want), summarize(missing(set, got)))
	}
	time.Sleep(2 * settle)
	msgs, got := col.snapshot()
	var delivered []string
	for _, b := range never {
		if got[b] > 0 {
			delivered = append(delivered, b)
		}
	}
	if len(delivered) > 0 {
		t.Errorf("non-matching messages delivered: %s", summarize(delivered))
	}
	wantSet := map[string]bool{}
	for _, w := range want {
		wantSet[w] = true
	}
	var extra []string
	for b := range got {
		if !wantSet[b] && !strings.HasPrefix(b, "before-") && !strings.HasPrefix(b, "after-") {
			extra = append(extra, b)
		}
	}
	if len(extra) > 0 {
		t.Errorf("messages delivered that were never sent or lack the properties: %s", summarize(extra))
	}
	if m := missing(wantSet, got); len(m) > 0 {
		t.Errorf("matching messages never delivered: %s", summarize(m))
	}
	redelivered, copies := duplicates(msgs)
	if len(copies) > 0 {
		t.Errorf("bodies stored at more than one queue offset: %s", summarize(countsString(copies)))
	}
	t.Logf("%d matching of %d sent delivered; re-deliveries after the failover: %v", len(want), len(want)+len(never),
		countsString(redelivered))
}
