package broker

import (
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/transport"
)

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A node that becomes leader announces its client address and dLegerGroup
// once; a later election with nothing changed proposes nothing. With
// traceTopicEnable it also creates the trace topic (1/1 queues).
func TestNewLeaderAnnouncesItselfAndCreatesTraceTopic(t *testing.T) {
	tb := startTestBroker(t, replica.RoleFollower, nil, func(c *Config) {
		c.SelfID, c.DLegerGroup, c.TraceTopicEnable = "n0", "RaftNode00", true
	})
	st := tb.replica.Status()
	if _, ok := tb.replica.Topic(DefaultTraceTopic); ok {
		t.Fatal("a follower created the trace topic")
	}
	st.Role, st.SelfID, st.LeaderID, st.Term = replica.RoleLeader, "n0", "n0", 4
	tb.replica.SetStatus(st)
	want := fsm.MemberInfo{ID: "n0", ClientAddr: "127.0.0.1:10911", Group: "RaftNode00"}
	waitFor(t, "the announcement", func() bool { got, ok := tb.replica.Member("n0"); return ok && got == want })
	waitFor(t, "the trace topic", func() bool { _, ok := tb.replica.Topic(DefaultTraceTopic); return ok })
	if tc, _ := tb.replica.Topic(DefaultTraceTopic); tc.ReadQueueNums != 1 || tc.WriteQueueNums != 1 || tc.Perm != fsm.PermRead|fsm.PermWrite {
		t.Errorf("trace topic %+v, want 1/1 queues, perm 6", tc)
	}
	st.Term = 5
	tb.replica.SetStatus(st)
	waitFor(t, "the second term", func() bool { return tb.b.Status().Term == 5 })
	if n := tb.replica.Announcements(); n != 1 {
		t.Errorf("%d announcements, want 1 (the entry was already right)", n)
	}
}

func TestTraceTopicOffByDefault(t *testing.T) {
	tb := startTestBroker(t, replica.RoleFollower, nil, func(c *Config) { c.SelfID = "n0" })
	st := tb.replica.Status()
	st.Role, st.SelfID, st.LeaderID, st.Term = replica.RoleLeader, "n0", "n0", 4
	tb.replica.SetStatus(st)
	waitFor(t, "the template topic", func() bool { _, ok := tb.replica.Topic("TBW102"); return ok })
	if _, ok := tb.replica.Topic(DefaultTraceTopic); ok {
		t.Error("trace topic created without traceTopicEnable (Apache's default is false)")
	}
}

// A follower without dLegerPeerClientAddrs relays writes to the address the
// leader announced through the group.
func TestFollowerRelaysToAnnouncedLeader(t *testing.T) {
	leader := startTestBroker(t, replica.RoleLeader, nil)
	follower := startTestBroker(t, replica.RoleFollower, nil)
	follower.replica.SetMember(fsm.MemberInfo{ID: "n0", ClientAddr: leader.b.Addr(), Group: "broker-a"})
	if r := follower.call(t, transport.SendMessage, sendExt("TA", 0, ""), []byte("via follower")); r.ResponseCode() != transport.Success {
		t.Fatalf("relayed send: %s %q", r.ResponseCode(), r.Remark)
	}
	if leader.replica.PutCount() != 1 || follower.replica.PutCount() != 0 {
		t.Fatalf("puts: leader %d follower %d", leader.replica.PutCount(), follower.replica.PutCount())
	}
}

// The address may arrive while a write waits: a new leader's announcement is
// applied a moment after its election.
func TestFollowerWaitsForTheLeadersAnnouncement(t *testing.T) {
	leader := startTestBroker(t, replica.RoleLeader, nil)
	follower := startTestBroker(t, replica.RoleFollower, nil)
	go func() {
		time.Sleep(300 * time.Millisecond)
		follower.replica.SetMember(fsm.MemberInfo{ID: "n0", ClientAddr: leader.b.Addr(), Group: "broker-a"})
	}()
	start := time.Now()
	if r := follower.call(t, transport.SendMessage, sendExt("TW", 0, ""), []byte("x")); r.ResponseCode() != transport.Success {
		t.Fatalf("send while the address arrives: %s %q", r.ResponseCode(), r.Remark)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Fatalf("answered after %v, before the address was known", waited)
	}
}

// dLegerPeerClientAddrs takes precedence over the announcement; a leader of
// another dLegerGroup gets nothing relayed, and the answer says why.
func TestConfiguredPeerAddrWinsAndGroupsMustAgree(t *testing.T) {
	leader := startTestBroker(t, replica.RoleLeader, nil)
	follower := startTestBroker(t, replica.RoleFollower, []Peer{{ID: "n0", ClientAddr: leader.b.Addr()}})
	follower.replica.SetMember(fsm.MemberInfo{ID: "n0", ClientAddr: proctest.TestAddr(t), Group: "broker-a"}) // nobody listens there
	if r := follower.call(t, transport.SendMessage, sendExt("TP", 0, ""), []byte("x")); r.ResponseCode() != transport.Success {
		t.Fatalf("configured address: %s %q", r.ResponseCode(), r.Remark)
	}

	other := startTestBroker(t, replica.RoleFollower, nil)
	other.replica.SetMember(fsm.MemberInfo{ID: "n0", ClientAddr: leader.b.Addr(), Group: "another-group"})
	r := other.call(t, transport.SendMessage, sendExt("TP", 0, ""), []byte("x"))
	if r.ResponseCode() != transport.ServiceNotAvailable || !strings.Contains(r.Remark, `dLegerGroup "another-group"`) {
		t.Fatalf("leader of another group: %s %q", r.ResponseCode(), r.Remark)
	}
	if leader.replica.PutCount() != 1 {
		t.Fatalf("leader stored %d sends, want only the first", leader.replica.PutCount())
	}
}
