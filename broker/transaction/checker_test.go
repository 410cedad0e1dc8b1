package transaction_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/transaction"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// TestCheckServiceChecksThenDiscards drives the service with an injected clock:
// nothing is asked before the timeout; then every undecided half message is asked
// once per round with the header and body the Go client reads, a decided one is
// never asked, and after CheckMax checks the message moves to the check-max topic.
func TestCheckServiceChecksThenDiscards(t *testing.T) {
	st := fakereplica.OpenStore(t)
	fake := fakereplica.New(st, replica.RoleLeader)
	rep := &countingTx{Replica: fake}
	ctx := context.Background()
	if err := fake.UpsertTopic(ctx, fsm.NewTopic("Real", 2, fsm.PermRead|fsm.PermWrite)); err != nil {
		t.Fatal(err)
	}
	// The fake stamps records with the service's clock, so the ages below do not
	// depend on how long the store took.
	clock := &fakeClock{t: time.Now()}
	fake.Clock = clock.now
	putHalf(t, fake, "pg", 3)
	conn := &recConn{}
	var ensured []string
	svc := transaction.NewChecker(transaction.Config{
		Timeout: 6 * time.Second, CheckMax: 2, BrokerName: "broker-a", StoreHost: testStoreHost, Now: clock.now, MaxOps: 2,
		Producer: func(g string) (transaction.CheckConn, bool) { return conn, g == "pg" },
		EnsureTopic: func(_ context.Context, name string, _ int32) error {
			ensured = append(ensured, name)
			return nil
		},
	}, st, rep)
	if s, err := svc.Round(ctx); err != nil || s.Checked != 0 || len(conn.take()) != 0 {
		t.Fatalf("before the timeout: %+v %v", s, err)
	}
	// Half offset 1 is decided before the first check.
	if _, err := rep.ApplyTransactionOps(ctx, []replica.TransactionOp{{Kind: fsm.TxRollback, HalfOffset: 1}}); err != nil {
		t.Fatal(err)
	}
	clock.t = clock.t.Add(7 * time.Second)
	s, err := svc.Round(ctx)
	if err != nil || s.Checked != 2 {
		t.Fatalf("first round: %+v %v", s, err)
	}
	reqs := conn.take()
	if len(reqs) != 2 {
		t.Fatalf("%d check-backs, want 2", len(reqs))
	}
	r := reqs[1]
	if r.RequestCode() != transport.CheckTransactionState || r.Field("tranStateTableOffset") != "2" ||
		r.Field("msgId") != "H-2" || r.Field("transactionId") != "H-2" || r.Field("topic") != "Real" || r.Field("bname") != "broker-a" {
		t.Fatalf("check header %v", r.Fields())
	}
	m, err := store.DecodeMessage(r.Body, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.Topic != "Real" || m.QueueID != 0 || m.QueueOffset != 2 || strconv.FormatInt(int64(m.PhysicalOffset), 10) != r.Field("commitLogOffset") ||
		store.OffsetMsgID(m.StoreHost, m.PhysicalOffset) != r.Field("offsetMsgId") {
		t.Fatalf("check body %+v vs header %v", m, r.Fields())
	}
	if c := rep.TransactionState().Checks(0); c != 1 {
		t.Fatalf("checks of offset 0 = %d", c)
	}
	// MaxOps 2 split the round into entries; each entry holds at most 2 ops.
	entries := rep.entryCount()
	if _, err := svc.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(conn.take()); got != 2 || rep.entryCount() != entries+1 {
		t.Fatalf("second round: %d checks, %d entries", got, rep.entryCount()-entries)
	}
	// CheckMax reached: the third round moves both to the check-max topic.
	s, err = svc.Round(ctx)
	if err != nil || s.Discarded != 2 || s.Checked != 0 || len(conn.take()) != 0 {
		t.Fatalf("third round: %+v %v", s, err)
	}
	if len(ensured) == 0 || ensured[0] != transaction.CheckMaxTopic {
		t.Fatalf("ensured topics %v", ensured)
	}
	moved := fakereplica.ReadQueue(t, st, transaction.CheckMaxTopic, 0)
	if len(moved) != 2 || store.ParseProperties(moved[1].Properties)[store.PropertyUniqKey] != "H-2" {
		t.Fatalf("check-max topic holds %d messages", len(moved))
	}
	if rep.TransactionState().FirstUndecided() != 3 {
		t.Fatalf("first undecided %d", rep.TransactionState().FirstUndecided())
	}
	if s, _ := svc.Round(ctx); s != (transaction.RoundStats{}) {
		t.Fatalf("a round after everything was decided did %+v", s)
	}
}

// TestCheckServiceStopsAtYoungMessages: a round asks about the old prefix only.
// The fake stamps the two batches 20 ms apart on an injected clock.
func TestCheckServiceStopsAtYoungMessages(t *testing.T) {
	st := fakereplica.OpenStore(t)
	rep := fakereplica.New(st, replica.RoleLeader)
	stamp := &fakeClock{t: time.Now()}
	rep.Clock = stamp.now
	putHalf(t, rep, "pg", 2)
	stamp.t = stamp.t.Add(20 * time.Millisecond)
	cut := stamp.t
	putHalf(t, rep, "pg", 2)
	conn := &recConn{}
	svc := transaction.NewChecker(transaction.Config{Timeout: time.Second, Now: func() time.Time { return cut.Add(time.Second - 5*time.Millisecond) },
		Producer: func(string) (transaction.CheckConn, bool) { return conn, true }}, st, rep)
	s, err := svc.Round(context.Background())
	if err != nil || s.Checked != 2 {
		t.Fatalf("round: %+v %v", s, err)
	}
}

// TestCheckServiceNotLeader: a deposed leader records and sends nothing.
func TestCheckServiceNotLeader(t *testing.T) {
	st := fakereplica.OpenStore(t)
	rep := fakereplica.New(st, replica.RoleLeader)
	putHalf(t, rep, "pg", 1)
	deposed := rep.Status()
	deposed.Role = replica.RoleFollower
	rep.SetStatusQuietly(deposed)
	conn := &recConn{}
	svc := transaction.NewChecker(transaction.Config{Timeout: time.Millisecond, Now: func() time.Time { return time.Now().Add(time.Minute) },
		Producer: func(string) (transaction.CheckConn, bool) { return conn, true }}, st, rep)
	if _, err := svc.Round(context.Background()); err == nil || len(conn.take()) != 0 {
		t.Fatalf("round on a follower: err %v", err)
	}
}
