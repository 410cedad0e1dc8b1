package node

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestLeadershipLogClassifiesCauses(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	hb := time.Second
	type step struct {
		sig      leaderSignal
		transfer bool // noteTransfer just before
		want     Cause
	}
	cases := map[string]struct {
		self  raft.ServerID
		steps []step
	}{
		"follower through a crash of the leader": {self: "n2", steps: []step{
			{sig: leaderSignal{now: at(0), term: 1, leader: "n1"}, want: CauseRestart},
			{sig: leaderSignal{now: at(10), term: 1, leader: "", sinceContact: 1500 * time.Millisecond}, want: CauseLostContact},
			{sig: leaderSignal{now: at(11), term: 2, leader: "n3"}, want: CauseElectionTimeout},
		}},
		"target of a transfer": {self: "n2", steps: []step{
			{sig: leaderSignal{now: at(0), term: 1, leader: "n1"}, want: CauseRestart},
			{sig: leaderSignal{now: at(5), term: 1, leader: "", sinceContact: 20 * time.Millisecond}, want: CauseLeadershipTransfer},
			{sig: leaderSignal{now: at(5), term: 2, leader: "n2"}, want: CauseLeadershipTransfer},
		}},
		"leader that transfers": {self: "n1", steps: []step{
			{sig: leaderSignal{now: at(0), term: 1, leader: "n1"}, want: CauseRestart},
			{sig: leaderSignal{now: at(5), term: 2, leader: "n2"}, transfer: true, want: CauseLeadershipTransfer},
			// long after the transfer, a lost leader is no transfer any more
			{sig: leaderSignal{now: at(60), term: 2, leader: "", sinceContact: 2 * time.Second}, want: CauseLostContact},
			{sig: leaderSignal{now: at(61), term: 3, leader: "n1"}, want: CauseElectionTimeout},
			{sig: leaderSignal{now: at(90), term: 3, leader: ""}, want: CauseStepDown},
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			l := newLeadershipLog(c.self, hb)
			for i, s := range c.steps {
				if s.transfer {
					l.noteTransfer(s.sig.now, 0)
				}
				l.observe(s.sig)
				h := l.history()
				if len(h) != i+1 {
					t.Fatalf("step %d: %d observations, want %d", i, len(h), i+1)
				}
				if got := h[i]; got.Cause != s.want || got.Leader != s.sig.leader || got.Term != s.sig.term {
					t.Errorf("step %d: %+v, want cause %s leader %q term %d", i, got, s.want, s.sig.leader, s.sig.term)
				}
			}
		})
	}
}

// A transfer's vote request that raft hands over after this follower already
// follows the leader it elected is stale: the next election, by a timeout,
// is not a transfer. Seen at load in TestLeadershipHistoryOverTheWire (the
// vote of the transfer to n0 reached n2 after n0's AppendEntries; n2's own
// election after n0 was cut off was then called a transfer).
func TestLeadershipLogIgnoresAStaleTransferVote(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	l := newLeadershipLog("n2", 50*time.Millisecond)
	l.observe(leaderSignal{now: t0, term: 2, leader: "n1"})
	l.noteTransfer(t0.Add(time.Millisecond), 3) // the transfer n1 → n0: a real one
	l.observe(leaderSignal{now: t0.Add(2 * time.Millisecond), term: 3, leader: "n0"})
	l.noteTransfer(t0.Add(3*time.Millisecond), 3) // its vote request, handed over late
	l.observe(leaderSignal{now: t0.Add(500 * time.Millisecond), term: 3, leader: "", sinceContact: 80 * time.Millisecond})
	l.observe(leaderSignal{now: t0.Add(600 * time.Millisecond), term: 4, leader: "n2"})
	h := l.history()
	want := []Cause{CauseRestart, CauseLeadershipTransfer, CauseLostContact, CauseElectionTimeout}
	if len(h) != len(want) {
		t.Fatalf("%d observations, want %d: %+v", len(h), len(want), h)
	}
	for i, c := range want {
		if h[i].Cause != c {
			t.Errorf("observation %d (%s in term %d): cause %s, want %s", i, h[i].Leader, h[i].Term, h[i].Cause, c)
		}
	}
}

func TestLeadershipLogPreviousLeaderAndRepeats(t *testing.T) {
	l := newLeadershipLog("n2", time.Second)
	now := time.Unix(1, 0)
	l.observe(leaderSignal{now: now, term: 1, leader: "n1"})
	l.observe(leaderSignal{now: now, term: 1, leader: "n1"}) // repeated: ignored
	l.observe(leaderSignal{now: now, term: 1, leader: "", sinceContact: time.Hour})
	l.observe(leaderSignal{now: now, term: 2, leader: "n3"})
	h := l.history()
	if len(h) != 3 {
		t.Fatalf("%d observations, want 3 (a repeat must not count): %+v", len(h), h)
	}
	if h[1].PreviousLeader != "n1" || h[2].PreviousLeader != "n1" || h[0].PreviousLeader != "" {
		t.Errorf("previous leaders %q %q %q, want \"\" n1 n1", h[0].PreviousLeader, h[1].PreviousLeader, h[2].PreviousLeader)
	}
}

func TestLeadershipLogRingKeepsNewest(t *testing.T) {
	l := newLeadershipLog("n1", time.Second)
	total := LeadershipRing + 37
	for i := range total {
		l.observe(leaderSignal{now: time.Unix(int64(i), 0), term: uint64(i + 1), leader: raft.ServerID(fmt.Sprintf("n%d", i%2+2))})
	}
	h := l.history()
	if len(h) != LeadershipRing {
		t.Fatalf("%d observations kept, want %d", len(h), LeadershipRing)
	}
	for i, o := range h {
		if want := uint64(total - LeadershipRing + i + 1); o.Term != want {
			t.Fatalf("observation %d has term %d, want %d (oldest first, newest kept)", i, o.Term, want)
		}
	}
}
