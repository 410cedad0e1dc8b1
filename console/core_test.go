package console

import (
	"errors"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/admin"
)

func TestPreviewRaft(t *testing.T) {
	three := []admin.RaftPeer{{ID: "n0", Suffrage: "Voter", Leader: true}, {ID: "n1", Suffrage: "Voter"}, {ID: "n2", Suffrage: "Voter"}}
	cases := []struct {
		name        string
		down        map[string]bool
		body        raftBody
		voters      int
		tolerated   int
		summary     string
		warning     string
		errField    string
		errNotFound bool
	}{
		{name: "remove a follower", body: raftBody{Op: "remove", ID: "n2"}, voters: 2, tolerated: 0,
			summary: "the group will have 2 voters; one more failure loses the quorum"},
		{name: "remove the leader", body: raftBody{Op: "remove", ID: "n0"}, voters: 2, warning: "n0 is the leader"},
		{name: "remove with one down", down: map[string]bool{"n1": true}, body: raftBody{Op: "remove", ID: "n2"}, voters: 2,
			summary: "lost its quorum", warning: "only 1 of 2 voters answer"},
		{name: "remove the down node", down: map[string]bool{"n2": true}, body: raftBody{Op: "remove", ID: "n2"}, voters: 2,
			summary: "one more failure loses the quorum"},
		{name: "add a voter", body: raftBody{Op: "add-voter", ID: "n3", Address: "127.0.0.1:4000"}, voters: 4, tolerated: 1,
			summary: "the group will have 4 voters; it tolerates 1 more failures", warning: "4 voters tolerate no more failures than 3"},
		{name: "add a non-voter", body: raftBody{Op: "add-nonvoter", ID: "n3", Address: "h:1"}, voters: 3, tolerated: 1, summary: "never votes"},
		{name: "transfer", body: raftBody{Op: "transfer-leader", ID: "n1"}, voters: 3, tolerated: 1, summary: "from n0 to n1"},
		{name: "transfer anywhere", body: raftBody{Op: "transfer-leader"}, voters: 3, tolerated: 1, summary: "most up-to-date follower"},
		{name: "snapshot", body: raftBody{Op: "snapshot"}, voters: 3, tolerated: 1, summary: "clients are not affected"},
		{name: "transfer to the leader", body: raftBody{Op: "transfer-leader", ID: "n0"}, errField: "id"},
		{name: "transfer to a down node", down: map[string]bool{"n2": true}, body: raftBody{Op: "transfer-leader", ID: "n2"}, errField: "id"},
		{name: "transfer to a stranger", body: raftBody{Op: "transfer-leader", ID: "n7"}, errField: "id", errNotFound: true},
		{name: "remove a stranger", body: raftBody{Op: "remove", ID: "n7"}, errField: "id", errNotFound: true},
		{name: "remove without id", body: raftBody{Op: "remove"}, errField: "id"},
		{name: "add an existing voter", body: raftBody{Op: "add-voter", ID: "n1", Address: "h:1"}, errField: "id"},
		{name: "add without address", body: raftBody{Op: "add-voter", ID: "n3"}, errField: "address"},
		{name: "add with a bad address", body: raftBody{Op: "add-nonvoter", ID: "n3", Address: "nohost"}, errField: "address"},
		{name: "unknown op", body: raftBody{Op: "explode"}, errField: "op"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := previewRaft("broker-a", three, c.down, c.body)
			if c.errField != "" {
				var ae *apiError
				if !errors.As(err, &ae) || ae.field != c.errField || (c.errNotFound != (ae.code == codeNotFound)) {
					t.Fatalf("err %v, want field %s (not found %v)", err, c.errField, c.errNotFound)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.VotersAfter != c.voters || (c.tolerated != 0 && p.FailuresTolerated != c.tolerated) || !strings.Contains(p.Summary, c.summary) {
				t.Fatalf("%+v, want %d voters, %d tolerated, summary with %q", p, c.voters, c.tolerated, c.summary)
			}
			if c.warning != "" && !strings.Contains(strings.Join(p.Warnings, "|"), c.warning) {
				t.Fatalf("warnings %v, want one with %q", p.Warnings, c.warning)
			}
		})
	}
}

func TestRateAndSeries(t *testing.T) {
	t0 := time.Unix(1000, 0)
	if r := rate(counter{t0, 100}, counter{t0.Add(2 * time.Second), 300}, true); r == nil || *r != 100 {
		t.Fatalf("rate 200 in 2 s = %v, want 100", r)
	}
	for name, c := range map[string]struct {
		prev, cur counter
		ok        bool
	}{
		"no previous": {counter{t0, 0}, counter{t0.Add(time.Second), 5}, false},
		"no time":     {counter{t0, 0}, counter{t0, 5}, true},
		"restarted":   {counter{t0, 50}, counter{t0.Add(time.Second), 5}, true},
	} {
		if r := rate(c.prev, c.cur, c.ok); r != nil {
			t.Errorf("%s: rate %v, want unknown", name, *r)
		}
	}

	st := newSeriesStore(10 * time.Second)
	a := map[string]string{"node": "n1"}
	for i := range 15 {
		st.add("lag", a, t0.Add(time.Duration(i)*time.Second), float64(i))
	}
	st.add("other", map[string]string{"node": "n2"}, t0.Add(3*time.Second), 1) // old already: dropped with the next add
	st.add("lag", a, t0.Add(15*time.Second), 15)
	all := st.since(0)
	if len(all) != 1 || all[0].Name != "lag" {
		t.Fatalf("series %+v, want only lag (other is out of the window)", all)
	}
	pts := all[0].Points
	if pts[0][0] != float64(t0.Add(5*time.Second).UnixMilli()) || pts[len(pts)-1][1] != 15 || len(pts) != 11 {
		t.Fatalf("points %v, want 5 s … 15 s", pts)
	}
	newer := st.since(t0.Add(13 * time.Second).UnixMilli())
	if len(newer) != 1 || len(newer[0].Points) != 2 {
		t.Fatalf("since 13 s: %+v, want the points at 14 and 15 s", newer)
	}
}

func TestSessionsExpire(t *testing.T) {
	now := time.Unix(0, 0)
	ss := newSessions(time.Hour, func() time.Time { return now })
	tok, err := ss.add(user{accessKey: "ak", admin: true})
	if err != nil || len(tok) != 64 {
		t.Fatalf("token %q %v", tok, err)
	}
	if u, ok := ss.get(tok); !ok || u.accessKey != "ak" {
		t.Fatalf("fresh session: %+v %v", u, ok)
	}
	if _, ok := ss.get("forged"); ok {
		t.Fatal("an unknown token has a session")
	}
	now = now.Add(2 * time.Hour)
	if _, ok := ss.get(tok); ok {
		t.Fatal("a session outlived its ttl")
	}
}

func TestConfirmationRule(t *testing.T) {
	yes, no := true, false
	for _, c := range []*bool{nil, &no} {
		var ae *apiError
		if err := confirmed(c); !errors.As(err, &ae) || ae.code != codeConfirmation || ae.status != 400 || ae.field != "confirm" {
			t.Fatalf("confirmed(%v) = %v", c, err)
		}
	}
	if err := confirmed(&yes); err != nil {
		t.Fatal(err)
	}
	if u := (user{}); u.may(opTopicCreate) || len(u.operations()) != 0 {
		t.Fatal("a non-admin may operate")
	}
	if u := (user{admin: true}); !u.may(opRaftRemove) || u.may("format.disk") {
		t.Fatal("an admin's operations are not exactly the listed ones")
	}
}

func TestFsyncMean(t *testing.T) {
	if ms, ok := fsyncMean([2]float64{10, 20e6}, [2]float64{14, 28e6}); !ok || ms != 2 {
		t.Fatalf("4 writes in 8 ms: %v %v, want 2 ms", ms, ok)
	}
	for name, c := range map[string][2][2]float64{
		"first sample": {{0, 0}, {10, 1e6}},
		"no writes":    {{10, 1e6}, {10, 1e6}},
		"restarted":    {{10, 9e6}, {2, 1e6}},
	} {
		if _, ok := fsyncMean(c[0], c[1]); ok {
			t.Errorf("%s: a mean where there is none", name)
		}
	}
}

func TestFsyncLatencyOfALeaderIsItsDeferredRounds(t *testing.T) {
	writes := [2][2]float64{{10, 1e6}, {14, 1.4e6}} // 0.1 ms per write
	leader := [2][2]float64{{5, 5e6}, {7, 8e6}}     // 1.5 ms per fsync round
	if ms, ok := fsyncLatency(writes[0], writes[1], leader[0], leader[1]); !ok || ms != 1.5 {
		t.Fatalf("leader: %v %v, want its fsync rounds' 1.5 ms", ms, ok)
	}
	follower := [2][2]float64{{5, 5e6}, {5, 5e6}}
	if ms, ok := fsyncLatency(writes[0], writes[1], follower[0], follower[1]); !ok || ms != 0.1 {
		t.Fatalf("follower: %v %v, want its writes' 0.1 ms", ms, ok)
	}
}

// TestNoNameserverAnswers: with nothing listening at the nameserver address
// the API answers 503 with the JSON error, and the event stream opens with a
// clusterError event instead of failing.
func TestNoNameserverAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	adm := admin.New(admin.Config{NamesrvAddrs: []string{dead}, Timeout: time.Second})
	defer adm.Close()
	srv, err := New(Config{Admin: adm})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	f := &fixture{base: hs.URL, http: hs.Client()}
	f.wantError(t, f.http, "GET", "/api/v1/cluster", nil, 503, codeUnavailable, "")
	f.wantError(t, f.http, "GET", "/api/v1/topics", nil, 503, codeUnavailable, "")
	f.sse(t, f.http, 5*time.Second, func(name string, data map[string]any) bool {
		if name != "clusterError" || data["code"] != codeUnavailable || !strings.Contains(data["error"].(string), dead) {
			t.Fatalf("first event %s %v, want clusterError naming %s", name, data, dead)
		}
		return true
	})
}
