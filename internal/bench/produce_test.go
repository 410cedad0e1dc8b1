package bench

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/schedule"
	"github.com/rocketraft/rocketraft/broker/transaction"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/store"
)

// The native client used at most 4 write queues of a route, silently. Every
// write queue of the route must get its share, for both clients; and the
// CSV and JSON outputs of the run must parse and agree with it.
func TestProduceUsesEveryWriteQueue(t *testing.T) {
	for _, client := range []Client{ClientNative, ClientRocketMQGo} {
		t.Run(string(client), func(t *testing.T) {
			const topic, queues, count = "Eight", 8, 800
			b := startBroker(t, map[string]int32{topic: queues})
			var live, csvOut, jsonOut bytes.Buffer
			res, err := Produce(context.Background(), ProduceOptions{Namesrv: []string{b.ns}, Topic: topic, Client: client,
				Producers: 4, Count: count, MessageSize: 64, Out: &live, CSV: &csvOut, JSON: &jsonOut})
			if err != nil {
				t.Fatal(err)
			}
			if res.Sent != count || res.Failed != 0 || res.Bytes != count*64 {
				t.Fatalf("sent %d failed %d bytes %d\n%s", res.Sent, res.Failed, res.Bytes, live.String())
			}
			lens := queueLengths(t, b.st, topic, queues)
			total := 0
			for q, n := range lens {
				total += n
				if n == 0 || (client == ClientNative && n != count/queues) {
					t.Errorf("queue %d got %d messages (all queues: %v)", q, n, lens)
				}
			}
			if total != count {
				t.Fatalf("stored %d messages, want %d (%v)", total, count, lens)
			}
			checkOutputs(t, csvOut.Bytes(), jsonOut.Bytes(), res.Summary)
			if !strings.Contains(live.String(), "summary: 800 ok, 0 failed") {
				t.Fatalf("live output:\n%s", live.String())
			}
		})
	}
}

// Tags, keys and the padding property reach the stored messages, and a
// delay level stores them as delayed, for both clients.
func TestProduceTagsKeysDelayAndProperty(t *testing.T) {
	for _, client := range []Client{ClientNative, ClientRocketMQGo} {
		t.Run(string(client), func(t *testing.T) {
			const topic = "Shaped"
			b := startBroker(t, map[string]int32{topic: 1})
			o := ProduceOptions{Namesrv: []string{b.ns}, Topic: topic, Client: client, Producers: 2, Count: 20,
				MessageSize: 10, Tag: "tagA", KeyPrefix: "key-", PropertySize: 300}
			if _, err := Produce(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			msgs := fakereplica.ReadQueue(t, b.st, topic, 0)
			if len(msgs) != 20 {
				t.Fatalf("%d messages stored, want 20", len(msgs))
			}
			keys := map[string]bool{}
			for _, m := range msgs {
				p := store.ParseProperties(m.Properties)
				if p[store.PropertyTags] != "tagA" || len(p[PadProperty]) != 300 || p[store.PropertyUniqKey] == "" {
					t.Fatalf("stored properties %q", m.Properties)
				}
				keys[p[store.PropertyKeys]] = true
			}
			for n := range 20 {
				if !keys["key-"+strconv.Itoa(n)] {
					t.Fatalf("no message with key key-%d (keys %v)", n, keys)
				}
			}

			// Level 4 is 30 s: the messages wait in SCHEDULE_TOPIC_XXXX queue 3.
			o.Count, o.DelayLevel, o.Tag, o.KeyPrefix, o.PropertySize = 5, 4, "", "", 0
			if _, err := Produce(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			delayed := fakereplica.ReadQueue(t, b.st, schedule.Topic, 3)
			if len(delayed) != 5 {
				t.Fatalf("%d messages in %s queue 3, want 5", len(delayed), schedule.Topic)
			}
			if p := store.ParseProperties(delayed[0].Properties); p[store.PropertyDelayLevel] != "4" || p[store.PropertyRealTopic] != topic {
				t.Fatalf("delayed message properties %v", p)
			}
			if got := len(fakereplica.ReadQueue(t, b.st, topic, 0)); got != 20 {
				t.Fatalf("delayed messages reached the topic at once: %d stored", got)
			}
		})
	}
}

// --transaction stores a half message per send and commits it: the real
// topic gets every message, once.
func TestProduceTransactions(t *testing.T) {
	for _, client := range []Client{ClientNative, ClientRocketMQGo} {
		t.Run(string(client), func(t *testing.T) {
			const topic, count = "Tx", 30
			b := startBroker(t, map[string]int32{topic: 2})
			var live bytes.Buffer
			res, err := Produce(context.Background(), ProduceOptions{Namesrv: []string{b.ns}, Topic: topic, Client: client,
				Producers: 3, Count: count, MessageSize: 16, Transaction: true, Out: &live})
			if err != nil || res.Sent != count || res.Failed != 0 {
				t.Fatalf("sent %d failed %d err %v\n%s", res.Sent, res.Failed, err, live.String())
			}
			if half := fakereplica.ReadQueue(t, b.st, transaction.HalfTopic, 0); len(half) != count {
				t.Fatalf("%d half messages, want %d", len(half), count)
			}
			// The Go client ends transactions oneway: wait for the commits.
			deadline := time.Now().Add(5 * time.Second)
			for {
				lens := queueLengths(t, b.st, topic, 2)
				if lens[0]+lens[1] == count {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("committed messages per queue %v, want %d in all", lens, count)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if !strings.Contains(live.String(), "per transaction") {
				t.Fatalf("summary does not say what a sample is:\n%s", live.String())
			}
		})
	}
}

// --rate paces sends: a 1 s run at 300 msgs/s plans exactly 300 messages and
// takes about a second, where the closed loop would send thousands; the
// summary carries both the corrected latency and the service time.
func TestProduceOpenLoopRate(t *testing.T) {
	const topic = "Paced"
	b := startBroker(t, map[string]int32{topic: 4})
	for _, mode := range []Mode{ModeSync, ModeAsync} {
		var live, jsonOut bytes.Buffer
		res, err := Produce(context.Background(), ProduceOptions{Namesrv: []string{b.ns}, Topic: topic, Producers: 2,
			Mode: mode, Window: 4, Duration: time.Second, Rate: 300, MessageSize: 32, Out: &live, JSON: &jsonOut})
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent+res.Failed != 300 || res.Failed != 0 {
			t.Fatalf("%s: sent %d failed %d, want 300 sent", mode, res.Sent, res.Failed)
		}
		if res.Elapsed < 990*time.Millisecond || res.Elapsed > 3*time.Second {
			t.Fatalf("%s: 300 messages at 300 msgs/s took %s", mode, res.Elapsed)
		}
		s := res.Summary
		if len(s.Series) != 2 || s.Series[1].Name != "service" || s.Latency[0].Count != 300 || s.Latency[1].Count != 300 {
			t.Fatalf("%s: series %v latency %+v", mode, s.Series, s.Latency)
		}
		if s.Latency[0].P50 < s.Latency[1].P50 {
			t.Fatalf("%s: corrected p50 %s below service p50 %s", mode, s.Latency[0].P50, s.Latency[1].P50)
		}
		recs := parseJSON(t, jsonOut.Bytes())
		if sum := recs[len(recs)-1]; sum.Run.Rate != 300 || sum.Latency["service"].Count != 300 {
			t.Fatalf("%s: JSON summary %+v", mode, sum)
		}
		if !strings.Contains(live.String(), "open loop: target 300 msgs/s") {
			t.Fatalf("%s: live output:\n%s", mode, live.String())
		}
	}
}

// A counted run whose count --batch does not divide sends the rest as a
// short last batch instead of dropping it.
func TestProduceBatchTail(t *testing.T) {
	const topic = "Batched"
	b := startBroker(t, map[string]int32{topic: 2})
	res, err := Produce(context.Background(), ProduceOptions{Namesrv: []string{b.ns}, Topic: topic, Producers: 2,
		Count: 50, Batch: 8, MessageSize: 8})
	if err != nil || res.Sent != 50 {
		t.Fatalf("sent %d, err %v; want 50", res.Sent, err)
	}
	if lens := queueLengths(t, b.st, topic, 2); lens[0]+lens[1] != 50 {
		t.Fatalf("stored %v, want 50 in all", lens)
	}
	if res.Summary.Ops != 7 {
		t.Fatalf("%d sends, want 7 (6 of 8 and 1 of 2)", res.Summary.Ops)
	}
}

// Stopping a run (Ctrl-C in the CLI) ends it early with its summary; the
// sends in flight finish instead of counting as failed.
func TestProduceStopsEarlyOnCancel(t *testing.T) {
	const topic = "Stopped"
	b := startBroker(t, map[string]int32{topic: 2})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	var jsonOut bytes.Buffer
	start := time.Now()
	res, err := Produce(ctx, ProduceOptions{Namesrv: []string{b.ns}, Topic: topic, Producers: 4, Duration: time.Minute,
		MessageSize: 16, JSON: &jsonOut})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a cancelled run took %s", took)
	}
	if res.Sent == 0 || res.Failed != 0 {
		t.Fatalf("sent %d failed %d", res.Sent, res.Failed)
	}
	if recs := parseJSON(t, jsonOut.Bytes()); recs[len(recs)-1].Type != "summary" || recs[len(recs)-1].Msgs != res.Sent {
		t.Fatalf("no summary after the cancel: %+v", recs[len(recs)-1])
	}
}

// A sync send the broker refuses counts as failed, with the broker's answer
// in the output (the sync path waits on InvokeAsync's callback).
func TestProduceSyncCountsRefusedSends(t *testing.T) {
	const topic = "Refused"
	b := startBroker(t, map[string]int32{topic: 1})
	var live bytes.Buffer
	res, err := Produce(context.Background(), ProduceOptions{Namesrv: []string{b.ns}, Topic: topic, Client: ClientNative,
		Producers: 1, Count: 3, MessageSize: 5 << 20, Out: &live})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 0 || res.Failed != 3 {
		t.Fatalf("sent %d failed %d, want 0 and 3\n%s", res.Sent, res.Failed, live.String())
	}
	if !strings.Contains(live.String(), "MESSAGE_ILLEGAL") {
		t.Fatalf("the broker's answer is not in the output:\n%s", live.String())
	}
}
