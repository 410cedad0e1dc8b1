package broker

import (
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/transaction"
	"github.com/rocketraft/rocketraft/internal/fakereplica"

	"context"
	"strconv"
	"testing"

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
	_, off, err := store.ParseOffsetMsgID(r.Field("msgId"))
	if err != nil || len(r.Field("msgId")) < 32 {
		t.Fatalf("msgId %q is not an offset id (the Go client would panic): %v", r.Field("msgId"), err)
	}
	if r.Field("transactionId") != uniq || r.Field("queueId") != strconv.Itoa(queueID) {
		t.Fatalf("response ext %v", r.Fields())
	}
	qo, err := strconv.ParseInt(r.Field("queueOffset"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return qo, int64(off)
}

func TestPreparedSendCommitAndRollback(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	q0, off0 := sendPrepared(t, tb, "TxT", 2, "pg", "U0")
	q1, off1 := sendPrepared(t, tb, "TxT", 3, "pg", "U1")
	if q0 != 0 || q1 != 1 {
		t.Fatalf("half offsets %d %d, want 0 1", q0, q1)
	}
	half := fakereplica.ReadQueue(t, tb.st, transaction.HalfTopic, 0)
	if len(half) != 2 {
		t.Fatalf("half queue holds %d messages", len(half))
	}
	p := store.ParseProperties(half[0].Properties)
	if p[store.PropertyRealTopic] != "TxT" || p[store.PropertyRealQueueID] != "2" || p[store.PropertyProducerGroup] != "pg" ||
		p[store.PropertyDelayLevel] != "" || half[0].SysFlag&store.SysFlagTxMask != 0 || int64(half[0].PhysicalOffset) != off0 {
		t.Fatalf("half message %+v props %v", half[0], p)
	}
	if n := len(fakereplica.ReadQueue(t, tb.st, "TxT", 2)); n != 0 {
		t.Fatalf("a prepared message reached its real queue (%d)", n)
	}
	// Mismatched checks are refused, as Java's checkPrepareMessage does.
	for name, ext := range map[string]map[string]string{
		"wrong group":  endExt("other", q0, off0, transaction.CommitType),
		"wrong offset": endExt("pg", q1, off0, transaction.CommitType),
		"not a half":   endExt("pg", q0, off0+1, transaction.CommitType),
	} {
		if r := tb.call(t, transport.EndTransaction, ext, nil); r.ResponseCode() != transport.SystemError {
			t.Errorf("%s: code %d %s", name, r.Code, r.Remark)
		}
	}
	// Commit twice (a client retry, or a check-back answer racing the original).
	for i := range 2 {
		if r := tb.call(t, transport.EndTransaction, endExt("pg", q0, off0, transaction.CommitType), nil); r.ResponseCode() != transport.Success {
			t.Fatalf("commit %d: %d %s", i, r.Code, r.Remark)
		}
	}
	got := fakereplica.ReadQueue(t, tb.st, "TxT", 2)
	if len(got) != 1 {
		t.Fatalf("real queue holds %d messages after two commits, want 1", len(got))
	}
	p = store.ParseProperties(got[0].Properties)
	if p[store.PropertyUniqKey] != "U0" || p[store.PropertyRealTopic] != "" || p[store.PropertyTransaction] != "" ||
		string(got[0].Body) != "body-U0" || got[0].PreparedTransactionOffset != off0 {
		t.Fatalf("committed message %+v props %v", got[0], p)
	}
	// Unknown is ignored; rollback decides without storing; a commit after it stores nothing.
	if r := tb.b.serve.ServeRemoting(context.Background(), nil, transport.NewRequest(transport.EndTransaction, endExt("pg", q1, off1, transaction.NotType), nil)); r != nil {
		t.Fatalf("unknown state answered %d %s; Java sends no answer", r.Code, r.Remark)
	}
	if _, ok := tb.replica.TransactionState().Decided(store.QueueOffset(q1)); ok {
		t.Fatal("an unknown state decided the half message")
	}
	for _, st := range []int32{transaction.RollbackType, transaction.CommitType} {
		if r := tb.call(t, transport.EndTransaction, endExt("pg", q1, off1, st), nil); r.ResponseCode() != transport.Success {
			t.Fatalf("state %d: %d %s", st, r.Code, r.Remark)
		}
	}
	if n := len(fakereplica.ReadQueue(t, tb.st, "TxT", 3)); n != 0 {
		t.Fatalf("a rolled-back message was delivered (%d)", n)
	}
	if tb.replica.TransactionState().FirstUndecided() != 2 {
		t.Fatalf("first undecided %d, want 2", tb.replica.TransactionState().FirstUndecided())
	}
}

func TestPreparedBatchIsRefused(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	ext := preparedExt("TxT", 0, "pg", "U0")
	ext["batch"] = "true"
	if r := tb.call(t, transport.SendMessage, ext, nil); r.ResponseCode() != transport.NoPermission {
		t.Fatalf("prepared batch: %d %s", r.Code, r.Remark)
	}
}
