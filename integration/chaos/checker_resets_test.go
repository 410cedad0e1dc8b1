package chaos

import (
	"strings"
	"testing"
	"time"
)

// In consumerFixture group cc's committed offset of q0 was polled at 4 at
// 2.1 s; each case resets q0 at 2.5 s.

func TestResetChecksPassRedeliveredReset(t *testing.T) {
	h, logs := consumerFixture()
	at := fixtureAt
	h.AddOffsetReset("cc", q0, 1, at(2500))
	for i, id := range []string{"b", "c", "d"} {
		h.AddDelivery(Delivery{Group: "cc", Consumer: "c1", Queue: q0, Offset: int64(1 + i), ID: id, Start: at(3000 + i), End: at(3000 + i)})
	}
	h.AddOffset(OffsetObs{Group: "cc", Queue: q0, Offset: 2, At: at(3100), Addr: "A"})
	h.AddOffset(OffsetObs{Group: "cc", Queue: q0, Offset: 4, At: at(4000), Addr: "A"})
	r := Check(h, logs, nil)
	if !r.OK() {
		t.Fatalf("redelivered reset flagged:\n%s", r.String())
	}
	if r.ResetQueues != 1 || r.ResetOwed != 3 || r.ResetRedelivered != 3 || r.ResetMissed != 0 || r.OffsetResets != 1 {
		t.Errorf("want 1 queue reset, 3 put back, 3 redelivered:\n%s", r.String())
	}
	if len(r.Groups) == 0 || r.Groups[0].AfterReset != 3 || r.Redelivered != 3 {
		t.Errorf("want the 3 redeliveries put down to the reset:\n%s", r.String())
	}
	if !strings.Contains(r.String(), "resets: 1 recorded | queues moved back 1 | messages put back 3 | redelivered after the reset 3 | missed 0") {
		t.Errorf("report lacks the resets line:\n%s", r.String())
	}
}

func TestResetChecksFlagEachProblem(t *testing.T) {
	at := fixtureAt
	cases := []flagCase{
		{"a message put back never came again", func(h *History) {
			h.AddOffsetReset("cc", q0, 1, at(2500))
			h.AddDelivery(Delivery{Group: "cc", Consumer: "c1", Queue: q0, Offset: 1, ID: "b", Start: at(3000), End: at(3000)})
			h.AddDelivery(Delivery{Group: "cc", Consumer: "c1", Queue: q0, Offset: 3, ID: "d", Start: at(3002), End: at(3002)})
		}, func(r Report) int { return r.ResetMissed }, "reset not redelivered: group cc T#0 reset to 1 at"},
		{"the redelivery came before the reset", func(h *History) {
			// Deliveries of @1..3 just before the reset do not answer it.
			for i, id := range []string{"b", "c", "d"} {
				h.AddDelivery(Delivery{Group: "cc", Consumer: "c1", Queue: q0, Offset: int64(1 + i), ID: id, Start: at(2400 + i), End: at(2400 + i)})
			}
			h.AddOffsetReset("cc", q0, 1, at(2500))
		}, func(r Report) int { return r.ResetMissed / 3 }, "3 of the offsets in between never delivered again after it, first @1"},
		{"a stale commit undid the reset for a while", func(h *History) {
			// The reset to 1, then a client's commit of its old 4, then the
			// client's own reset commit: the offset went back with no reset.
			h.AddOffsetReset("cc", q0, 1, at(2500))
			h.AddOffset(OffsetObs{Group: "cc", Queue: q0, Offset: 4, At: at(2700), Addr: "A"})
			h.AddOffset(OffsetObs{Group: "cc", Queue: q0, Offset: 1, At: at(3000), Addr: "A"})
			for i, id := range []string{"b", "c", "d"} {
				h.AddDelivery(Delivery{Group: "cc", Consumer: "c1", Queue: q0, Offset: int64(1 + i), ID: id, Start: at(3100 + i), End: at(3100 + i)})
			}
		}, func(r Report) int { return r.OffsetRegressions }, "offset regression: group cc T#0 committed 4 (A at"},
		{"committed below the reset point", func(h *History) {
			h.AddOffsetReset("cc", q0, 2, at(2500))
			h.AddOffset(OffsetObs{Group: "cc", Queue: q0, Offset: 1, At: at(2700), Addr: "B"})
			for i, id := range []string{"b", "c", "d"} {
				h.AddDelivery(Delivery{Group: "cc", Consumer: "c1", Queue: q0, Offset: int64(1 + i), ID: id, Start: at(3100 + i), End: at(3100 + i)})
			}
		}, func(r Report) int { return r.OffsetRegressions }, "offset regression: group cc T#0 reset to 2 at"},
	}
	runFlagCases(t, cases)
}

func TestResetChecksAcceptLegalHistories(t *testing.T) {
	at := fixtureAt
	cases := []struct {
		name   string
		mutate func(h *History)
		check  func(r Report) string
	}{
		{"a later reset moved the queue past what was put back", func(h *History) {
			h.AddOffsetReset("cc", q0, 1, at(2500))
			h.AddOffsetReset("cc", q0, 4, at(2600))
		}, func(r Report) string {
			if r.ResetQueues != 1 || r.ResetOwed != 0 || r.ResetMissed != 0 || r.OffsetResets != 2 {
				return "want 2 resets, 1 queue moved back, nothing owed"
			}
			return ""
		}},
		{"a reset forward puts nothing back", func(h *History) {
			h.AddOffsetReset("cc", q1, 2, at(2500))
		}, func(r Report) string {
			if r.ResetQueues != 0 || r.ResetOwed != 0 || r.OffsetResets != 1 {
				return "want 1 reset, no queue moved back"
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

// fixtureAt is consumerFixture's clock: ms after its t0.
func fixtureAt(ms int) time.Time { return time.Unix(1000, 0).Add(time.Duration(ms) * time.Millisecond) }
