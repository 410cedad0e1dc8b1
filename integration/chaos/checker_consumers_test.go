package chaos

import (
	"strings"
	"testing"
	"time"
)

// consumerFixture is cleanFixture plus a concurrent group (cc) that got every
// stored message once and an orderly group (oc) whose consumer o0 owns q0 and
// o1 owns q1, one callback after another; committed offsets polled from node
// A rise to the end of each queue.
func consumerFixture() (*History, []ReplicaLog) {
	h, logs := cleanFixture()
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	h.AddGroup(ConsumerGroup{Name: "cc", Topic: "T", Kind: Concurrent})
	h.AddGroup(ConsumerGroup{Name: "oc", Topic: "T", Kind: Orderly})
	for i, id := range []string{"a", "b", "c", "d"} {
		h.AddDelivery(Delivery{Group: "cc", Consumer: "c0", Queue: q0, Offset: int64(i), ID: id, Start: at(100 + i), End: at(100 + i)})
		h.AddDelivery(Delivery{Group: "oc", Consumer: "o0", Queue: q0, Offset: int64(i), ID: id, Start: at(100 + 10*i), End: at(105 + 10*i)})
	}
	for i, id := range []string{"e", "f"} {
		h.AddDelivery(Delivery{Group: "cc", Consumer: "c1", Queue: q1, Offset: int64(i), ID: id, Start: at(100 + i), End: at(100 + i)})
		h.AddDelivery(Delivery{Group: "oc", Consumer: "o1", Queue: q1, Offset: int64(i), ID: id, Start: at(102 + 10*i), End: at(107 + 10*i)})
	}
	for _, g := range []string{"cc", "oc"} {
		for k, off := range []int64{0, 2, 4} {
			h.AddOffset(OffsetObs{Group: g, Queue: q0, Offset: off, At: at(100 + 1000*k), Addr: "A"})
		}
		h.AddOffset(OffsetObs{Group: g, Queue: q1, Offset: 2, At: at(2000), Addr: "A"})
	}
	return h, logs
}

func TestConsumerChecksPassCleanHistory(t *testing.T) {
	h, logs := consumerFixture()
	r := Check(h, logs, nil)
	if !r.OK() {
		t.Fatalf("clean consumer history flagged:\n%s", r.String())
	}
	if len(r.Groups) != 2 || r.Deliveries != 12 || r.OffsetPolls != 8 || r.Redelivered != 0 {
		t.Errorf("counts wrong (want 2 groups, 12 deliveries, 8 polls, 0 redelivered):\n%s", r.String())
	}
	if !strings.Contains(r.String(), "consumers: groups 2 | deliveries 12 | lost deliveries 0") {
		t.Errorf("report block lacks the consumer line:\n%s", r.String())
	}
}

// dropDelivery removes the deliveries of id to group.
func dropDelivery(h *History, group, id string) {
	kept := h.cons.deliveries[:0]
	for _, d := range h.cons.deliveries {
		if d.Group != group || d.ID != id {
			kept = append(kept, d)
		}
	}
	h.cons.deliveries = kept
}

func TestConsumerChecksFlagEachProblem(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	cases := []flagCase{
		{"skipped message", func(h *History) {
			dropDelivery(h, "cc", "c")
		}, func(r Report) int { return r.LostDeliveries }, "lost delivery: acknowledged c never delivered to group cc"},
		{"delivery of what is not stored there", func(h *History) {
			h.AddDelivery(Delivery{Group: "cc", Consumer: "c0", Queue: q1, Offset: 1, ID: "zz", Start: at(300), End: at(300)})
		}, func(r Report) int { return r.DeliveryMismatch }, "delivery mismatch: group cc got \"zz\""},
		{"offset moving back", func(h *History) {
			h.AddOffset(OffsetObs{Group: "cc", Queue: q0, Offset: 1, At: at(2500), Addr: "B"})
		}, func(r Report) int { return r.OffsetRegressions }, "offset regression: group cc T#0 committed 4 (A at"},
		{"two owners overlapping", func(h *History) {
			// o1 consumes q0 while o0 is inside its callback for q0@2 (120–125 ms).
			h.AddDelivery(Delivery{Group: "oc", Consumer: "o1", Queue: q0, Offset: 2, ID: "c", Start: at(122), End: at(127)})
		}, func(r Report) int { return r.OrderlyOverlaps }, "two owners: group oc T#0"},
		{"orderly first delivery out of order", func(h *History) {
			dropDelivery(h, "oc", "b")
			h.AddDelivery(Delivery{Group: "oc", Consumer: "o0", Queue: q0, Offset: 1, ID: "b", Start: at(200), End: at(205)})
		}, func(r Report) int { return r.OrderlyOutOfOrder / 2 }, "orderly order: group oc first delivered T#0@1"}, // the skip past @1, then @1 after @3
		{"unbounded duplicate", func(h *History) {
			// a (q0@0) again at 8 s, when offset 4 had been committed since 2.1 s.
			h.AddDelivery(Delivery{Group: "cc", Consumer: "c1", Queue: q0, Offset: 0, ID: "a", Start: at(8000), End: at(8000)})
		}, func(r Report) int { return r.RedeliveredUnexplained }, "unexplained redelivery: group cc T#0@0"},
		{"a consumer going back over what it had itself", func(h *History) {
			// c0 had q0@0..3 and gets @1 again at 8 s, offset 4 committed since 2.1 s.
			h.AddDelivery(Delivery{Group: "cc", Consumer: "c0", Queue: q0, Offset: 1, ID: "b", Start: at(8000), End: at(8000)})
		}, func(r Report) int { return r.RedeliveredUnexplained }, "unexplained redelivery: group cc T#0@1 again to c0"},
	}
	runFlagCases(t, cases)
}

func TestConsumerChecksAcceptLegalHistories(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	cases := []struct {
		name   string
		mutate func(h *History)
		check  func(r Report) string // "" if the figures are right
	}{
		{"an explicit reset moves the offset back", func(h *History) {
			h.AddOffsetReset("cc", q0, 0, at(2500))
			h.AddOffset(OffsetObs{Group: "cc", Queue: q0, Offset: 1, At: at(2600), Addr: "A"})
			// and the group gets q0@0..3 again (checker_resets.go)
			for i, id := range []string{"a", "b", "c", "d"} {
				h.AddDelivery(Delivery{Group: "cc", Consumer: "c0", Queue: q0, Offset: int64(i), ID: id, Start: at(2550 + i), End: at(2550 + i)})
			}
		}, func(r Report) string {
			if r.OffsetResets != 1 || r.OffsetRegressions != 0 {
				return "want 1 reset, 0 regressions"
			}
			return ""
		}},
		{"redelivery after a leader change, from the older replicated offset", func(h *History) {
			// B became leader at 3 s with q0 committed at 3 (the old leader had 4
			// pending); d (q0@3) is delivered again at 3.5 s.
			h.cons.offsets = h.cons.offsets[:0]
			h.AddOffset(OffsetObs{Group: "cc", Queue: q0, Offset: 3, At: at(2000), Addr: "A"})
			h.AddOffset(OffsetObs{Group: "cc", Queue: q0, Offset: 3, At: at(3000), Addr: "B"})
			h.AddDelivery(Delivery{Group: "cc", Consumer: "c1", Queue: q0, Offset: 3, ID: "d", Start: at(3500), End: at(3500)})
		}, func(r Report) string {
			if len(r.Groups) == 0 || r.Groups[0].AfterLeaderChange != 1 || r.Redelivered != 1 {
				return "want 1 redelivery after a leader change in cc"
			}
			return ""
		}},
		{"redelivery after a rebalance, before the commit", func(h *History) {
			// b (q0@1) again at 150 ms: the poll at 100 ms had committed 0.
			h.AddDelivery(Delivery{Group: "cc", Consumer: "c1", Queue: q0, Offset: 1, ID: "b", Start: at(150), End: at(150)})
		}, func(r Report) string {
			if len(r.Groups) == 0 || r.Groups[0].AfterRebalance != 1 {
				return "want 1 redelivery after a rebalance in cc"
			}
			return ""
		}},
		{"a consumer resumes its own position on a queue another one held meanwhile", func(h *History) {
			// c1 had q0@0 at 90 ms, then its pulls stalled; c0 took q0 (the
			// fixture's @0..3 from 100 ms) and committed 4; at 8 s c1's pull
			// goes on from its own position and it gets @1 and @2.
			h.AddDelivery(Delivery{Group: "cc", Consumer: "c1", Queue: q0, Offset: 0, ID: "a", Start: at(90), End: at(90)})
			h.AddDelivery(Delivery{Group: "cc", Consumer: "c1", Queue: q0, Offset: 2, ID: "c", Start: at(8000), End: at(8000)})
			h.AddDelivery(Delivery{Group: "cc", Consumer: "c1", Queue: q0, Offset: 1, ID: "b", Start: at(8001), End: at(8001)})
		}, func(r Report) string {
			if r.RedeliveredUnexplained != 0 || len(r.Groups) == 0 || r.Groups[0].OwnPosition != 2 {
				return "want the two redeliveries to c1 counted as its own position resumed"
			}
			return ""
		}},
		{"orderly owner change hands the queue over in order", func(h *History) {
			// o0 consumed q0@0..3 by 135 ms; o1 takes q0 over and redelivers @3.
			h.AddDelivery(Delivery{Group: "oc", Consumer: "o1", Queue: q0, Offset: 3, ID: "d", Start: at(140), End: at(145)})
		}, func(r Report) string {
			if r.OrderlyOverlaps != 0 || r.OrderlyOutOfOrder != 0 || r.Redelivered != 1 {
				return "want no overlap, no order violation, 1 redelivery"
			}
			return ""
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, logs := consumerFixture()
			tc.mutate(h)
			r := Check(h, logs, nil)
			if !r.OK() {
				t.Fatalf("legal history flagged:\n%s", r.String())
			}
			if msg := tc.check(r); msg != "" {
				t.Errorf("%s:\n%s", msg, r.String())
			}
		})
	}
}

// flagCase is a synthetic history one check must flag exactly once: mutate
// breaks the clean fixture, flag reads the check's count, want is in the report.
type flagCase struct {
	name   string
	mutate func(h *History)
	flag   func(r Report) int
	want   string
}

// runFlagCases runs each case on a fresh consumerFixture: the check counts 1,
// the report is not OK and names the problem.
func runFlagCases(t *testing.T, cases []flagCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, logs := consumerFixture()
			tc.mutate(h)
			r := Check(h, logs, nil)
			if tc.flag(r) != 1 {
				t.Errorf("flag count %d, want 1:\n%s", tc.flag(r), r.String())
			}
			if r.OK() {
				t.Errorf("report OK despite %s", tc.name)
			}
			if !strings.Contains(r.String(), tc.want) {
				t.Errorf("report does not mention %q:\n%s", tc.want, r.String())
			}
		})
	}
}
