package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// produceFor fills topic with count messages of size bytes, tagged tag.
func produceFor(t *testing.T, b *testBroker, topic string, count, size int, tag string) {
	t.Helper()
	res, err := Produce(context.Background(), ProduceOptions{Namesrv: []string{b.ns}, Topic: topic, Producers: 2,
		Count: count, MessageSize: size, Tag: tag})
	if err != nil || res.Sent != int64(count) {
		t.Fatalf("produce %d: sent %d, %v", count, res.Sent, err)
	}
}

// The old consumer read the message size once, before any message arrived,
// so its MB/s was 0. Bytes and MB/s must come from the bodies received, and
// both ages are recorded for every message; the outputs parse and agree.
func TestConsumeCountsBytesAndAges(t *testing.T) {
	const topic, count, size = "Consumed", 200, 100
	b := startBroker(t, map[string]int32{topic: 4})
	produceFor(t, b, topic, count, size, "")
	var live, csvOut, jsonOut bytes.Buffer
	res, err := Consume(context.Background(), ConsumeOptions{Namesrv: []string{b.ns}, Topic: topic, Group: "g-count",
		Count: count, Timeout: 20 * time.Second, Out: &live, CSV: &csvOut, JSON: &jsonOut})
	if err != nil {
		t.Fatalf("%v\n%s", err, live.String())
	}
	if res.Sent < count || res.Bytes != res.Sent*size {
		t.Fatalf("received %d messages, %d bytes; want %d of %d bytes each", res.Sent, res.Bytes, count, size)
	}
	if want := float64(res.Bytes) / res.Elapsed.Seconds() / 1e6; res.MBPerSec <= 0 || res.MBPerSec != want {
		t.Fatalf("MB/s %v, want %v (bytes %d over %s)", res.MBPerSec, want, res.Bytes, res.Elapsed)
	}
	s := res.Summary
	if s.Series[0].Name != "born" || s.Series[1].Name != "store" || s.Latency[0].Count != res.Sent || s.Latency[1].Count != res.Sent {
		t.Fatalf("series %v latency %+v", s.Series, s.Latency)
	}
	// Born before stored, so every message is at least as old since born.
	if s.Latency[0].Max < s.Latency[1].Max || s.Latency[0].Max <= 0 || s.Latency[0].Max > time.Minute {
		t.Fatalf("born max %s, store max %s", s.Latency[0].Max, s.Latency[1].Max)
	}
	checkOutputs(t, csvOut.Bytes(), jsonOut.Bytes(), s)
	if !strings.Contains(live.String(), "summary: 200 ok") || !strings.Contains(live.String(), "store → consume") {
		t.Fatalf("live output:\n%s", live.String())
	}
}

// consume documented "0 = run for --duration" without having --duration.
// With Count 0 it runs for Duration and succeeds with what arrived.
func TestConsumeRunsForDuration(t *testing.T) {
	const topic = "Timed"
	b := startBroker(t, map[string]int32{topic: 2})
	produceFor(t, b, topic, 50, 10, "")
	start := time.Now()
	res, err := Consume(context.Background(), ConsumeOptions{Namesrv: []string{b.ns}, Topic: topic, Group: "g-timed",
		Duration: 1500 * time.Millisecond})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 50 || res.Bytes != 500 {
		t.Fatalf("received %d messages (%d bytes), want 50", res.Sent, res.Bytes)
	}
	if took < 1500*time.Millisecond || took > 10*time.Second || res.Elapsed < 1500*time.Millisecond {
		t.Fatalf("a 1.5 s run took %s (elapsed %s)", took, res.Elapsed)
	}
}

// --tag subscribes with a tag expression: only matching messages count.
func TestConsumeTagFilter(t *testing.T) {
	const topic = "Tagged"
	b := startBroker(t, map[string]int32{topic: 2})
	produceFor(t, b, topic, 30, 10, "red")
	produceFor(t, b, topic, 20, 10, "blue")
	res, err := Consume(context.Background(), ConsumeOptions{Namesrv: []string{b.ns}, Topic: topic, Group: "g-blue",
		Tag: "blue", Duration: 1500 * time.Millisecond})
	if err != nil || res.Sent != 20 {
		t.Fatalf("received %d blue messages, want 20 (%v)", res.Sent, err)
	}
}

// A counted consume that does not get its messages fails after --timeout,
// naming both numbers.
func TestConsumeCountTimesOut(t *testing.T) {
	const topic = "Short"
	b := startBroker(t, map[string]int32{topic: 1})
	produceFor(t, b, topic, 5, 10, "")
	res, err := Consume(context.Background(), ConsumeOptions{Namesrv: []string{b.ns}, Topic: topic, Group: "g-short",
		Count: 10, Timeout: 1500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "received 5 of 10 messages") || res.Sent != 5 {
		t.Fatalf("err %v, received %d", err, res.Sent)
	}
}

// --batch hands up to that many messages of a pull to one listener call (the
// client's ConsumeMessageBatchMaxSize); every message of a call is counted
// and aged, not the call.
func TestConsumeBatchCountsEveryMessage(t *testing.T) {
	const topic, count, size = "Batched", 300, 10
	b := startBroker(t, map[string]int32{topic: 2})
	produceFor(t, b, topic, count, size, "")
	res, err := Consume(context.Background(), ConsumeOptions{Namesrv: []string{b.ns}, Topic: topic, Group: "g-batch",
		Batch: 32, Duration: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != count || res.Bytes != count*size {
		t.Fatalf("received %d messages (%d bytes), want %d", res.Sent, res.Bytes, count)
	}
	if s := res.Summary; s.Latency[0].Count != count || s.Latency[1].Count != count {
		t.Fatalf("aged %d and %d messages, want %d", s.Latency[0].Count, s.Latency[1].Count, count)
	}
}
