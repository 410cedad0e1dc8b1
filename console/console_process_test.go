package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/transport/sign"
)

// TestConsoleAPIAgainstProcesses drives the JSON and event API against a real
// nameserver and three broker processes: the cluster document and its
// stream, the confirmation rule, topics, a group's lag and its reset with a
// preview, message search and replicas, raft operations with previews, the
// leadership timeline, series, bad input, and a node that is down.
func TestConsoleAPIAgainstProcesses(t *testing.T) {
	f := startFixture(t, sign.Credentials{})
	leader := f.waitLeader(t)

	// Session without ACL: everyone may do everything.
	s := f.ok(t, "GET", "/api/v1/session", nil)
	if s["aclEnabled"] != false || s["admin"] != true || len(s["operations"].([]any)) != len(allOps) {
		t.Fatalf("session: %v", s)
	}

	// The cluster document: three nodes up, one leader, raft numbers.
	doc := f.ok(t, "GET", "/api/v1/cluster", nil)
	g, nodes := nodesOf(doc)
	if g["brokerName"] != "broker-a" || g["voters"] != 3.0 || g["quorum"] != 2.0 || g["healthy"] != 3.0 {
		t.Fatalf("group: %v", g)
	}
	for id, n := range nodes {
		if n["term"].(float64) < 1 || n["commitIndex"].(float64) < 1 || n["leader"] != leader || n["diskTotalBytes"] == nil {
			t.Fatalf("node %s: %v", id, n)
		}
		if (id == leader) != (n["role"] == "LEADER") {
			t.Fatalf("node %s role %v, leader is %s", id, n["role"], leader)
		}
	}

	// Confirmation rule: a create without confirm changes nothing.
	f.wantError(t, f.http, "POST", "/api/v1/topics", map[string]any{"name": "Orders", "readQueues": 2, "writeQueues": 2}, 400, codeConfirmation, "confirm")
	f.wantError(t, f.http, "POST", "/api/v1/topics", map[string]any{"name": "Orders", "confirm": false}, 400, codeConfirmation, "confirm")
	f.wantError(t, f.http, "GET", "/api/v1/topics/Orders", nil, 404, codeNotFound, "topic")
	// Bad input names the field.
	f.wantError(t, f.http, "POST", "/api/v1/topics", map[string]any{"name": "bad name!", "confirm": true}, 400, codeBadRequest, "name")
	f.wantError(t, f.http, "POST", "/api/v1/topics", map[string]any{"name": "Orders", "readQueues": 0, "confirm": true}, 400, codeBadRequest, "readQueues")
	f.wantError(t, f.http, "POST", "/api/v1/topics", map[string]any{"name": "Orders", "perm": "X", "confirm": true}, 400, codeBadRequest, "perm")
	f.wantError(t, f.http, "POST", "/api/v1/topics", map[string]any{"name": "Orders", "queues": 3, "confirm": true}, 400, codeBadRequest, "body")

	// What another site's page could send: a text/plain body, a foreign Origin.
	for _, c := range []struct{ ctype, origin, field string }{
		{"text/plain", "", "Content-Type"},
		{"application/x-www-form-urlencoded", "", "Content-Type"},
		{"application/json", "http://evil.example", "Origin"},
	} {
		req, _ := http.NewRequest("POST", f.base+"/api/v1/topics", strings.NewReader(`{"name":"Orders","confirm":true}`))
		req.Header.Set("Content-Type", c.ctype)
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := f.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var doc errorDoc
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		want := map[string]int{"Content-Type": 400, "Origin": 403}[c.field]
		if err != nil || resp.StatusCode != want || doc.Field != c.field {
			t.Fatalf("cross-site shaped create (%+v) answered %d %+v %v", c, resp.StatusCode, doc, err)
		}
	}
	f.wantError(t, f.http, "GET", "/api/v1/topics/Orders", nil, 404, codeNotFound, "topic")

	created := f.ok(t, "POST", "/api/v1/topics", map[string]any{"name": "Orders", "readQueues": 2, "writeQueues": 2, "confirm": true})
	if rs := created["results"].([]any); len(rs) != 1 || rs[0].(map[string]any)["ok"] != true {
		t.Fatalf("create: %v", created)
	}
	f.wantError(t, f.http, "POST", "/api/v1/topics", map[string]any{"name": "Orders", "confirm": true}, 400, codeBadRequest, "name")
	eventually(t, 10*time.Second, "Orders in the topic list", func() bool {
		for _, tp := range f.ok(t, "GET", "/api/v1/topics", nil)["topics"].([]any) {
			if m := tp.(map[string]any); m["name"] == "Orders" && m["readQueues"] == 2.0 && m["system"] == false {
				return true
			}
		}
		return false
	})
	// Update only the perm: the queue counts stay.
	f.wantError(t, f.http, "PATCH", "/api/v1/topics/Orders", map[string]any{"perm": "R"}, 400, codeConfirmation, "confirm")
	f.wantError(t, f.http, "PATCH", "/api/v1/topics/Orders", map[string]any{"confirm": true}, 400, codeBadRequest, "body")
	up := f.ok(t, "PATCH", "/api/v1/topics/Orders", map[string]any{"perm": "R", "confirm": true})
	ch := up["changes"].([]any)[0].(map[string]any)
	if after := ch["after"].(map[string]any); ch["changed"] != true || after["perm"] != "R" || after["readQueues"] != 2.0 || after["writeQueues"] != 2.0 {
		t.Fatalf("update perm: %v", up)
	}
	f.ok(t, "PATCH", "/api/v1/topics/Orders", map[string]any{"perm": "RW", "confirm": true})

	// Messages into queue 1, a consumer offset of 1 for group g1.
	leaderAddr := f.ClientAddr[leader]
	var offsetIDs []string
	for i := range 3 {
		offsetIDs = append(offsetIDs, f.send(t, leaderAddr, "Orders", 1, fmt.Sprintf("order-%d", i), fmt.Sprintf(`{"order":%d}`, i), sign.Credentials{}))
	}
	f.heartbeat(t, leaderAddr, "g1", sign.Credentials{})
	f.commitOffset(t, leaderAddr, "g1", "Orders", 1, 1, sign.Credentials{})
	eventually(t, 10*time.Second, "queue 1 of Orders holding offsets 0..3", func() bool {
		for _, q := range f.ok(t, "GET", "/api/v1/topics/Orders", nil)["queues"].([]any) {
			if m := q.(map[string]any); m["queueId"] == 1.0 {
				return m["maxOffset"] == 3.0 && m["minOffset"] == 0.0
			}
		}
		return false
	})

	// Search by key, by both msgId kinds, by queue offset and by time.
	found := f.ok(t, "GET", "/api/v1/messages?topic=Orders&key=order-2", nil)["messages"].([]any)
	if len(found) != 1 || found[0].(map[string]any)["keys"] != "order-2" || found[0].(map[string]any)["queueOffset"] != 2.0 {
		t.Fatalf("by key: %v", found)
	}
	if ms := f.ok(t, "GET", "/api/v1/messages?topic=Orders&key=nothing-here", nil)["messages"].([]any); len(ms) != 0 {
		t.Fatalf("unknown key found %v", ms)
	}
	byOffsetID := f.ok(t, "GET", "/api/v1/messages?msgId="+offsetIDs[1], nil)["messages"].([]any)
	if len(byOffsetID) != 1 || byOffsetID[0].(map[string]any)["keys"] != "order-1" {
		t.Fatalf("by offset msgId: %v", byOffsetID)
	}
	byUniq := f.ok(t, "GET", "/api/v1/messages?topic=Orders&msgId="+uniqKey("order-0"), nil)["messages"].([]any)
	if len(byUniq) != 1 || byUniq[0].(map[string]any)["uniqKey"] != uniqKey("order-0") {
		t.Fatalf("by UNIQ_KEY: %v", byUniq)
	}
	atOffset := f.ok(t, "GET", "/api/v1/messages?topic=Orders&brokerName=broker-a&queueId=1&offset=2", nil)["messages"].([]any)
	if len(atOffset) != 1 || atOffset[0].(map[string]any)["keys"] != "order-2" {
		t.Fatalf("at queue offset: %v", atOffset)
	}
	now := time.Now().UnixMilli()
	inRange := f.ok(t, "GET", fmt.Sprintf("/api/v1/messages?topic=Orders&begin=%d&end=%d", now-60_000, now+1000), nil)["messages"].([]any)
	if len(inRange) != 3 {
		t.Fatalf("in the last minute: %d messages: %v", len(inRange), inRange)
	}
	if ms := f.ok(t, "GET", fmt.Sprintf("/api/v1/messages?topic=Orders&begin=%d&end=%d", now-3_600_000, now-3_000_000), nil)["messages"].([]any); len(ms) != 0 {
		t.Fatalf("an hour ago: %v", ms)
	}
	// One message whole: body, properties, every replica at the same offset.
	m := f.ok(t, "GET", "/api/v1/messages/"+offsetIDs[2], nil)
	if m["bodyText"] != `{"order":2}` || m["bodyIsText"] != true || m["properties"].(map[string]any)["KEYS"] != "order-2" || m["brokerName"] != "broker-a" {
		t.Fatalf("message: %v", m)
	}
	eventually(t, 10*time.Second, "the message on all three replicas", func() bool {
		m := f.ok(t, "GET", "/api/v1/messages/"+offsetIDs[2], nil)
		rs := m["replicas"].([]any)
		stored := 0
		for _, r := range rs {
			if r := r.(map[string]any); r["stored"] == true && r["commitLogOffset"] == m["commitLogOffset"] {
				stored++
			}
		}
		return len(rs) == 3 && stored == 3
	})
	// Malformed and unknown input.
	f.wantError(t, f.http, "GET", "/api/v1/messages?msgId=xyz", nil, 400, codeBadRequest, "msgId")
	f.wantError(t, f.http, "GET", "/api/v1/messages?msgId="+strings.Repeat("Z", 32), nil, 400, codeBadRequest, "msgId")
	f.wantError(t, f.http, "GET", "/api/v1/messages/"+strings.Repeat("0", 32)+"?topic=Orders", nil, 404, codeNotFound, "msgId")
	f.wantError(t, f.http, "GET", "/api/v1/messages?topic=Nope&key=k", nil, 404, codeNotFound, "topic")
	f.wantError(t, f.http, "GET", "/api/v1/messages?topic=Orders&brokerName=broker-a&queueId=x&offset=1", nil, 400, codeBadRequest, "queueId")
	f.wantError(t, f.http, "GET", "/api/v1/messages", nil, 400, codeBadRequest, "query")
	f.wantError(t, f.http, "GET", "/api/v1/nope", nil, 404, codeNotFound, "")
	f.wantError(t, f.http, "PUT", "/api/v1/cluster", nil, 405, codeMethodNotAllowed, "")

	// Group g1: lag 2 on queue 1; reset preview and reset to the beginning.
	eventually(t, 10*time.Second, "g1 with lag 2", func() bool {
		code, gd := f.do(t, f.http, "GET", "/api/v1/groups/g1", nil)
		return code == 200 && gd["lag"] == 2.0
	})
	f.wantError(t, f.http, "GET", "/api/v1/groups/nobody", nil, 404, codeNotFound, "group")
	f.wantError(t, f.http, "POST", "/api/v1/groups/g1/reset-preview", map[string]any{"topic": "Orders"}, 400, codeBadRequest, "timestamp")
	f.wantError(t, f.http, "POST", "/api/v1/groups/g1/reset-preview", map[string]any{"topic": "Nope", "timestamp": 0}, 404, codeNotFound, "topic")
	pv := f.ok(t, "POST", "/api/v1/groups/g1/reset-preview", map[string]any{"topic": "Orders", "timestamp": 0})
	if pv["lagBefore"] != 2.0 || pv["lagAfter"] != 3.0 || !strings.Contains(pv["summary"].(string), "re-consume 1") {
		t.Fatalf("reset preview: %v", pv)
	}
	f.wantError(t, f.http, "POST", "/api/v1/groups/g1/reset", map[string]any{"topic": "Orders", "timestamp": 0}, 400, codeConfirmation, "confirm")
	if gd := f.ok(t, "GET", "/api/v1/groups/g1", nil); gd["lag"] != 2.0 {
		t.Fatalf("an unconfirmed reset moved the offsets: %v", gd)
	}
	f.ok(t, "POST", "/api/v1/groups/g1/reset", map[string]any{"topic": "Orders", "timestamp": 0, "confirm": true})
	eventually(t, 10*time.Second, "g1 reset to lag 3", func() bool { return f.ok(t, "GET", "/api/v1/groups/g1", nil)["lag"] == 3.0 })
	var listed bool
	for _, x := range f.ok(t, "GET", "/api/v1/groups", nil)["groups"].([]any) {
		listed = listed || x.(map[string]any)["name"] == "g1"
	}
	if !listed {
		t.Fatal("g1 missing from the group list")
	}

	// Raft: previews, the confirmation rule, a transfer seen on the stream
	// and in the timeline with its cause.
	var target string
	for id := range f.ClientAddr {
		if id != leader {
			target = id
			break
		}
	}
	rp := f.ok(t, "POST", "/api/v1/raft/broker-a/preview", map[string]any{"op": "remove", "id": target})
	if rp["votersAfter"] != 2.0 || !strings.Contains(rp["summary"].(string), "the group will have 2 voters; one more failure loses the quorum") {
		t.Fatalf("remove preview: %v", rp)
	}
	f.wantError(t, f.http, "POST", "/api/v1/raft/broker-a/preview", map[string]any{"op": "explode"}, 400, codeBadRequest, "op")
	f.wantError(t, f.http, "POST", "/api/v1/raft/broker-a/preview", map[string]any{"op": "remove", "id": "n9"}, 404, codeNotFound, "id")
	f.wantError(t, f.http, "POST", "/api/v1/raft/broker-z/preview", map[string]any{"op": "snapshot"}, 404, codeNotFound, "brokerName")
	f.wantError(t, f.http, "POST", "/api/v1/raft/broker-a/transfer-leader", map[string]any{"id": target}, 400, codeConfirmation, "confirm")
	if got := f.waitLeader(t); got != leader {
		t.Fatalf("an unconfirmed transfer moved leadership from %s to %s", leader, got)
	}
	f.ok(t, "POST", "/api/v1/raft/broker-a/transfer-leader", map[string]any{"id": target, "confirm": true})
	f.sse(t, f.http, 15*time.Second, func(name string, data map[string]any) bool {
		if name != "cluster" {
			return false
		}
		g, _ := nodesOf(data)
		return g != nil && g["leader"] == target
	})
	eventually(t, 10*time.Second, "the transfer in the timeline", func() bool {
		evs := f.ok(t, "GET", "/api/v1/timeline?brokerName=broker-a", nil)["events"].([]any)
		for _, e := range evs {
			if e := e.(map[string]any); e["leader"] == target && e["cause"] == "leadership_transfer" && e["previousLeader"] == leader {
				return true
			}
		}
		return false
	})
	// Membership: remove a follower, add it back as a non-voter, promote it.
	follower := otherThan(f, target)
	f.wantError(t, f.http, "POST", "/api/v1/raft/broker-a/remove", map[string]any{"id": follower}, 400, codeConfirmation, "confirm")
	f.ok(t, "POST", "/api/v1/raft/broker-a/remove", map[string]any{"id": follower, "confirm": true})
	suffrage := func() map[string]string {
		out := map[string]string{}
		for _, p := range f.ok(t, "GET", "/api/v1/raft/broker-a", nil)["servers"].([]any) {
			p := p.(map[string]any)
			out[p["id"].(string)] = p["suffrage"].(string)
		}
		return out
	}
	if s := suffrage(); len(s) != 2 || s[follower] != "" {
		t.Fatalf("after removing %s: %v", follower, s)
	}
	f.wantError(t, f.http, "POST", "/api/v1/raft/broker-a/add-nonvoter", map[string]any{"id": follower, "confirm": true}, 400, codeBadRequest, "address")
	f.ok(t, "POST", "/api/v1/raft/broker-a/add-nonvoter", map[string]any{"id": follower, "address": f.RaftAddr[follower], "confirm": true})
	if s := suffrage(); s[follower] != "Nonvoter" {
		t.Fatalf("after add-nonvoter %s: %v", follower, s)
	}
	pv = f.ok(t, "POST", "/api/v1/raft/broker-a/preview", map[string]any{"op": "add-voter", "id": follower, "address": f.RaftAddr[follower]})
	if pv["votersAfter"] != 3.0 || !strings.Contains(pv["summary"].(string), "promotes non-voter "+follower) {
		t.Fatalf("promote preview: %v", pv)
	}
	f.ok(t, "POST", "/api/v1/raft/broker-a/add-voter", map[string]any{"id": follower, "address": f.RaftAddr[follower], "confirm": true})
	if s := suffrage(); len(s) != 3 || s[follower] != "Voter" {
		t.Fatalf("after add-voter %s: %v", follower, s)
	}
	f.waitLeader(t)

	snap := f.ok(t, "POST", "/api/v1/raft/broker-a/snapshot", map[string]any{"confirm": true})
	if len(snap["snapshots"].([]any)) != 3 {
		t.Fatalf("snapshot: %v", snap)
	}

	// Series: lag per node, the group's throughput, fsync latency and the
	// consumer lag were sampled.
	eventually(t, 15*time.Second, "every series sampled", func() bool {
		names := map[string]bool{}
		for _, s := range f.ok(t, "GET", "/api/v1/series", nil)["series"].([]any) {
			s := s.(map[string]any)
			if len(s["points"].([]any)) > 0 {
				names[s["name"].(string)] = true
			}
			for _, p := range s["points"].([]any) {
				if s["name"] == "messagesInPerSec" && p.([]any)[1].(float64) > 0 {
					names["throughput seen"] = true
				}
			}
		}
		for _, want := range []string{"throughput seen", "replicationLagEntries", "replicationLagBytes", "messagesInPerSec", "consumerLag", "fsyncLatencyMs"} {
			if !names[want] {
				return false
			}
		}
		return true
	})
	// The rates of Orders: 3 messages were written and none since, so in/s is
	// known and zero by now (two samples apart).
	eventually(t, 15*time.Second, "Orders' rates sampled", func() bool {
		d := f.ok(t, "GET", "/api/v1/topics/Orders", nil)
		return d["inPerSec"] != nil && d["outPerSec"] != nil
	})
	f.wantError(t, f.http, "GET", "/api/v1/series?since=yesterday", nil, 400, codeBadRequest, "since")

	// Kill the leader: the stream shows a new leader and a higher term
	// within 5 s, the old leader stays on the page as DOWN with its error,
	// and the survivors log the election.
	victim := target
	_, before := nodesOf(f.ok(t, "GET", "/api/v1/cluster", nil))
	oldTerm := before[victim]["term"].(float64)
	f.Procs[victim].Kill()
	killed := time.Now()
	var newLeader string
	var elected []map[string]any // leadership events after the kill
	f.sse(t, f.http, 5*time.Second, func(name string, data map[string]any) bool {
		switch name {
		case "leadership":
			if data["previousLeader"] == victim && data["leader"] != "" && data["leader"] != victim {
				elected = append(elected, data)
			}
		case "cluster":
			g, _ := nodesOf(data)
			if newLeader == "" && g != nil && g["leader"] != "" && g["leader"] != victim && g["term"].(float64) > oldTerm {
				newLeader = g["leader"].(string)
				t.Logf("new leader %s on the stream %s after the kill", newLeader, time.Since(killed).Round(time.Millisecond))
			}
		}
		return newLeader != "" && len(elected) > 0
	})
	if elected[0]["brokerName"] != "broker-a" || elected[0]["term"].(float64) <= oldTerm {
		t.Fatalf("leadership event: %v", elected[0])
	}
	eventually(t, 10*time.Second, "the election in the timeline", func() bool {
		for _, e := range f.ok(t, "GET", "/api/v1/timeline", nil)["events"].([]any) {
			if e := e.(map[string]any); e["leader"] == newLeader && e["cause"] == "election_timeout" && e["previousLeader"] == victim {
				return true
			}
		}
		return false
	})
	eventually(t, 20*time.Second, victim+" shown down", func() bool {
		code, doc := f.do(t, f.http, "GET", "/api/v1/cluster", nil)
		if code != 200 {
			return false
		}
		_, nodes := nodesOf(doc)
		down := 0
		for _, n := range nodes {
			if n["up"] == false && n["role"] == "DOWN" && n["error"] != "" && n["addr"] == f.ClientAddr[victim] {
				down++
			}
		}
		return down == 1 && len(nodes) == 3
	})
	m = f.ok(t, "GET", "/api/v1/messages/"+offsetIDs[2], nil)
	stored, downSeen := 0, false
	for _, r := range m["replicas"].([]any) {
		r := r.(map[string]any)
		if r["stored"] == true {
			stored++
		}
		downSeen = downSeen || (r["addr"] == f.ClientAddr[victim] && r["up"] == false && r["error"] != "")
	}
	if stored != 2 || !downSeen {
		t.Fatalf("replicas with %s down: %v", victim, m["replicas"])
	}
	rp = f.ok(t, "POST", "/api/v1/raft/broker-a/preview", map[string]any{"op": "remove", "id": otherThan(f, victim)})
	if !strings.Contains(rp["summary"].(string), "lost its quorum") {
		t.Fatalf("removing a live voter with one down: %v", rp)
	}
	f.ok(t, "GET", "/api/v1/topics", nil)
	f.ok(t, "GET", "/api/v1/groups", nil)

	// Removing the dead node from the group takes it off the page.
	f.ok(t, "POST", "/api/v1/raft/broker-a/remove", map[string]any{"id": victim, "confirm": true})
	eventually(t, 10*time.Second, victim+" off the page after its removal", func() bool {
		g, nodes := nodesOf(f.ok(t, "GET", "/api/v1/cluster", nil))
		_, present := nodes[victim]
		return len(nodes) == 2 && !present && g["voters"] == 2.0
	})
}

func otherThan(f *fixture, not ...string) string {
	for id := range f.ClientAddr {
		skip := false
		for _, n := range not {
			skip = skip || id == n
		}
		if !skip {
			return id
		}
	}
	return ""
}

// The page itself is served from the embedded dist, with a policy that
// forbids loading anything from another host.
func TestAssetsServeIndexForUnknownPaths(t *testing.T) {
	h := assets()
	for _, p := range []string{"/", "/topics/Orders", "/index.html"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		if p == "/index.html" {
			continue // the file server redirects it to /
		}
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "rocketraft console") {
			t.Fatalf("%s: %d %s", p, rec.Code, rec.Body.String())
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Fatalf("%s: CSP %q", p, csp)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST /: %d", rec.Code)
	}
}
