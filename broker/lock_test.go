package broker

import (
	"slices"

	"github.com/rocketraft/rocketraft/broker/replica"

	"encoding/json"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/transport"
)

var (
	mq0 = clients.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 0}
	mq1 = clients.MessageQueue{Topic: "T", BrokerName: "broker-a", QueueID: 1}
)

func lockBody(t *testing.T, group, client string, mqs ...clients.MessageQueue) []byte {
	t.Helper()
	b, err := json.Marshal(struct {
		ConsumerGroup string                 `json:"consumerGroup"`
		ClientID      string                 `json:"clientId"`
		MQSet         []clients.MessageQueue `json:"mqSet"`
	}{group, client, mqs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// registryComplete makes the broker's client registry old enough to list every
// live client, so a lock is granted during the term's grace window when the
// requester is the group's only client.
func registryComplete(b *Broker) {
	b.clients.SetCollectingSince(time.Now().Add(-time.Hour))
}

func TestLockBatchOverTheWire(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	registryComplete(tb.b)
	r := tb.call(t, transport.LockBatchMQ, nil, lockBody(t, "g", "A", mq0, mq1))
	if r.ResponseCode() != transport.Success {
		t.Fatalf("lock: %v %s", r.ResponseCode(), r.Remark)
	}
	var ans struct {
		LockOKMQSet []clients.MessageQueue `json:"lockOKMQSet"`
	}
	if err := json.Unmarshal(r.Body, &ans); err != nil || !slices.Equal(ans.LockOKMQSet, []clients.MessageQueue{mq0, mq1}) {
		t.Fatalf("lock answer %s (%v)", r.Body, err)
	}
	r = tb.call(t, transport.LockBatchMQ, nil, lockBody(t, "g", "B", mq0, mq1))
	if err := json.Unmarshal(r.Body, &ans); err != nil || len(ans.LockOKMQSet) != 0 {
		t.Fatalf("B's lock answer %s (%v), want none", r.Body, err)
	}
	if r := tb.call(t, transport.UnlockBatchMQ, nil, lockBody(t, "g", "A", mq1)); r.ResponseCode() != transport.Success {
		t.Fatalf("unlock: %v %s", r.ResponseCode(), r.Remark)
	}
	r = tb.call(t, transport.LockBatchMQ, nil, lockBody(t, "g", "B", mq0, mq1))
	if err := json.Unmarshal(r.Body, &ans); err != nil || !slices.Equal(ans.LockOKMQSet, []clients.MessageQueue{mq1}) {
		t.Fatalf("B after A unlocked mq1: %s (%v)", r.Body, err)
	}
	if r := tb.call(t, transport.LockBatchMQ, nil, []byte(`{"consumerGroup":"g"}`)); r.ResponseCode() != transport.InvalidParameter {
		t.Fatalf("lock without clientId: %v %s", r.ResponseCode(), r.Remark)
	}
}

func TestLockOnFollowerIsForwarded(t *testing.T) {
	leader := startTestBroker(t, replica.RoleLeader, nil)
	follower := startTestBroker(t, replica.RoleFollower, []Peer{{ID: "n0", ClientAddr: leader.b.Addr()}, {ID: "n1"}})
	registryComplete(leader.b)
	r := follower.call(t, transport.LockBatchMQ, nil, lockBody(t, "g", "A", mq0))
	if r.ResponseCode() != transport.Success {
		t.Fatalf("lock via follower: %v %s", r.ResponseCode(), r.Remark)
	}
	if who, ok := leader.b.clients.LockedBy("g", mq0, time.Now()); !ok || who != "A" {
		t.Fatalf("leader's table after a forwarded lock: %q %v", who, ok)
	}
	if _, ok := follower.b.clients.LockedBy("g", mq0, time.Now()); ok {
		t.Fatal("the follower kept a lock of its own")
	}
}
