package fsm

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/store"
)

func txOpsCmd(t testing.TB) TransactionOps {
	return TransactionOps{
		Ops: []TransactionOp{
			{Kind: TxCommit, HalfOffset: 7, Record: 0},
			{Kind: TxRollback, HalfOffset: 8, Record: NoRecord},
			{Kind: TxDiscard, HalfOffset: 9, Record: 1},
			{Kind: TxCheck, HalfOffset: 10, Record: NoRecord},
			{Kind: TxExpire, HalfOffset: 2, Record: NoRecord},
		},
		Put: PutMessages{StoreTimestamp: 1700000000777, StoreHost: leaderHost,
			Messages: [][]byte{msg(t, "Real", 1, "c"), msg(t, "TRANS_CHECK_MAX_TIME_TOPIC", 0, "d")}},
	}
}

// TestGoldenTransactionOps pins code 25 and its encoding.
func TestGoldenTransactionOps(t *testing.T) {
	if uint8(CmdTransactionOps) != 25 {
		t.Fatalf("%s = %d, pinned 25", CmdTransactionOps, uint8(CmdTransactionOps))
	}
	kinds := map[TransactionOpKind]uint8{TxCommit: 1, TxRollback: 2, TxDiscard: 3, TxCheck: 4, TxExpire: 5}
	for k, n := range kinds {
		if uint8(k) != n {
			t.Errorf("op kind %s = %d, pinned %d", k, uint8(k), n)
		}
	}
	c := txOpsCmd(t)
	b := enc(t, c)
	path := filepath.Join("testdata", "25_transaction_ops.golden")
	if *update {
		if err := os.WriteFile(path, []byte(hex.Dump(b)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got := hex.Dump(b); got != string(want) {
		t.Fatalf("encoding changed:\n%s\nwant:\n%s", got, want)
	}
	if n := TransactionOpsSize(len(c.Ops), c.Put.StoreHost, c.Put.Messages); n != len(b) {
		t.Errorf("TransactionOpsSize = %d, encoded %d", n, len(b))
	}
	d, err := DecodeCommand(b)
	if err != nil {
		t.Fatal(err)
	}
	got := *d.(*TransactionOps)
	if !reflect.DeepEqual(got.Ops, c.Ops) || !equalPut(got.Put, c.Put) {
		t.Fatalf("round trip:\n%#v\nwant\n%#v", got, c)
	}
	if Type(b).String() != "TransactionOps" {
		t.Errorf("String() = %s", Type(b))
	}
}

func TestDecodeTransactionOpsRejects(t *testing.T) {
	good := enc(t, txOpsCmd(t))
	mutate := func(off int, v byte) []byte {
		b := bytes.Clone(good)
		b[off] = v
		return b
	}
	const op0 = 2 + 4 // first op's kind byte
	cases := map[string][]byte{
		"short":            {25, 1, 0, 0},
		"huge count":       {25, 1, 0xFF, 0xFF, 0xFF, 0xFF},
		"unknown kind":     mutate(op0, 9),
		"commit no record": mutate(op0+9, 0xFF),
		"record too big":   mutate(op0+12, 5),
		"negative offset":  mutate(op0+1, 0x80),
		"orphan record":    mutate(op0+2*13+12, 0), // discard points at record 0 too
		"truncated":        good[:len(good)-1],
		"trailing":         append(bytes.Clone(good), 0),
	}
	for name, b := range cases {
		if _, err := DecodeCommand(b); !errors.Is(err, ErrBadCommand) {
			t.Errorf("%s: err %v", name, err)
		}
	}
	bad := TransactionOps{Ops: []TransactionOp{{Kind: TxRollback, HalfOffset: 1, Record: 0}}, Put: PutMessages{Messages: [][]byte{msg(t, "Real", 0, "x")}}}
	if _, err := Encode(nil, bad); !errors.Is(err, ErrBadCommand) {
		t.Errorf("encode of a rollback with a record: %v", err)
	}
}

func txSetup(t *testing.T) (*FSM, *fakeStore) {
	st := newFakeStore()
	f := newFSM(t, st, t.TempDir())
	f.Apply(cmdLog(1, enc(t, TopicUpsert{Topic: TopicConfig{Name: "Real", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}})))
	return f, st
}

func commitOp(t testing.TB, half store.QueueOffset, body string) TransactionOps {
	return TransactionOps{
		Ops: []TransactionOp{{Kind: TxCommit, HalfOffset: half, Record: 0}},
		Put: PutMessages{StoreTimestamp: 1700000000888, StoreHost: leaderHost, Messages: [][]byte{msg(t, "Real", 1, body)}},
	}
}

// TestApplyTransactionOpsIsIdempotent: a commit stores its message and records the
// decision in one entry; a second commit or a rollback of the same half offset (a
// client retry, a check-back answer, a new leader) stores nothing.
func TestApplyTransactionOpsIsIdempotent(t *testing.T) {
	f, st := txSetup(t)
	v := f.Metadata().Transactions()
	res := f.Apply(cmdLog(2, enc(t, commitOp(t, 0, "a")))).(*TransactionResult)
	if res.Err != nil || res.Ops[0].Err != nil || res.Ops[0].Message.Err != nil || res.Ops[0].Message.QueueOffset != 0 || res.Ops[0].Message.OffsetMsgID == "" {
		t.Fatalf("first commit: %+v", res)
	}
	if _, ok := v.Decided(0); !ok {
		t.Fatal("half offset 0 not decided after its commit")
	}
	end := st.MaxPhysicalOffset()
	for i, c := range []TransactionOps{commitOp(t, 0, "a"), {Ops: []TransactionOp{{Kind: TxRollback, HalfOffset: 0, Record: NoRecord}}}} {
		res = f.Apply(cmdLog(uint64(3+i), enc(t, c))).(*TransactionResult)
		if res.Err != nil || !errors.Is(res.Ops[0].Err, ErrTransactionDecided) {
			t.Fatalf("duplicate %d: %+v", i, res)
		}
	}
	if st.MaxPhysicalOffset() != end {
		t.Fatal("a duplicate decision stored a message")
	}
	// Two commits of one half offset in a single entry: only the first stores.
	two := commitOp(t, 1, "b")
	two.Ops = append(two.Ops, TransactionOp{Kind: TxCommit, HalfOffset: 1, Record: 1})
	two.Put.Messages = append(two.Put.Messages, msg(t, "Real", 1, "b"))
	res = f.Apply(cmdLog(5, enc(t, two))).(*TransactionResult)
	if res.Ops[0].Err != nil || !errors.Is(res.Ops[1].Err, ErrTransactionDecided) || res.Ops[1].Message.OffsetMsgID != "" {
		t.Fatalf("double commit in one entry: %+v", res)
	}
	if got := st.queues[TopicQueue{"Real", 1}]; got != 2 {
		t.Fatalf("Real queue 1 holds %d messages, want 2", got)
	}
}

// TestApplyTransactionChecksAndExpiry: checks count only undecided offsets, a
// decision drops the count, expiry decides everything below it, and a message the
// real topic refuses is still decided (it could never be stored).
func TestApplyTransactionChecksAndExpiry(t *testing.T) {
	f, _ := txSetup(t)
	v := f.Metadata().Transactions()
	checks := TransactionOps{Ops: []TransactionOp{
		{Kind: TxCheck, HalfOffset: 3, Record: NoRecord}, {Kind: TxCheck, HalfOffset: 4, Record: NoRecord}, {Kind: TxCheck, HalfOffset: 3, Record: NoRecord},
	}}
	f.Apply(cmdLog(2, enc(t, checks)))
	if v.Checks(3) != 2 || v.Checks(4) != 1 {
		t.Fatalf("checks 3=%d 4=%d, want 2 and 1", v.Checks(3), v.Checks(4))
	}
	gone := TransactionOps{Ops: []TransactionOp{{Kind: TxCommit, HalfOffset: 4, Record: 0}},
		Put: PutMessages{StoreTimestamp: 1, StoreHost: leaderHost, Messages: [][]byte{msg(t, "Gone", 0, "x")}}}
	res := f.Apply(cmdLog(3, enc(t, gone))).(*TransactionResult)
	if res.Err != nil || res.Ops[0].Err != nil || !errors.Is(res.Ops[0].Message.Err, ErrTopicNotFound) {
		t.Fatalf("commit into a missing topic: %+v", res)
	}
	if _, ok := v.Decided(4); !ok || v.Checks(4) != 0 {
		t.Fatal("a commit the real topic refused must still decide the half message")
	}
	if v.FirstUndecided() != 0 {
		t.Fatalf("first undecided %d, want 0", v.FirstUndecided())
	}
	f.Apply(cmdLog(4, enc(t, TransactionOps{Ops: []TransactionOp{{Kind: TxExpire, HalfOffset: 4, Record: NoRecord}}})))
	if v.FirstUndecided() != 5 || v.Checks(3) != 0 {
		t.Fatalf("after expiry below 4: first undecided %d (want 5, 4 was decided), checks(3)=%d", v.FirstUndecided(), v.Checks(3))
	}
	if got := v.DecidedRanges(); !reflect.DeepEqual(got, []QueueRange{{0, 5}}) {
		t.Fatalf("decided ranges %v", got)
	}
	res = f.Apply(cmdLog(5, enc(t, TransactionOps{Ops: []TransactionOp{{Kind: TxCheck, HalfOffset: 2, Record: NoRecord}}}))).(*TransactionResult)
	if !errors.Is(res.Ops[0].Err, ErrTransactionDecided) || v.Checks(2) != 0 {
		t.Fatalf("check of an expired offset: %+v", res)
	}
}

func TestTxStateRanges(t *testing.T) {
	s := newTxState()
	for _, o := range []store.QueueOffset{5, 3, 4, 9, 0, 1, 7} {
		s.decide(o, o+1)
	}
	want := []QueueRange{{0, 2}, {3, 6}, {7, 8}, {9, 10}}
	if !reflect.DeepEqual(s.decided, want) {
		t.Fatalf("ranges %v, want %v", s.decided, want)
	}
	if next, ok := s.isDecided(4); !ok || next != 6 {
		t.Fatalf("isDecided(4) = %d %v", next, ok)
	}
	if _, ok := s.isDecided(6); ok {
		t.Fatal("6 is not decided")
	}
	if n, ok := s.nextDecided(6); !ok || n != 7 {
		t.Fatalf("nextDecided(6) = %d %v", n, ok)
	}
	if s.firstUndecided() != 2 {
		t.Fatalf("firstUndecided %d", s.firstUndecided())
	}
	s.decide(2, 3)
	s.decide(6, 7)
	s.decide(8, 9)
	if !reflect.DeepEqual(s.decided, []QueueRange{{0, 10}}) {
		t.Fatalf("ranges %v, want one", s.decided)
	}
}

// TestTransactionStateDeterministicAndSnapshotted: replicas applying the same
// random op log (any batching) agree on bytes and state, and the state survives a
// checkpoint and a restart.
func TestTransactionStateDeterministicAndSnapshotted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ls := [][]byte{enc(t, TopicUpsert{Topic: TopicConfig{Name: "Real", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}})}
	for range 60 {
		var c TransactionOps
		c.Put = PutMessages{StoreTimestamp: 1700000000000, StoreHost: leaderHost}
		for range 1 + rng.IntN(4) {
			half := store.QueueOffset(rng.IntN(40))
			switch k := TransactionOpKind(1 + rng.IntN(4)); k {
			case TxCommit, TxDiscard:
				c.Ops = append(c.Ops, TransactionOp{Kind: k, HalfOffset: half, Record: int32(len(c.Put.Messages))})
				c.Put.Messages = append(c.Put.Messages, msg(t, "Real", int32(rng.IntN(2)), "m"))
			default:
				c.Ops = append(c.Ops, TransactionOp{Kind: k, HalfOffset: half, Record: NoRecord})
			}
		}
		ls = append(ls, enc(t, c))
	}
	ls = append(ls, enc(t, TransactionOps{Ops: []TransactionOp{{Kind: TxExpire, HalfOffset: 3, Record: NoRecord}}}))
	type outcome struct {
		bytes []byte
		img   *transactionImage
	}
	run := func(batch int, dir string) (outcome, *FSM, *fakeStore) {
		st := newFakeStore()
		f := newFSM(t, st, dir)
		logs := make([]*raft.Log, 0, len(ls))
		for i, b := range ls {
			logs = append(logs, cmdLog(uint64(i+1), b))
		}
		applyAll(f, logs, batch)
		return outcome{bytesOf(t, st), f.meta.image().Transaction}, f, st
	}
	a, f, st := run(1, t.TempDir())
	b, _, _ := run(7, t.TempDir())
	if !bytes.Equal(a.bytes, b.bytes) || !reflect.DeepEqual(a.img, b.img) {
		t.Fatalf("replicas diverged: %d vs %d bytes, %+v vs %+v", len(a.bytes), len(b.bytes), a.img, b.img)
	}
	if a.img == nil || len(a.img.Decided) == 0 {
		t.Fatal("the workload decided nothing; the test proves nothing")
	}
	if err := f.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	g, err := New(Config{Store: st, Dir: f.cfg.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.meta.image().Transaction; !reflect.DeepEqual(got, a.img) {
		t.Fatalf("after restart %+v, want %+v", got, a.img)
	}
}
