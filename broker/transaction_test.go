package broker

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// preparedExt is a Go client's transactional SEND header.
func preparedExt(topic string, queueID int, group, uniq string) map[string]string {
	ext := sendExt(topic, queueID, props(store.PropertyUniqKey, uniq, store.PropertyTransaction, "true",
		store.PropertyProducerGroup, group, store.PropertyDelayLevel, "3"))
	ext["producerGroup"] = group
	ext["sysFlag"] = strconv.Itoa(int(store.SysFlagTxPrepared))
	return ext
}

func endExt(group string, halfOffset int64, commitLogOffset int64, state int32) map[string]string {
	return map[string]string{"producerGroup": group, "tranStateTableOffset": strconv.FormatInt(halfOffset, 10),
		"commitLogOffset": strconv.FormatInt(commitLogOffset, 10), "commitOrRollback": strconv.Itoa(int(state)),
		"fromTransactionCheck": "false", "msgId": "U", "transactionId": "U"}
}

// sendPrepared sends a prepared message and returns the response's half offset
// and the commit log offset parsed from msgId, as the Go client does.
func sendPrepared(t *testing.T, tb *testBroker, topic string, queueID int, group, uniq string) (int64, int64) {
	t.Helper()
	r := tb.call(t, transport.SendMessage, preparedExt(topic, queueID, group, uniq), []byte("body-"+uniq))
	if r.ResponseCode() != transport.Success {
		t.Fatalf("prepared send: %d %s", r.Code, r.Remark)
	}
	_, off, err := store.ParseOffsetMsgID(r.ExtFields["msgId"])
	if err != nil || len(r.ExtFields["msgId"]) < 32 {
		t.Fatalf("msgId %q is not an offset id (the Go client would panic): %v", r.ExtFields["msgId"], err)
	}
	if r.ExtFields["transactionId"] != uniq || r.ExtFields["queueId"] != strconv.Itoa(queueID) {
		t.Fatalf("response ext %v", r.ExtFields)
	}
	qo, err := strconv.ParseInt(r.ExtFields["queueOffset"], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return qo, int64(off)
}

func TestPreparedSendCommitAndRollback(t *testing.T) {
	tb := startTestBroker(t, RoleLeader, nil)
	q0, off0 := sendPrepared(t, tb, "TxT", 2, "pg", "U0")
	q1, off1 := sendPrepared(t, tb, "TxT", 3, "pg", "U1")
	if q0 != 0 || q1 != 1 {
		t.Fatalf("half offsets %d %d, want 0 1", q0, q1)
	}
	half := readQueue(t, tb.st, transHalfTopic, 0)
	if len(half) != 2 {
		t.Fatalf("half queue holds %d messages", len(half))
	}
	p := store.ParseProperties(half[0].Properties)
	if p[store.PropertyRealTopic] != "TxT" || p[store.PropertyRealQueueID] != "2" || p[store.PropertyProducerGroup] != "pg" ||
		p[store.PropertyDelayLevel] != "" || half[0].SysFlag&store.SysFlagTxMask != 0 || int64(half[0].PhysicalOffset) != off0 {
		t.Fatalf("half message %+v props %v", half[0], p)
	}
	if n := len(readQueue(t, tb.st, "TxT", 2)); n != 0 {
		t.Fatalf("a prepared message reached its real queue (%d)", n)
	}
	// Mismatched checks are refused, as Java's checkPrepareMessage does.
	for name, ext := range map[string]map[string]string{
		"wrong group":  endExt("other", q0, off0, txCommitType),
		"wrong offset": endExt("pg", q1, off0, txCommitType),
		"not a half":   endExt("pg", q0, off0+1, txCommitType),
	} {
		if r := tb.call(t, transport.EndTransaction, ext, nil); r.ResponseCode() != transport.SystemError {
			t.Errorf("%s: code %d %s", name, r.Code, r.Remark)
		}
	}
	// Commit twice (a client retry, or a check-back answer racing the original).
	for i := range 2 {
		if r := tb.call(t, transport.EndTransaction, endExt("pg", q0, off0, txCommitType), nil); r.ResponseCode() != transport.Success {
			t.Fatalf("commit %d: %d %s", i, r.Code, r.Remark)
		}
	}
	got := readQueue(t, tb.st, "TxT", 2)
	if len(got) != 1 {
		t.Fatalf("real queue holds %d messages after two commits, want 1", len(got))
	}
	p = store.ParseProperties(got[0].Properties)
	if p[store.PropertyUniqKey] != "U0" || p[store.PropertyRealTopic] != "" || p[store.PropertyTransaction] != "" ||
		string(got[0].Body) != "body-U0" || got[0].PreparedTransactionOffset != off0 {
		t.Fatalf("committed message %+v props %v", got[0], p)
	}
	// Unknown is ignored; rollback decides without storing; a commit after it stores nothing.
	if r := tb.b.handleEndTransaction(context.Background(), transport.NewRequest(transport.EndTransaction, endExt("pg", q1, off1, txNotType), nil)); r != nil {
		t.Fatalf("unknown state answered %d %s; Java sends no answer", r.Code, r.Remark)
	}
	if _, ok := tb.replica.TransactionState().Decided(store.QueueOffset(q1)); ok {
		t.Fatal("an unknown state decided the half message")
	}
	for _, st := range []int32{txRollbackType, txCommitType} {
		if r := tb.call(t, transport.EndTransaction, endExt("pg", q1, off1, st), nil); r.ResponseCode() != transport.Success {
			t.Fatalf("state %d: %d %s", st, r.Code, r.Remark)
		}
	}
	if n := len(readQueue(t, tb.st, "TxT", 3)); n != 0 {
		t.Fatalf("a rolled-back message was delivered (%d)", n)
	}
	if tb.replica.TransactionState().FirstUndecided() != 2 {
		t.Fatalf("first undecided %d, want 2", tb.replica.TransactionState().FirstUndecided())
	}
}

func TestPreparedBatchIsRefused(t *testing.T) {
	tb := startTestBroker(t, RoleLeader, nil)
	ext := preparedExt("TxT", 0, "pg", "U0")
	ext["batch"] = "true"
	if r := tb.call(t, transport.SendMessage, ext, nil); r.ResponseCode() != transport.NoPermission {
		t.Fatalf("prepared batch: %d %s", r.Code, r.Remark)
	}
}

// recConn records check-backs.
type recConn struct {
	mu   sync.Mutex
	reqs []*transport.Command
}

func (c *recConn) InvokeOneway(req *transport.Command) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, req)
	return nil
}

func (c *recConn) take() []*transport.Command {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.reqs
	c.reqs = nil
	return out
}

// putHalf stores n half messages for group as the send path would.
func putHalf(t *testing.T, rep *fakeReplica, group string, n int) {
	t.Helper()
	var recs [][]byte
	for i := range n {
		key := fmt.Sprintf("H-%d", i)
		m := store.Message{
			Topic: transHalfTopic, BornTimestamp: 1700000000000, BornHost: testStoreHost, StoreHost: testStoreHost,
			Body: []byte("body-" + key),
			Properties: store.EncodeProperties(map[string]string{store.PropertyUniqKey: key, store.PropertyTransaction: "true",
				store.PropertyProducerGroup: group, store.PropertyRealTopic: "Real", store.PropertyRealQueueID: strconv.Itoa(i % 2)}),
		}
		rec, err := store.AppendMessage(nil, &m)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if _, err := rep.PutMessages(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	waitStoreDispatched(t, rep.st)
}

// TestCheckServiceChecksThenDiscards drives the service with an injected clock:
// nothing is asked before the timeout; then every undecided half message is asked
// once per round with the header and body the Go client reads, a decided one is
// never asked, and after CheckMax checks the message moves to the check-max topic.
func TestCheckServiceChecksThenDiscards(t *testing.T) {
	st := openTestStore(t)
	rep := newFakeReplica(st, RoleLeader)
	rep.topics["Real"] = TopicConfig{Name: "Real", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}
	putHalf(t, rep, "pg", 3)
	conn := &recConn{}
	clock := &fakeClock{t: time.Now()}
	var ensured []string
	svc := newTxCheckService(txCheckConfig{
		Timeout: 6 * time.Second, CheckMax: 2, BrokerName: "broker-a", StoreHost: testStoreHost, Now: clock.now, MaxOps: 2,
		Producer: func(g string) (checkConn, bool) { return conn, g == "pg" },
		EnsureTopic: func(_ context.Context, name string, _ int32) error {
			ensured = append(ensured, name)
			return nil
		},
	}, st, rep)
	ctx := context.Background()
	if s, err := svc.round(ctx); err != nil || s.Checked != 0 || len(conn.take()) != 0 {
		t.Fatalf("before the timeout: %+v %v", s, err)
	}
	// Half offset 1 is decided before the first check.
	if _, err := rep.ApplyTransactionOps(ctx, []TransactionOp{{Kind: 2, HalfOffset: 1}}); err != nil {
		t.Fatal(err)
	}
	clock.t = clock.t.Add(7 * time.Second)
	s, err := svc.round(ctx)
	if err != nil || s.Checked != 2 {
		t.Fatalf("first round: %+v %v", s, err)
	}
	reqs := conn.take()
	if len(reqs) != 2 {
		t.Fatalf("%d check-backs, want 2", len(reqs))
	}
	r := reqs[1]
	if r.RequestCode() != transport.CheckTransactionState || r.ExtFields["tranStateTableOffset"] != "2" ||
		r.ExtFields["msgId"] != "H-2" || r.ExtFields["transactionId"] != "H-2" || r.ExtFields["topic"] != "Real" || r.ExtFields["bname"] != "broker-a" {
		t.Fatalf("check header %v", r.ExtFields)
	}
	m, err := store.DecodeMessage(r.Body, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.Topic != "Real" || m.QueueID != 0 || m.QueueOffset != 2 || strconv.FormatInt(int64(m.PhysicalOffset), 10) != r.ExtFields["commitLogOffset"] ||
		store.OffsetMsgID(m.StoreHost, m.PhysicalOffset) != r.ExtFields["offsetMsgId"] {
		t.Fatalf("check body %+v vs header %v", m, r.ExtFields)
	}
	if c := rep.TransactionState().Checks(0); c != 1 {
		t.Fatalf("checks of offset 0 = %d", c)
	}
	// MaxOps 2 split the round into entries; each entry holds at most 2 ops.
	entries := rep.tx.entries
	if _, err := svc.round(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(conn.take()); got != 2 || rep.tx.entries != entries+1 {
		t.Fatalf("second round: %d checks, %d entries", got, rep.tx.entries-entries)
	}
	// CheckMax reached: the third round moves both to the check-max topic.
	s, err = svc.round(ctx)
	if err != nil || s.Discarded != 2 || s.Checked != 0 || len(conn.take()) != 0 {
		t.Fatalf("third round: %+v %v", s, err)
	}
	if len(ensured) == 0 || ensured[0] != transCheckMaxTopic {
		t.Fatalf("ensured topics %v", ensured)
	}
	moved := readQueue(t, st, transCheckMaxTopic, 0)
	if len(moved) != 2 || store.ParseProperties(moved[1].Properties)[store.PropertyUniqKey] != "H-2" {
		t.Fatalf("check-max topic holds %d messages", len(moved))
	}
	if rep.TransactionState().FirstUndecided() != 3 {
		t.Fatalf("first undecided %d", rep.TransactionState().FirstUndecided())
	}
	if s, _ := svc.round(ctx); s != (roundStats{}) {
		t.Fatalf("a round after everything was decided did %+v", s)
	}
}

// TestCheckServiceStopsAtYoungMessages: a round asks about the old prefix only.
func TestCheckServiceStopsAtYoungMessages(t *testing.T) {
	st := openTestStore(t)
	rep := newFakeReplica(st, RoleLeader)
	putHalf(t, rep, "pg", 2)
	time.Sleep(20 * time.Millisecond)
	cut := time.Now()
	putHalf(t, rep, "pg", 2)
	conn := &recConn{}
	svc := newTxCheckService(txCheckConfig{Timeout: time.Second, Now: func() time.Time { return cut.Add(time.Second - 5*time.Millisecond) },
		Producer: func(string) (checkConn, bool) { return conn, true }}, st, rep)
	s, err := svc.round(context.Background())
	if err != nil || s.Checked != 2 {
		t.Fatalf("round: %+v %v", s, err)
	}
}

// TestCheckServiceNotLeader: a deposed leader records and sends nothing.
func TestCheckServiceNotLeader(t *testing.T) {
	st := openTestStore(t)
	rep := newFakeReplica(st, RoleLeader)
	putHalf(t, rep, "pg", 1)
	rep.status.Role = RoleFollower
	conn := &recConn{}
	svc := newTxCheckService(txCheckConfig{Timeout: time.Millisecond, Now: func() time.Time { return time.Now().Add(time.Minute) },
		Producer: func(string) (checkConn, bool) { return conn, true }}, st, rep)
	if _, err := svc.round(context.Background()); err == nil || len(conn.take()) != 0 {
		t.Fatalf("round on a follower: err %v", err)
	}
}
