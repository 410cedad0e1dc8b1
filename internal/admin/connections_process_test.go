package admin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

// TestConnectionsAndGroupUpdateAgainstProcesses drives connections consumer,
// connections producer, group update and group delete through the CLI
// against a real three-node group, and checks the parsed JSON they print.
func TestConnectionsAndGroupUpdateAgainstProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the process-level admin test")
	}
	pc := startProcessCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	pc.eventually(t, 20*time.Second, func(out string) bool { return strings.Count(out, "LEADER ") >= 1 }, "cluster")
	pc.eventually(t, 20*time.Second, func(out string) bool { return strings.Contains(out, "OK") }, "topic", "create", "ConnT", "-r", "1", "-w", "1")
	pc.eventually(t, 10*time.Second, func(out string) bool { return strings.Contains(out, "ConnT") }, "topic", "route", "ConnT")

	// One client heartbeats every node as consumer cg1 (on ConnT) and producer pg1.
	body := `{"clientID":"conn-test@7","producerDataSet":[{"groupName":"pg1"}],"consumerDataSet":[{"groupName":"cg1",` +
		`"consumeType":"CONSUME_PASSIVELY","messageModel":"BROADCASTING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET",` +
		`"subscriptionDataSet":[{"topic":"ConnT","subString":"a || b","tagsSet":["a","b"],"expressionType":"TAG"}],"unitMode":false}]}`
	for _, addr := range pc.clientAddr {
		pc.invoke(ctx, t, addr, transport.NewRequest(transport.HeartBeat, nil, []byte(body)))
	}

	var cc ConsumerConnections
	out := pc.admin(t, "connections", "consumer", "cg1", "-o", "json")
	if err := json.Unmarshal([]byte(out), &cc); err != nil {
		t.Fatalf("connections consumer: %v\n%s", err, out)
	}
	if cc.Group != "cg1" || len(cc.Connections) != 1 || cc.Connections[0].ClientID != "conn-test@7" || cc.Connections[0].ClientAddr == "" ||
		cc.Connections[0].BrokerGroup != "broker-a" || cc.MessageModel != "BROADCASTING" || cc.ConsumeFromWhere != "CONSUME_FROM_LAST_OFFSET" ||
		len(cc.Subscriptions) != 1 || cc.Subscriptions[0].Topic != "ConnT" || strings.Join(cc.Subscriptions[0].TagsSet, ",") != "a,b" {
		t.Fatalf("connections consumer cg1: %+v", cc)
	}
	text := pc.admin(t, "connections", "consumer", "-g", "cg1")
	mustContain(t, text, "conn-test@7", "messageModel BROADCASTING", "subscribes ConnT TAG a || b")
	if out, err := pc.run("connections", "consumer", "nobody"); err == nil || !strings.Contains(out, `"nobody"`) {
		t.Fatalf("connections consumer of an offline group: %v\n%s", err, out)
	}

	var pd struct {
		ProducerGroup string       `json:"producerGroup"`
		Connections   []Connection `json:"connections"`
	}
	out = pc.admin(t, "connections", "producer", "pg1", "-t", "ConnT", "-o", "json")
	if err := json.Unmarshal([]byte(out), &pd); err != nil {
		t.Fatalf("connections producer: %v\n%s", err, out)
	}
	if pd.ProducerGroup != "pg1" || len(pd.Connections) != 1 || pd.Connections[0].ClientID != "conn-test@7" {
		t.Fatalf("connections producer pg1: %+v", pd)
	}
	if out, err := pc.run("connections", "producer", "pg1"); err == nil || !strings.Contains(out, "-t/--topic") {
		t.Fatalf("connections producer without -t: %v\n%s", err, out)
	}
	if out, err := pc.run("connections", "producer", "nope", "-t", "ConnT"); err == nil || !strings.Contains(out, `"nope"`) {
		t.Fatalf("connections producer of an unknown group: %v\n%s", err, out)
	}

	// group update creates from the defaults, then changes only what is given.
	type updated struct {
		Result string            `json:"result"`
		After  SubscriptionGroup `json:"after"`
	}
	parse := func(out string) updated {
		t.Helper()
		var us []updated
		if err := json.Unmarshal([]byte(out), &us); err != nil || len(us) != 1 {
			t.Fatalf("group update: %v\n%s", err, out)
		}
		return us[0]
	}
	u := parse(pc.admin(t, "group", "update", "cg2", "--max-retries", "3", "-o", "json"))
	if u.Result != "created" || u.After.RetryMaxTimes != 3 || u.After.RetryQueueNums != 1 || !u.After.ConsumeBroadcastEnable || !u.After.ConsumeEnable {
		t.Fatalf("group update cg2 --max-retries 3: %+v", u)
	}
	u = parse(pc.admin(t, "group", "update", "-g", "cg2", "--broadcast=false", "--orderly", "--retry-queues", "2", "-o", "json"))
	if u.Result != "updated" || u.After.RetryMaxTimes != 3 || u.After.RetryQueueNums != 2 || u.After.ConsumeBroadcastEnable || !u.After.ConsumeMessageOrderly {
		t.Fatalf("group update cg2 --broadcast=false --orderly --retry-queues 2: %+v", u)
	}
	listed := func() map[string]SubscriptionGroup {
		var gs []SubscriptionGroup
		out := pc.admin(t, "group", "list", "-o", "json")
		if err := json.Unmarshal([]byte(out), &gs); err != nil {
			t.Fatalf("group list: %v\n%s", err, out)
		}
		m := map[string]SubscriptionGroup{}
		for _, g := range gs {
			m[g.Name] = g
		}
		return m
	}
	if g := listed()["cg2"]; g.RetryMaxTimes != 3 || g.RetryQueueNums != 2 || g.ConsumeBroadcastEnable || !g.ConsumeMessageOrderly {
		t.Fatalf("group list after update: cg2 = %+v", g)
	}
	if out, err := pc.run("group", "update", "cg2", "--retry-queues", "-1"); err == nil || !strings.Contains(out, "--retry-queues=-1") {
		t.Fatalf("group update with a negative retry-queues: %v\n%s", err, out)
	}
	mustContain(t, pc.admin(t, "group", "delete", "cg2", "--clean-offsets"), "group delete cg2", "OK")
	if g, ok := listed()["cg2"]; ok {
		t.Fatalf("group list after delete still has cg2: %+v", g)
	}
}
