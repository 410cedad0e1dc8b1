package broker

import (
	"strconv"
	"testing"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// TestO1ResetHeldAgainstStaleCommits is chaos scenario O1's finding: after
// INVOKE_BROKER_TO_RESET_OFFSET the group's clients go on committing their
// old offsets for the 10 s they take to apply the reset (their periodic
// commit, and the commit every pull carries), and the broker took those
// commits: the committed offset went back up to the old one, and a client
// that resumed from it skipped what the reset had put back. The reset is now
// held against them, on this leader and on the next one (the hold comes
// from the replicated reset, not from the old leader's memory), until a pull
// from the reset offset (or a commit of it) shows the client resumed from it.
func TestO1ResetHeldAgainstStaleCommits(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	for i := range 10 {
		tb.call(t, transport.SendMessage, sendExt("TO1", 0, props(store.PropertyUniqKey, "U"+strconv.Itoa(i))), []byte("o"))
	}
	waitDispatched(t, tb, "TO1", 10)
	heartbeat(t, tb, "og", "TO1")
	commit := func(tb *testBroker, off int) {
		t.Helper()
		u := map[string]string{"consumerGroup": "og", "topic": "TO1", "queueId": "0", "commitOffset": strconv.Itoa(off)}
		if r := tb.call(t, transport.UpdateConsumerOffset, u, nil); r.ResponseCode() != transport.Success {
			t.Fatalf("commit %d: %s", off, r.Remark)
		}
	}
	pullCommitting := func(tb *testBroker, from, committed int) {
		t.Helper()
		ext := pullExt("og", "TO1", 0, int64(from), 0)
		ext["sysFlag"], ext["commitOffset"] = "1", strconv.Itoa(committed) // FLAG_COMMIT_OFFSET
		if r := tb.call(t, transport.PullMessage, ext, nil); r.ResponseCode() != transport.Success && r.ResponseCode() != transport.PullNotFound {
			t.Fatalf("pull from %d: code %d %s", from, r.Code, r.Remark)
		}
	}
	query := func(tb *testBroker) int64 {
		t.Helper()
		q := map[string]string{"consumerGroup": "og", "topic": "TO1", "queueId": "0", "setZeroIfNotFound": "false"}
		r := tb.call(t, transport.QueryConsumerOffset, q, nil)
		off, err := strconv.ParseInt(r.Field("offset"), 10, 64)
		if r.ResponseCode() != transport.Success || err != nil {
			t.Fatalf("query: code %d %s %q", r.Code, r.Remark, r.Field("offset"))
		}
		return off
	}

	commit(tb, 9)
	if got := query(tb); got != 9 {
		t.Fatalf("committed %d before the reset, want 9", got)
	}
	r := tb.call(t, transport.InvokeBrokerToResetOffset, map[string]string{"topic": "TO1", "group": "og", "timestamp": "0", "isForce": "false"}, nil)
	if r.ResponseCode() != transport.Success {
		t.Fatalf("reset: %v %s", r.ResponseCode(), r.Remark)
	}
	if ans := decodeMQTable[int64](t, r.Body); ans[messageQueue{"TO1", "broker-a", 0}] != 0 {
		t.Fatalf("reset answer %s, want queue 0 at 0", r.Body)
	}
	// The client has not applied the reset yet: its periodic commit and a
	// pull still at its old position.
	commit(tb, 9)
	pullCommitting(tb, 9, 9)
	if got := query(tb); got != 0 {
		t.Fatalf("committed %d after stale commits of 9, want the reset's 0", got)
	}

	// The leader dies; the next one (a fresh node's buffer over the same
	// replicated state) gets the client's next periodic commit.
	next, err := New(tb.b.cfg, tb.st, tb.replica)
	if err != nil {
		t.Fatal(err)
	}
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { next.Close() })
	tb2 := &testBroker{b: next, st: tb.st, replica: tb.replica, client: tb.client}
	heartbeat(t, tb2, "og", "TO1")
	commit(tb2, 9)
	if got := query(tb2); got != 0 {
		t.Fatalf("the next leader answered %d after a stale commit of 9, want the reset's 0", got)
	}

	// The client resumes from the reset (a pull from 0) and commits its
	// progress: that is taken.
	pullCommitting(tb2, 0, 0)
	commit(tb2, 4)
	if got := query(tb2); got != 4 {
		t.Fatalf("committed %d after the client resumed from the reset and committed 4, want 4", got)
	}
}
