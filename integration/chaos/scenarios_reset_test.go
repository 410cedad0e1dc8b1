package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// O1's timing. The reset goes back resetLookBack: the groups have committed
// well past that (clients commit on every pull), so every queue with traffic
// is put back by a few seconds of messages. A rocketmq-client-go push
// consumer told to reset waits 10 s before it resumes from the new offsets
// (pushConsumer.ResetOffset), so each round leaves resetSettle for it.
const (
	resetLookBack   = 8 * time.Second
	resetKillAfter  = 1500 * time.Millisecond
	resetSettle     = 15 * time.Second
	resetRetryFor   = 10 * time.Second
	resetOwedWait   = 60 * time.Second
	resetGroupsWait = 30 * time.Second
)

// TestO1ResetOffsetsDuringFailover resets the concurrent groups' offsets back
// in time (INVOKE_BROKER_TO_RESET_OFFSET, what mqadmin resetOffsetByTime
// sends) while the load runs and the groups consume, in two rounds: a reset
// on the leader, which is killed resetKillAfter later; then a kill of the
// leader and a reset on the new one as soon as the nameserver lists it. Each
// killed node restarts at once. Every reset queue's offset is recorded, as
// the broker answered it, with AddOffsetReset. The checker then holds:
// every acknowledged message delivered; committed offsets never below the
// reset point nor going back except by a reset; and every message from the
// reset point up to the offset committed before it delivered again after the
// reset (checker_resets.go).
func TestO1ResetOffsetsDuringFailover(t *testing.T) {
	requireChaos(t, fullOnly)
	s := begin(t, "O1", Options{}, defaultWorkload())
	groups := s.resetGroups()
	sleep(resetLookBack) // the groups consume past the first reset's time
	var movedBack, resets int

	// Round 1: a reset on the leader, then the leader killed.
	old := s.leader()
	moved, n := s.resetAll(old, groups, "on leader n%d, killed %v later", old, resetKillAfter)
	movedBack, resets = movedBack+moved, resets+n
	sleep(resetKillAfter)
	killAt := s.fault()
	s.c.Kill(old)
	s.awaitNewLeader(old, killAt)
	s.awaitFirstAck(old, killAt)
	s.restartListed(old)
	sleep(resetSettle)

	// Round 2: the leader killed, a reset on the one that took over.
	old = s.leader()
	killAt = s.fault()
	s.c.Kill(old)
	if nl := s.awaitNewLeader(old, killAt); nl >= 0 {
		moved, n = s.resetAll(nl, groups, "on n%d, listed as leader %v after n%d was killed", nl, time.Since(killAt).Round(time.Millisecond), old)
		movedBack, resets = movedBack+moved, resets+n
	}
	s.awaitFirstAck(old, killAt)
	s.restartListed(old)
	sleep(resetSettle)

	// The clients resume from the reset points 10 s after each reset and
	// re-consume at their own pace: wait for what they owe before finishing.
	ctx, cancel := context.WithTimeout(context.Background(), resetOwedWait)
	defer cancel()
	owed := ResetsOwed(s.w.History())
	for owed > 0 && ctx.Err() == nil {
		time.Sleep(time.Second)
		owed = ResetsOwed(s.w.History())
	}
	if owed > 0 {
		s.rep.Note("resets: %d messages put back still not delivered again %v after the last round", owed, resetOwedWait)
	}
	if movedBack == 0 {
		// Nothing put back, nothing to redeliver: the checks would pass
		// without having tested anything.
		s.rep.Fail("no reset moved a queue back below its committed offset (%d resets)", resets)
	}
	s.rep.Faults = fmt.Sprintf("resets %d (queues moved back %d), leader kills %d", resets, movedBack, len(s.rep.Failover))
	s.finish()
}

// resetGroups waits until the concurrent group of the workload's topic and
// the one of the load's have consumed something and returns their names and
// topics.
func (s *scenario) resetGroups() map[string]string {
	s.t.Helper()
	want := map[string]string{groupName(s.w.Topic(), Concurrent): s.w.Topic()}
	if s.load != nil {
		want[groupName(s.load.Topic(), Concurrent)] = s.load.Topic()
	}
	deadline := time.Now().Add(resetGroupsWait)
	for {
		seen := map[string]int{}
		for _, d := range s.w.History().Deliveries() {
			seen[d.Group]++
		}
		ready := true
		for g := range want {
			ready = ready && seen[g] >= consumerWarmupMsgs
		}
		if ready {
			return want
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: groups %v have not consumed %d messages each after %v (seen %v)", s.id, want, consumerWarmupMsgs, resetGroupsWait, seen)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// resetAll resets every group of groups (name → topic) on node i to
// resetLookBack ago, records each answered queue with AddOffsetReset at the
// moment of the answer, with no offset poll in flight, and notes it. It
// returns how many queues moved back below their last polled committed
// offset and how many resets answered.
func (s *scenario) resetAll(i int, groups map[string]string, format string, args ...any) (moved, resets int) {
	s.t.Helper()
	h := s.w.History()
	for group, topic := range groups {
		ts := time.Now().Add(-resetLookBack)
		var qs []ResetQueue
		var at time.Time
		var err error
		deadline := time.Now().Add(resetRetryFor)
		for {
			s.cons.Quiet(func() {
				before := lastCommitted(h, group)
				qs, at, err = s.c.ResetOffsetByTime(context.Background(), i, group, topic, ts, false)
				if err != nil {
					return
				}
				var parts []string
				for _, q := range qs {
					h.AddOffsetReset(group, q.Queue, q.Offset, at)
					was, known := before[q.Queue]
					if known && q.Offset < was {
						moved++
					}
					parts = append(parts, fmt.Sprintf("#%d %d (was %s)", q.Queue.QueueID, q.Offset, committedText(was, known)))
				}
				s.rep.Note("reset %s to %s %s, answered %s: %s", group, ts.Format("15:04:05.000"), fmt.Sprintf(format, args...),
					at.Format("15:04:05.000"), strings.Join(parts, ", "))
			})
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			s.rep.Fail("reset %s on n%d: %v", group, i, err)
			continue
		}
		if len(qs) == 0 {
			s.rep.Fail("reset %s on n%d: the answer listed no queue", group, i)
		}
		resets++
	}
	return moved, resets
}

// lastCommitted is group's latest observed committed offset of each queue.
func lastCommitted(h *History, group string) map[QueueKey]int64 {
	out, at := map[QueueKey]int64{}, map[QueueKey]time.Time{}
	for _, o := range h.Offsets() {
		if o.Group == group && !o.At.Before(at[o.Queue]) {
			out[o.Queue], at[o.Queue] = o.Offset, o.At
		}
	}
	return out
}

func committedText(off int64, known bool) string {
	if !known {
		return "none polled"
	}
	return fmt.Sprint(off)
}

// awaitNewLeader waits for a node other than old to be listed as brokerId 0
// and records the time since killAt; -1 when none was within a minute.
func (s *scenario) awaitNewLeader(old int, killAt time.Time) int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nl, err := s.c.WaitLeader(ctx, old, 1)
	if err != nil {
		s.rep.Fail("after killing n%d: %v", old, err)
		return -1
	}
	s.rep.NSFailover = append(s.rep.NSFailover, time.Since(killAt))
	return nl
}

// awaitFirstAck records kill → first ack of a send called after killAt
// (only a new leader can have committed it), waiting up to a minute.
func (s *scenario) awaitFirstAck(old int, killAt time.Time) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if first := s.w.History().FirstAckAfter(killAt, "raw"); !first.IsZero() {
			s.rep.Failover = append(s.rep.Failover, first.Sub(killAt))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.rep.Fail("after killing n%d: no acked send within 60 s", old)
}

// restartListed starts node i again and waits until every node is listed.
func (s *scenario) restartListed(i int) {
	s.t.Helper()
	s.restart(i)
	s.healed()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := s.c.WaitLeader(ctx, -1, len(s.c.Nodes)); err != nil {
		s.rep.Fail("n%d never listed again: %v", i, err)
	}
}
