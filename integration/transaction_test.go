package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// txListener decides by body prefix: "commit-" commits, "rollback-" rolls back,
// "unknown-" answers unknown (left to the check-back, which then commits). A
// check-back answers commit for "unknown-" and "kill-" bodies and the original
// decision for the others. onExec, when set, runs before each local transaction
// returns (the leader-kill test kills the leader there).
type txListener struct {
	mu     sync.Mutex
	checks map[string]int // body → check-backs received
	onExec func(body string)
}

func newTxListener() *txListener { return &txListener{checks: map[string]int{}} }

func (l *txListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	body := string(m.Body)
	if l.onExec != nil {
		l.onExec(body)
	}
	switch {
	case strings.HasPrefix(body, "commit-"), strings.HasPrefix(body, "kill-"):
		return primitive.CommitMessageState
	case strings.HasPrefix(body, "rollback-"):
		return primitive.RollbackMessageState
	}
	return primitive.UnkonwnState
}

func (l *txListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	body := string(m.Body)
	l.mu.Lock()
	l.checks[body]++
	l.mu.Unlock()
	if strings.HasPrefix(body, "rollback-") {
		return primitive.RollbackMessageState
	}
	return primitive.CommitMessageState
}

func (l *txListener) checked(body string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checks[body]
}

// newTxProducer starts a transaction producer with its own group and instance (the
// client answers a check-back only for its own group).
func newTxProducer(t *testing.T, c *cluster, l *txListener) rocketmq.TransactionProducer {
	t.Helper()
	p, err := rocketmq.NewTransactionProducer(l,
		producer.WithNameServer([]string{c.nsAddr}),
		producer.WithGroupName(unique(t, "TPG")),
		producer.WithInstanceName(unique(t, "tpi")),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(5*time.Second),
	)
	if err != nil {
		t.Fatalf("new transaction producer: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("start transaction producer: %v", err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

// sendTx sends one transactional message per body and checks the send result the
// client acted on: a UNIQ_KEY msgId and a half offset.
func sendTx(t *testing.T, p rocketmq.TransactionProducer, topic string, bodies []string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, b := range bodies {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := p.SendMessageInTransaction(ctx, primitive.NewMessage(topic, []byte(b)))
		cancel()
		if err != nil {
			t.Fatalf("transactional send %q: %v", b, err)
		}
		if res.Status != primitive.SendOK || res.MsgID == "" || len(res.OffsetMsgID) < 32 {
			t.Fatalf("transactional send %q: status %v msgId %q offsetMsgId %q", b, res.Status, res.MsgID, res.OffsetMsgID)
		}
		ids[b] = res.MsgID
	}
	return ids
}

// checkMsgIDs: what arrived carries the producer's MsgId and the real topic.
func checkMsgIDs(t *testing.T, col *collector, topic string, ids map[string]string) {
	t.Helper()
	msgs, _ := col.snapshot()
	for _, m := range msgs {
		if want, ok := ids[string(m.Body)]; ok && m.MsgId != want {
			t.Errorf("%s arrived with MsgId %s, the producer was told %s", m.Body, m.MsgId, want)
		}
		if m.Topic != topic {
			t.Errorf("%s arrived on topic %s", m.Body, m.Topic)
		}
	}
}

// TestTransactionCommitAndRollback: committed messages are consumed exactly once,
// rolled-back ones never, and no half message reaches the real topic.
func TestTransactionCommitAndRollback(t *testing.T) {
	c := shared(t)
	topic := unique(t, "TX")
	l := newTxListener()
	p := newTxProducer(t, c, l)
	commits, rollbacks := bodies("commit-", 10), bodies("rollback-", 10)
	var all []string
	for i := range commits {
		all = append(all, commits[i], rollbacks[i])
	}
	ids := sendTx(t, p, topic, all)
	col := newCollector()
	newPushConsumer(t, c, unique(t, "CG"), topic, selectAll, col, consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	col.expectExactly(t, "transactions", commits, deliverTimeout, settle)
	checkMsgIDs(t, col, topic, ids)
}

// startTxCluster starts a private cluster whose check-back runs every second for
// half messages older than a second, instead of 30 s and 6 s. The check limit is
// raised to 100 so it outlasts the Go producer's first heartbeat to a follower (up
// to 30 s after it learns the route): checks count whether or not a producer is
// connected, as in Java, and 15 one-second rounds would discard the message first.
func startTxCluster(t *testing.T) *cluster {
	t.Helper()
	c := startCluster(t)
	for i, n := range c.nodes {
		n.Stop(10 * time.Second)
		path := filepath.Join(c.dir, "conf", fmt.Sprintf("n%d.conf", i))
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteString("transactionTimeOut=1000\ntransactionCheckInterval=1000\ntransactionCheckMax=100\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range c.nodes {
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.waitLeader(30*time.Second, "", groupSize); err != nil {
		t.Fatalf("no leader after the restart with short check-back timings: %v", err)
	}
	return c
}

// TestTransactionUnknownIsCheckedBack: a transaction left unknown is asked about
// by the broker; the listener's commit answer delivers it once.
func TestTransactionUnknownIsCheckedBack(t *testing.T) {
	requireLong(t)
	c := startTxCluster(t)
	topic := unique(t, "TXU")
	l := newTxListener()
	p := newTxProducer(t, c, l)
	unknown, rollbacks := bodies("unknown-", 5), bodies("rollback-", 3)
	ids := sendTx(t, p, topic, append(rollbacks, unknown...))
	col := newCollector()
	newPushConsumer(t, c, unique(t, "CG"), topic, selectAll, col, consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	col.expectExactly(t, "checked-back transactions", unknown, 30*time.Second, 3*time.Second)
	checkMsgIDs(t, col, topic, ids)
	for _, b := range unknown {
		if l.checked(b) == 0 {
			t.Errorf("%s was delivered without a check-back", b)
		}
	}
	if n := l.checked(rollbacks[0]); n != 0 {
		t.Errorf("a rolled-back transaction was checked %d times", n)
	}
}

// TestTransactionSurvivesLeaderKill: transactions committed before a SIGKILL of
// the leader are not delivered again by the new leader; a transaction whose half
// message was acknowledged but whose END_TRANSACTION went to the dead leader is
// asked about by the new leader and, committed, delivered exactly once.
func TestTransactionSurvivesLeaderKill(t *testing.T) {
	requireLong(t)
	c := startTxCluster(t)
	topic := unique(t, "TXK")
	l := newTxListener()
	var killed string
	l.onExec = func(body string) {
		if !strings.HasPrefix(body, "kill-") {
			return
		}
		leader, err := c.waitLeader(5*time.Second, "", groupSize)
		if err != nil {
			t.Errorf("no leader to kill: %v", err)
			return
		}
		killed = c.clientAddrs[leader]
		c.nodes[leader].Kill()
		if _, err := c.waitLeader(30*time.Second, killed, 2); err != nil {
			t.Errorf("no new leader after killing n%d: %v", leader, err)
		}
	}
	p := newTxProducer(t, c, l)
	before := bodies("commit-", 10)
	ids := sendTx(t, p, topic, append(append([]string{}, before...), bodies("rollback-", 5)...))
	col := newCollector()
	newPushConsumer(t, c, unique(t, "CG"), topic, selectAll, col, consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if !col.waitDistinct(len(before), deliverTimeout) {
		t.Fatalf("only %d of %d committed transactions arrived before the kill", col.distinct(), len(before))
	}
	for k, v := range sendTx(t, p, topic, []string{"kill-0000"}) {
		ids[k] = v
	}
	if killed == "" {
		t.Fatal("the leader was not killed")
	}
	want := append(append([]string{}, before...), "kill-0000")
	// The consumer and the producer find the new leader through route polls and
	// heartbeats (every 30 s in the Go client).
	col.expectExactly(t, "transactions across a leader kill", want, 90*time.Second, 5*time.Second)
	checkMsgIDs(t, col, topic, ids)
	if l.checked("kill-0000") == 0 {
		t.Error("the transaction interrupted by the kill was delivered without a check-back")
	}
}
