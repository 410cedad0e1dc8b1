package transaction_test

import (
	"context"
	"errors"
	"testing"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/broker/schedule"
	"github.com/rocketraft/rocketraft/broker/transaction"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/store"
)

func TestHalfPropertiesDropsDelayAndNamesTheRealQueue(t *testing.T) {
	in := store.EncodeProperties(map[string]string{store.PropertyUniqKey: "U", store.PropertyDelayLevel: "3",
		store.PropertyTimerDeliverMS: "1", schedule.PropTimerDelaySec: "2", schedule.PropTimerDelayMS: "3"})
	p := store.ParseProperties(transaction.HalfProperties(in, "pg", "TxT", 2))
	want := map[string]string{store.PropertyUniqKey: "U", store.PropertyProducerGroup: "pg",
		store.PropertyRealTopic: "TxT", store.PropertyRealQueueID: "2"}
	if len(p) != len(want) {
		t.Fatalf("properties %v, want %v", p, want)
	}
	for k, v := range want {
		if p[k] != v {
			t.Fatalf("properties %v, want %v", p, want)
		}
	}
	// A producer group the client set wins over the header's.
	in = store.EncodeProperties(map[string]string{store.PropertyProducerGroup: "own"})
	if g := store.ParseProperties(transaction.HalfProperties(in, "pg", "TxT", 0))[store.PropertyProducerGroup]; g != "own" {
		t.Fatalf("PGROUP %q, want the client's own", g)
	}
}

// TestReadHalfChecksTheHalfMessage: ReadHalf finds the half message END_TRANSACTION
// names and refuses a wrong offset, group or record with route.ErrHalfMessage;
// CommitRecord rebuilds it for its real queue.
func TestReadHalfChecksTheHalfMessage(t *testing.T) {
	st := fakereplica.OpenStore(t)
	rep := fakereplica.New(st, replica.RoleLeader)
	putHalf(t, rep, "pg", 2)
	half := fakereplica.ReadQueue(t, st, transaction.HalfTopic, 0)
	if len(half) != 2 {
		t.Fatalf("half queue holds %d messages", len(half))
	}
	h, err := transaction.ReadHalf(st, half[1].PhysicalOffset, 1, "pg")
	if err != nil || h.Props[store.PropertyUniqKey] != "H-1" {
		t.Fatalf("ReadHalf: %v %v", h.Props, err)
	}
	for name, c := range map[string]struct {
		off   store.PhysicalOffset
		qo    store.QueueOffset
		group string
	}{
		"wrong group":  {half[1].PhysicalOffset, 1, "other"},
		"wrong offset": {half[1].PhysicalOffset, 0, "pg"},
		"not a record": {half[1].PhysicalOffset + 1, 1, "pg"},
	} {
		if _, err := transaction.ReadHalf(st, c.off, c.qo, c.group); !errors.Is(err, route.ErrHalfMessage) {
			t.Errorf("%s: err %v, want ErrHalfMessage", name, err)
		}
	}
	rec, err := transaction.CommitRecord(h, testStoreHost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rep.PutMessages(context.Background(), [][]byte{rec}); err != nil {
		t.Fatal(err)
	}
	got := fakereplica.ReadQueue(t, st, "Real", 1)
	if len(got) != 1 {
		t.Fatalf("real queue holds %d messages", len(got))
	}
	p := store.ParseProperties(got[0].Properties)
	if p[store.PropertyUniqKey] != "H-1" || p[store.PropertyRealTopic] != "" || p[store.PropertyTransaction] != "" ||
		p[store.PropertyProducerGroup] != "pg" || string(got[0].Body) != "body-H-1" ||
		got[0].PreparedTransactionOffset != int64(half[1].PhysicalOffset) || got[0].SysFlag&store.SysFlagTxMask != 0 {
		t.Fatalf("committed message %+v props %v", got[0], p)
	}
}
