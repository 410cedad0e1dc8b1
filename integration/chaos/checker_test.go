package chaos

import (
	"strings"
	"testing"
	"time"
)

var (
	q0 = QueueKey{Topic: "T", QueueID: 0}
	q1 = QueueKey{Topic: "T", QueueID: 1}
)

// cleanFixture is a history and three identical replicas that pass every check:
// a..d acked in order on q0, e acked on q1, f unknown and stored, g unknown and
// absent, h refused; two reads.
func cleanFixture() (*History, []ReplicaLog) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	h := &History{}
	for i, id := range []string{"a", "b", "c", "d"} {
		h.AddSend(SendOp{Client: "p0", ID: id, Queue: q0, Outcome: OK, Offset: int64(i), Call: at(10 * i), Return: at(10*i + 5)})
	}
	h.AddSend(SendOp{Client: "p1", ID: "e", Queue: q1, Outcome: OK, Offset: 0, Call: at(0), Return: at(3)})
	h.AddSend(SendOp{Client: "p1", ID: "f", Queue: q1, Outcome: Unknown, Offset: -1, Call: at(10), Return: at(3000)})
	h.AddSend(SendOp{Client: "p1", ID: "g", Queue: q1, Outcome: Unknown, Offset: -1, Call: at(3100), Return: at(6000)})
	h.AddSend(SendOp{Client: "p1", ID: "h", Queue: q1, Outcome: Fail, Offset: -1, Call: at(6100), Return: at(6101), Err: "CODE: 13"})
	h.AddRead(ReadOp{Client: "r0", Session: 1, Queue: q0, Offset: 0, ID: "a"})
	h.AddRead(ReadOp{Client: "r0", Session: 1, Queue: q0, Offset: 1, ID: "b"})
	logs := make([]ReplicaLog, 3)
	for i := range logs {
		logs[i] = ReplicaLog{
			Node:      string(rune('0' + i)),
			Queues:    map[QueueKey][]string{q0: {"a", "b", "c", "d"}, q1: {"e", "f"}},
			CommitLog: []byte("0123456789"),
		}
	}
	return h, logs
}

func TestCheckCleanHistoryPasses(t *testing.T) {
	h, logs := cleanFixture()
	r := Check(h, logs, map[QueueKey][]string{q0: {"a", "b", "c", "d"}, q1: {"e", "f"}})
	if !r.OK() {
		t.Fatalf("clean history flagged:\n%s", r.String())
	}
	if r.Attempted != 8 || r.Acked != 5 || r.Unknown != 2 || r.Recovered != 1 || r.NotApplied != 1 || r.Failed != 1 {
		t.Errorf("counts wrong:\n%s", r.String())
	}
	if r.Identical != 3 || r.Reads != 2 {
		t.Errorf("identical %d reads %d, want 3 and 2", r.Identical, r.Reads)
	}
}

// replicate makes every replica hold the same queues as logs[0].
func replicate(logs []ReplicaLog) {
	for i := 1; i < len(logs); i++ {
		logs[i].Queues = map[QueueKey][]string{}
		for q, ids := range logs[0].Queues {
			logs[i].Queues[q] = append([]string(nil), ids...)
		}
	}
}

func TestCheckFlagsEachProblem(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(h *History, logs []ReplicaLog) map[QueueKey][]string
		flag   func(r Report) int
		want   string
	}{
		{"lost ack", func(h *History, logs []ReplicaLog) map[QueueKey][]string {
			logs[0].Queues[q0] = []string{"a", "b", "c"} // d acked at 3, gone
			replicate(logs)
			return nil
		}, func(r Report) int { return r.LostAcked }, "lost ack: d"},
		{"duplicate", func(h *History, logs []ReplicaLog) map[QueueKey][]string {
			logs[0].Queues[q0] = []string{"a", "b", "c", "d", "b"}
			replicate(logs)
			return nil
		}, func(r Report) int { return r.Duplicates }, "duplicate: b"},
		{"phantom", func(h *History, logs []ReplicaLog) map[QueueKey][]string {
			logs[0].Queues[q1] = []string{"e", "f", "zz"}
			replicate(logs)
			return nil
		}, func(r Report) int { return r.Phantom }, "phantom: \"zz\""},
		{"offset mismatch", func(h *History, logs []ReplicaLog) map[QueueKey][]string {
			logs[0].Queues[q0] = []string{"a", "c", "b", "d"}
			replicate(logs)
			h.reads = nil // a read of b at 1 would be visible-then-lost too; this case is about acks
			return nil
		}, func(r Report) int { return r.OffsetMismatch / 2 }, "offset mismatch: b"}, // b and c swapped: two mismatches
		{"diverged replica queues", func(h *History, logs []ReplicaLog) map[QueueKey][]string {
			logs[2].Queues[q1] = []string{"e", "g"}
			return nil
		}, func(r Report) int { return r.Replicas - r.Identical }, ""},
		{"diverged replica bytes", func(h *History, logs []ReplicaLog) map[QueueKey][]string {
			logs[1].CommitLog = []byte("0123X56789")
			return nil
		}, func(r Report) int { return r.Replicas - r.Identical }, ""},
		{"visible then lost", func(h *History, logs []ReplicaLog) map[QueueKey][]string {
			h.AddRead(ReadOp{Client: "r1", Session: 1, Queue: q1, Offset: 1, ID: "g"})
			return nil
		}, func(r Report) int { return r.VisibleThenLost }, "visible then lost"},
		{"poll skip", func(h *History, logs []ReplicaLog) map[QueueKey][]string {
			h.AddRead(ReadOp{Client: "r0", Session: 1, Queue: q0, Offset: 3, ID: "d"})
			return nil
		}, func(r Report) int { return r.PollSkips }, "poll skip"},
		{"real-time order", func(h *History, logs []ReplicaLog) map[QueueKey][]string {
			// x returned before y was called, yet y sits below x.
			t0 := time.Unix(2000, 0)
			h.AddSend(SendOp{ID: "x", Queue: q1, Outcome: OK, Offset: 3, Call: t0, Return: t0.Add(time.Millisecond)})
			h.AddSend(SendOp{ID: "y", Queue: q1, Outcome: OK, Offset: 2, Call: t0.Add(time.Second), Return: t0.Add(2 * time.Second)})
			logs[0].Queues[q1] = []string{"e", "f", "y", "x"}
			replicate(logs)
			return nil
		}, func(r Report) int { return r.OrderViolations }, "real-time order: x"},
		{"refused but stored", func(h *History, logs []ReplicaLog) map[QueueKey][]string {
			logs[0].Queues[q1] = []string{"e", "f", "h"}
			replicate(logs)
			return nil
		}, func(r Report) int { return r.FailedPresent }, "refused but stored: h"},
		{"drain mismatch", func(h *History, logs []ReplicaLog) map[QueueKey][]string {
			return map[QueueKey][]string{q0: {"a", "b", "c", "d"}, q1: {"e"}}
		}, func(r Report) int { return r.DrainMismatch }, "final drain of T#1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, logs := cleanFixture()
			drain := tc.mutate(h, logs)
			r := Check(h, logs, drain)
			if tc.flag(r) != 1 {
				t.Errorf("flag count %d, want 1:\n%s", tc.flag(r), r.String())
			}
			if r.OK() {
				t.Errorf("report OK despite %s", tc.name)
			}
			if tc.want != "" && !strings.Contains(r.String(), tc.want) {
				t.Errorf("report does not mention %q:\n%s", tc.want, r.String())
			}
		})
	}
}

func TestRetryInducedDuplicateIsNotAFailure(t *testing.T) {
	h, logs := cleanFixture()
	// f was retried after its unknown first attempt; both attempts landed.
	h.AddSend(SendOp{Client: "p1", ID: "f", Attempt: 1, Queue: q1, Outcome: OK, Offset: 2, Call: time.Unix(1003, 0), Return: time.Unix(1003, 1)})
	logs[0].Queues[q1] = []string{"e", "f", "f"}
	replicate(logs)
	r := Check(h, logs, nil)
	if r.RetryDuplicates != 1 || r.Duplicates != 0 || !r.OK() {
		t.Errorf("retry duplicate misjudged:\n%s", r.String())
	}
}

func TestLatenciesPercentile(t *testing.T) {
	var l Latencies
	for i := 1; i <= 100; i++ {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	if l.Percentile(50) != 50*time.Millisecond || l.Percentile(99) != 99*time.Millisecond || l.Percentile(100) != 100*time.Millisecond {
		t.Errorf("percentiles %v %v %v", l.Percentile(50), l.Percentile(99), l.Percentile(100))
	}
	if (Latencies{}).Summary() != "n/a" {
		t.Error("empty summary")
	}
}
