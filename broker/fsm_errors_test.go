package broker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/nameserver"
)

// deleteBeforePut is a real node replica that deletes the topic through raft
// just before a send replicates: the broker checked the topic, the FSM finds it
// gone. It records the FSM's own error.
type deleteBeforePut struct {
	replica.Replica
	topic string

	mu  sync.Mutex
	err error
}

func (d *deleteBeforePut) PutMessages(ctx context.Context, recs [][]byte) ([]fsm.MessageResult, error) {
	if err := d.DeleteTopic(ctx, d.topic); err != nil {
		return nil, err
	}
	res, err := d.Replica.PutMessages(ctx, recs)
	d.mu.Lock()
	d.err = err
	d.mu.Unlock()
	return res, err
}

// TestFSMTopicRefusalReachesTheGoClientAsTopicNotExist: a topic deleted between
// the broker's check and the FSM's apply is refused per message by the FSM
// (fsm.ErrTopicNotFound). Before the error table listed fsm's errors the client
// got SYSTEM_ERROR (1); it must get TOPIC_NOT_EXIST (17), from a real raft node
// through the real Go client.
func TestFSMTopicRefusalReachesTheGoClientAsTopicNotExist(t *testing.T) {
	group := testcluster.New(t, 1, testcluster.Options{FastTimings: true})
	const topic = "Vanishing"
	group.CreateTopic(topic, 4)
	leader := group.WaitLeader(10 * time.Second)

	ns := startNameserver(t, nameserver.Config{})

	rep := &deleteBeforePut{Replica: replica.NewNode(leader.Node(), replica.NodeOptions{}), topic: topic}
	addr := proctest.TestAddr(t)
	b, err := New(Config{
		ClusterName: "c", BrokerName: "broker-a", ListenAddr: addr, ClientAddr: addr,
		NamesrvAddrs: []string{ns.Addr()}, SelfID: string(leader.ID), Peers: []Peer{{ID: string(leader.ID), ClientAddr: addr}},
	}, leader.Node().Store(), rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	waitRoute(t, ns.Addr(), topic, nil)

	p, err := rocketmq.NewProducer(producer.WithNameServer([]string{ns.Addr()}), producer.WithGroupName("PG_vanishing"),
		producer.WithInstanceName("vanishing"), producer.WithRetry(0), producer.WithSendMsgTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })

	_, err = p.SendSync(context.Background(), primitive.NewMessage(topic, []byte("gone before it landed")))
	rep.mu.Lock()
	fsmErr := rep.err
	rep.mu.Unlock()
	if !errors.Is(fsmErr, fsm.ErrTopicNotFound) {
		t.Fatalf("the FSM answered %v, want fsm.ErrTopicNotFound (the test did not reach the apply path)", fsmErr)
	}
	if err == nil || !strings.Contains(err.Error(), "CODE: 17,") {
		t.Fatalf("Go client got %v, want CODE: 17 (TOPIC_NOT_EXIST)", err)
	}
}
