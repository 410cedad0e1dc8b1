package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// storedAt identifies one stored copy of a message: its queue and queue offset.
type storedAt struct {
	queue  int
	offset int64
}

// duplicates sorts the repeated deliveries of msgs into re-deliveries (the same
// stored copy delivered again, which at-least-once allows) and second copies (one
// body stored at two queue offsets: a send that was stored twice). It returns, per
// body, how many extra deliveries of each kind there were.
func duplicates(msgs []*primitive.MessageExt) (redelivered, copies map[string]int) {
	seen := map[string]map[storedAt]int{}
	for _, m := range msgs {
		b := string(m.Body)
		if seen[b] == nil {
			seen[b] = map[storedAt]int{}
		}
		seen[b][storedAt{queue: m.Queue.QueueId, offset: m.QueueOffset}]++
	}
	redelivered, copies = map[string]int{}, map[string]int{}
	for b, at := range seen {
		if len(at) > 1 {
			copies[b] = len(at) - 1
		}
		for _, n := range at {
			if n > 1 {
				redelivered[b] += n - 1
			}
		}
	}
	return redelivered, copies
}

func countsString(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s+%d", k, v))
	}
	return out
}

// TestBroadcastingSurvivesLeaderKill: two instances of one BROADCASTING group
// consume a producer loop while the leader is SIGKILLed mid-stream. Each instance
// keeps its offsets locally, so after its route refresh it must resume on the new
// leader exactly where it stopped: every message acknowledged before or after the
// kill reaches both instances, nothing unsent arrives, no message is stored twice,
// and a message an instance consumed before the kill is never delivered to it again.
func TestBroadcastingSurvivesLeaderKill(t *testing.T) {
	requireLong(t)
	c := startCluster(t)
	topic := unique(t, "TB")
	p := newProducer(t, c)
	sendBodies(t, p, topic, []string{"load-seed"}) // makes the topic routable for the consumers

	group := unique(t, "CG")
	opts := []consumer.Option{
		consumer.WithConsumerModel(consumer.BroadCasting),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	}
	cols := []*collector{newCollector(), newCollector()}
	for _, col := range cols {
		newPushConsumer(t, c, group, topic, selectAll, col, opts...)
	}

	l := startLoad(p, topic, 20*time.Millisecond)
	halted := false
	defer func() {
		if !halted {
			l.halt()
		}
	}()
	l.mu.Lock()
	l.attempted["load-seed"] = true
	l.acked["load-seed"] = time.Now()
	l.mu.Unlock()
	if !l.waitAckedAfter(time.Time{}, 100, 30*time.Second) {
		t.Fatalf("producer loop never reached 100 acks before the kill")
	}
	// Both instances are consuming when the leader dies.
	for i, col := range cols {
		if !col.waitDistinct(50, 30*time.Second) {
			t.Fatalf("instance %d received only %d messages before the kill", i, col.distinct())
		}
	}
	leader, err := c.waitLeader(5*time.Second, "", groupSize)
	if err != nil {
		t.Fatal(err)
	}
	consumedBefore := make([]map[string]int, len(cols))
	at := time.Now()
	c.nodes[leader].Kill()
	for i, col := range cols {
		_, consumedBefore[i] = col.snapshot()
	}
	newLeader, err := c.waitLeader(30*time.Second, c.clientAddrs[leader], 2)
	if err != nil {
		t.Fatalf("no new leader after killing n%d: %v", leader, err)
	}
	t.Logf("killed leader n%d; n%d listed as brokerId 0 after %v", leader, newLeader, time.Since(at).Round(time.Millisecond))
	if !l.waitAckedAfter(at, 100, 60*time.Second) {
		t.Errorf("producer did not recover within 60 s of the kill: %d acks since", l.ackedAfter(at))
	}
	halted = true
	l.halt()
	_, _, failures := l.stats(at)
	t.Logf("%d acks before the kill, %d after, %d failed sends", len(l.ackedBodies())-l.ackedAfter(at), l.ackedAfter(at), len(failures))

	for i, col := range cols {
		label := fmt.Sprintf("instance %d", i)
		verifyDelivered(t, l, col, 60*time.Second)
		msgs, counts := col.snapshot()
		redelivered, copies := duplicates(msgs)
		if len(copies) > 0 {
			t.Errorf("%s: bodies stored at more than one queue offset: %s", label, summarize(countsString(copies)))
		}
		var again []string
		for b := range consumedBefore[i] {
			if counts[b] > consumedBefore[i][b] {
				again = append(again, b)
			}
		}
		if len(again) > 0 {
			t.Errorf("%s: messages consumed before the kill were delivered again after it (local offsets lost): %s",
				label, summarize(again))
		}
		t.Logf("%s: %d distinct, %d consumed before the kill, re-deliveries %v", label, len(counts), len(consumedBefore[i]),
			countsString(redelivered))
	}
}
