package fsm

import (
	"errors"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/store"
)

// twoFSMs runs the same committed log through the copying FSM (raft-wal's layout)
// and the FSM of the single write (decision 0016), where raft's log store already
// wrote each command's messages into the CommitLog and Apply only decides.
type twoFSMs struct {
	t          *testing.T
	copy, one  *FSM
	copySt     *store.Store
	oneSt      *store.Store
	el         *store.EntryLog
	next       uint64
	splitWhole bool // store the next entry whole, as raft's log does when Split refuses
}

func newTwoFSMs(t *testing.T) *twoFSMs {
	copySt := openStore(t, t.TempDir())
	oneDir := t.TempDir()
	oneSt, err := store.Open(store.Config{
		Dir: oneDir, CommitLogSegmentSize: testSegmentSize, ConsumeQueueEntriesPerFile: 256,
		IndexHashSlots: 64, IndexMaxEntries: 256, Logger: hclog.NewNullLogger(), RaftEntryLog: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	one, err := New(Config{Store: oneSt, Dir: oneDir, SegmentSize: testSegmentSize, EntryLog: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Store: copySt, Dir: t.TempDir(), EntryLog: true}); !errors.Is(err, store.ErrNotEntryLog) {
		t.Fatal("an FSM with EntryLog opened over a store without the entry log")
	}
	tf := &twoFSMs{t: t, copySt: copySt, oneSt: oneSt, el: oneSt.EntryLog(), next: 1,
		copy: newRealFSM(t, copySt, t.TempDir()), one: one}
	t.Cleanup(func() { _ = copySt.Close(); _ = oneSt.Close() })
	return tf
}

// apply commits c as the next entry on both and returns both results.
func (tf *twoFSMs) apply(c Command) (copied, single any) {
	t := tf.t
	t.Helper()
	data := enc(t, c)
	e := store.LogEntry{Index: tf.next, Term: 1, Type: uint8(raft.LogCommand), Data: []byte("whole")}
	if head, recs, ts, ok := SplitRecords(data); ok && !tf.splitWhole {
		e.Data, e.Records, e.StoreTimestamp = head, recs, ts
	}
	tf.splitWhole = false
	if err := tf.el.Append([]store.LogEntry{e}); err != nil {
		t.Fatal(err)
	}
	l := cmdLog(tf.next, data)
	tf.next++
	return tf.copy.Apply(l), tf.one.Apply(l)
}

// samePut fails unless both put results agree message by message: the same error
// (or none), queue and queue offset.
func samePut(t *testing.T, a, b *PutResult) {
	t.Helper()
	if len(a.Results) != len(b.Results) || (a.Err == nil) != (b.Err == nil) {
		t.Fatalf("results differ: copying %+v, single write %+v", a, b)
	}
	for i := range a.Results {
		x, y := a.Results[i], b.Results[i]
		if (x.Err == nil) != (y.Err == nil) || x.QueueID != y.QueueID || x.QueueOffset != y.QueueOffset || x.Topic != y.Topic {
			t.Fatalf("message %d: copying %+v (err %v), single write %+v (err %v)", i, x.AppendResult, x.Err, y.AppendResult, y.Err)
		}
	}
}

// TestSingleWriteApplyMatchesTheCopy: for every command that stores messages, the
// single write's Apply decides as the copying Apply does, and gives the same queue
// offsets; what it refuses stays in the CommitLog as a dead record that no read
// returns.
func TestSingleWriteApplyMatchesTheCopy(t *testing.T) {
	tf := newTwoFSMs(t)
	tf.apply(TopicUpsert{Topic: TopicConfig{Name: "Real", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}})

	// A put with a message to a topic that does not exist: it alone is refused.
	a, b := tf.apply(PutMessages{StoreTimestamp: 1700000000100, StoreHost: leaderHost, Messages: [][]byte{
		msg(t, "Real", 1, "a"), msg(t, "Nope", 0, "b"), msg(t, "Real", 1, "c"), msg(t, "Real", 2, "d"),
	}})
	pa, pb := a.(*PutResult), b.(*PutResult)
	samePut(t, pa, pb)
	if !errors.Is(pb.Results[1].Err, ErrTopicNotFound) {
		t.Fatalf("message to a missing topic: %v, want ErrTopicNotFound", pb.Results[1].Err)
	}
	pos, err := tf.el.Positions(2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tf.oneSt.ReadMessageAt(pos[1]); !errors.Is(err, store.ErrNoMessage) {
		t.Fatalf("reading the refused (dead) record: %v, want ErrNoMessage", err)
	}
	rec, release, err := tf.oneSt.ReadMessageAt(pb.Results[2].PhysicalOffset)
	if err != nil {
		t.Fatal(err)
	}
	if got := store.QueueOffsetOf(rec); got != pb.Results[2].QueueOffset {
		t.Fatalf("ReadMessageAt gives QUEUEOFFSET %d, Apply assigned %d", got, pb.Results[2].QueueOffset)
	}
	release()

	// A scheduled delivery whose progress conflicts: nothing is stored; its records
	// are dead, and the next put's offsets follow on without a gap.
	a, b = tf.apply(DeliverScheduled{
		Advances: []ScheduleAdvance{{Level: 2, From: 5, To: 6}},
		Put:      PutMessages{StoreTimestamp: 1700000000200, StoreHost: leaderHost, Messages: [][]byte{msg(t, "Real", 1, "late")}},
	})
	samePut(t, a.(*PutResult), b.(*PutResult))
	if !errors.Is(b.(*PutResult).Err, ErrScheduleConflict) {
		t.Fatalf("conflicting delivery: %v, want ErrScheduleConflict", b.(*PutResult).Err)
	}
	a, b = tf.apply(DeliverScheduled{
		Advances: []ScheduleAdvance{{Level: 2, From: 0, To: 1}},
		Put:      PutMessages{StoreTimestamp: 1700000000300, StoreHost: leaderHost, Messages: [][]byte{msg(t, "Real", 1, "due")}},
	})
	samePut(t, a.(*PutResult), b.(*PutResult))
	if got := b.(*PutResult).Results[0].QueueOffset; got != 2 {
		t.Fatalf("delivered message took queue offset %d, want 2 (the refused one took none)", got)
	}

	// Transaction ops naming their records out of order, one of them a duplicate
	// decision: the results land on the right ops.
	a, b = tf.apply(TransactionOps{
		Ops: []TransactionOp{
			{Kind: TxCommit, HalfOffset: 7, Record: 2},
			{Kind: TxCommit, HalfOffset: 8, Record: 0},
			{Kind: TxCommit, HalfOffset: 7, Record: 1}, // decided by the first op
		},
		Put: PutMessages{StoreTimestamp: 1700000000400, StoreHost: leaderHost,
			Messages: [][]byte{msg(t, "Real", 3, "x"), msg(t, "Real", 0, "dup"), msg(t, "Real", 2, "y")}},
	})
	ta, tb := a.(*TransactionResult), b.(*TransactionResult)
	for i := range ta.Ops {
		x, y := ta.Ops[i], tb.Ops[i]
		if (x.Err == nil) != (y.Err == nil) || x.Message.QueueID != y.Message.QueueID || x.Message.QueueOffset != y.Message.QueueOffset {
			t.Fatalf("op %d: copying %+v, single write %+v", i, x, y)
		}
	}
	if tb.Ops[0].Message.QueueID != 2 || tb.Ops[1].Message.QueueID != 3 || !errors.Is(tb.Ops[2].Err, ErrTransactionDecided) {
		t.Fatalf("transaction results on the wrong ops: %+v", tb.Ops)
	}

	// An entry raft's log stored whole has no records to apply: every message is
	// refused alike on every replica of this layout.
	tf.splitWhole = true
	_, b = tf.apply(PutMessages{StoreTimestamp: 1700000000500, StoreHost: leaderHost, Messages: [][]byte{msg(t, "Real", 1, "w")}})
	if pb := b.(*PutResult); !errors.Is(pb.Err, store.ErrMessageIllegal) || !errors.Is(pb.Results[0].Err, store.ErrMessageIllegal) {
		t.Fatalf("entry stored whole: %+v, want MESSAGE_ILLEGAL", pb)
	}
	_, b = tf.apply(PutMessages{StoreTimestamp: 1700000000600, StoreHost: leaderHost, Messages: [][]byte{msg(t, "Real", 1, "after")}})
	if got := b.(*PutResult).Results[0].QueueOffset; got != 3 {
		t.Fatalf("queue 1 after the whole entry: offset %d, want 3 (the refused messages took none)", got)
	}
}
