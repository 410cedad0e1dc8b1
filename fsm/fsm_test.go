package fsm

import (
	"bytes"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/store"
)

func TestApplyPutAssignsOffsetsAndPatchesHostAndTimestamp(t *testing.T) {
	st := newFakeStore()
	f := newFSM(t, st, t.TempDir())
	f.Apply(cmdLog(1, enc(t, TopicUpsert{Topic: TopicConfig{Name: "T", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}})))
	host := netip.MustParseAddrPort("10.9.8.7:10911") // differs from the encoded leaderHost
	recs := [][]byte{msg(t, "T", 0, "a"), msg(t, "T", 1, "b"), msg(t, "T", 0, "c")}
	orig := bytes.Clone(recs[0])
	data := enc(t, PutMessages{StoreTimestamp: 4242, StoreHost: host, Messages: recs})
	dataCopy := bytes.Clone(data)
	res := f.Apply(cmdLog(2, data)).(*PutResult)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	wantQO := []store.QueueOffset{0, 0, 1}
	var phys store.PhysicalOffset
	for i, r := range res.Results {
		if r.Err != nil {
			t.Fatalf("message %d: %v", i, r.Err)
		}
		if r.QueueOffset != wantQO[i] || r.PhysicalOffset != phys {
			t.Errorf("message %d: queueOffset=%d phys=%d, want %d %d", i, r.QueueOffset, r.PhysicalOffset, wantQO[i], phys)
		}
		h, off, err := store.ParseOffsetMsgID(r.OffsetMsgID)
		if err != nil || h != host || off != phys {
			t.Errorf("message %d: msgId %s → %v %d %v", i, r.OffsetMsgID, h, off, err)
		}
		m, err := store.DecodeMessage(st.data[phys:], true)
		if err != nil {
			t.Fatal(err)
		}
		if m.StoreHost != host || m.StoreTimestamp != 4242 || m.QueueOffset != wantQO[i] || m.PhysicalOffset != phys {
			t.Errorf("stored message %d: host=%v ts=%d qo=%d phys=%d", i, m.StoreHost, m.StoreTimestamp, m.QueueOffset, m.PhysicalOffset)
		}
		phys += store.PhysicalOffset(m.StoreSize)
	}
	if !bytes.Equal(data, dataCopy) || !bytes.Equal(recs[0], orig) {
		t.Error("Apply modified the raft log entry's bytes (the leader may still be sending them)")
	}
	if f.AppliedIndex() != 2 || f.CommitLogOffset() != phys {
		t.Errorf("applied=%d offset=%d, want 2 %d", f.AppliedIndex(), f.CommitLogOffset(), phys)
	}
}

func TestStoreHostWidthChangeReencodes(t *testing.T) {
	st := newFakeStore()
	f := newFSM(t, st, t.TempDir())
	f.Apply(cmdLog(1, enc(t, TopicUpsert{Topic: TopicConfig{Name: "T", WriteQueueNums: 1, ReadQueueNums: 1}})))
	host6 := netip.MustParseAddrPort("[2001:db8::1]:10911")
	res := f.Apply(cmdLog(2, enc(t, PutMessages{StoreTimestamp: 9, StoreHost: host6, Messages: [][]byte{msg(t, "T", 0, "x")}}))).(*PutResult)
	if r := res.Results[0]; r.Err != nil || len(r.OffsetMsgID) != 56 {
		t.Fatalf("result %+v", r)
	}
	m, err := store.DecodeMessage(st.data, true)
	if err != nil || m.StoreHost != host6 || string(m.Body) != "x" || m.BornHost != bornHost {
		t.Fatalf("stored %+v %v", m, err)
	}
}

func TestApplyBatchPerMessageResultsInOrder(t *testing.T) {
	st := newFakeStore()
	f := newFSM(t, st, t.TempDir())
	bad := msg(t, "T", 0, "bad")
	bad[5] ^= 0xFF // magic
	ls := []*raft.Log{
		cmdLog(1, enc(t, TopicUpsert{Topic: TopicConfig{Name: "T", ReadQueueNums: 2, WriteQueueNums: 2}})),
		{Index: 2, Term: 1, Type: raft.LogConfiguration},
		cmdLog(3, enc(t, PutMessages{StoreTimestamp: 1, StoreHost: leaderHost, Messages: [][]byte{
			msg(t, "T", 1, "ok0"), msg(t, "Missing", 0, "x"), msg(t, "T", 2, "badqueue"), bad, msg(t, "T", 1, "ok1"),
		}})),
		cmdLog(4, enc(t, TopicDelete{Topic: "Nope"})),
		cmdLog(5, enc(t, PutMessages{StoreTimestamp: 2, StoreHost: leaderHost, Messages: [][]byte{msg(t, "T", 1, "ok2")}})),
	}
	out := f.ApplyBatch(ls)
	if len(out) != len(ls) {
		t.Fatalf("%d responses for %d logs", len(out), len(ls))
	}
	if r := out[0].(*ConfigResult); r.Err != nil || r.DataVersion != 1 {
		t.Errorf("topic upsert: %+v", r)
	}
	if out[1] != nil {
		t.Errorf("configuration entry answered %v", out[1])
	}
	p := out[2].(*PutResult)
	wantErr := []error{nil, ErrTopicNotFound, ErrQueueIDInvalid, store.ErrMessageIllegal, nil}
	for i, r := range p.Results {
		if (wantErr[i] == nil) != (r.Err == nil) || (wantErr[i] != nil && !errors.Is(r.Err, wantErr[i])) {
			t.Errorf("message %d: err %v, want %v", i, r.Err, wantErr[i])
		}
	}
	if p.Results[0].QueueOffset != 0 || p.Results[4].QueueOffset != 1 || p.Results[4].PhysicalOffset <= p.Results[0].PhysicalOffset {
		t.Errorf("accepted messages: %+v %+v", p.Results[0], p.Results[4])
	}
	if r := out[3].(*ConfigResult); !errors.Is(r.Err, ErrTopicNotFound) {
		t.Errorf("delete of missing topic: %v", r.Err)
	}
	if r := out[4].(*PutResult); r.Results[0].Err != nil || r.Results[0].QueueOffset != 2 {
		t.Errorf("next put: %+v", r.Results[0])
	}
	if f.AppliedIndex() != 5 {
		t.Errorf("applied %d", f.AppliedIndex())
	}
}

func TestStoreRejectionIsAResultAndIOFailureStops(t *testing.T) {
	st := newFakeStore()
	f := newFSM(t, st, t.TempDir())
	f.Apply(cmdLog(1, enc(t, TopicUpsert{Topic: TopicConfig{Name: "T", WriteQueueNums: 1}})))
	put := func(i uint64) any {
		return f.Apply(cmdLog(i, enc(t, PutMessages{StoreTimestamp: 1, StoreHost: leaderHost, Messages: [][]byte{msg(t, "T", 0, "x")}})))
	}
	st.appendErr = store.ErrMessageIllegal
	if r := put(2).(*PutResult); !errors.Is(r.Err, store.ErrMessageIllegal) || !errors.Is(r.Results[0].Err, store.ErrMessageIllegal) {
		t.Fatalf("rejected batch: %+v", r)
	}
	st.appendErr = errors.New("no space left on device")
	m := mustPanic(t, func() { put(3) })
	if !strings.Contains(m, "raft index 3") || !strings.Contains(m, "no space left") {
		t.Errorf("panic message %q", m)
	}
}

func TestUndecodableCommandPanicsNamingIndexAndType(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want []string
	}{
		{"unknown type", []byte{99, 1, 0}, []string{"raft index 7", "type 99"}},
		{"unknown version", []byte{byte(CmdTopicDelete), 9, 0, 1, 'x', 0}, []string{"raft index 7", "type 3 (TopicDelete)"}},
		{"truncated put", enc(t, PutMessages{StoreHost: leaderHost, Messages: [][]byte{msg(t, "T", 0, "x")}})[:30], []string{"raft index 7", "type 1 (PutMessages)"}},
		{"empty", nil, []string{"raft index 7", "type 0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFSM(t, newFakeStore(), t.TempDir())
			m := mustPanic(t, func() { f.Apply(cmdLog(7, c.data)) })
			for _, w := range c.want {
				if !strings.Contains(m, w) {
					t.Errorf("panic %q lacks %q", m, w)
				}
			}
			if f.AppliedIndex() != 0 {
				t.Errorf("applied index moved to %d past a corrupt entry", f.AppliedIndex())
			}
		})
	}
}

func TestDeterminismAcrossReplicasAndBatching(t *testing.T) {
	ls := workload(t, 60)
	a, b := newFakeStore(), newFakeStore()
	fa, fb := newFSM(t, a, t.TempDir()), newFSM(t, b, t.TempDir())
	ra, rb := applyAll(fa, ls, 1), applyAll(fb, ls, 7)
	if !bytes.Equal(a.data, b.data) || len(a.data) == 0 {
		t.Fatalf("CommitLogs differ: %d vs %d bytes", len(a.data), len(b.data))
	}
	for i := range ra {
		pa, ok := ra[i].(*PutResult)
		if !ok {
			continue
		}
		pb := rb[i].(*PutResult)
		for j := range pa.Results {
			if pa.Results[j] != pb.Results[j] {
				t.Fatalf("entry %d message %d: %+v vs %+v", i, j, pa.Results[j], pb.Results[j])
			}
		}
	}
	ma, _ := fa.Metadata().marshal()
	mb, _ := fb.Metadata().marshal()
	if !bytes.Equal(ma, mb) {
		t.Fatalf("metadata differs:\n%s\n%s", ma, mb)
	}
}

func TestRestartWithCheckpointReplaysWithoutDuplicates(t *testing.T) {
	ls := workload(t, 50)
	ref := newFakeStore()
	applyAll(newFSM(t, ref, t.TempDir()), ls, 4)

	st, dir := newFakeStore(), t.TempDir()
	f := newFSM(t, st, dir)
	applyAll(f, ls[:30], 4)
	if err := f.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	ckOff := f.CommitLogOffset()
	applyAll(f, ls[30:45], 4) // the CommitLog runs ahead of the checkpoint, then a crash
	if st.MaxPhysicalOffset() <= ckOff {
		t.Fatal("test needs bytes past the checkpoint")
	}

	f2 := newFSM(t, st, dir)
	if f2.AppliedIndex() != 30 || st.MaxPhysicalOffset() != ckOff {
		t.Fatalf("after restart applied=%d max=%d, want 30 %d", f2.AppliedIndex(), st.MaxPhysicalOffset(), ckOff)
	}
	// raft replays from its own snapshot index (here: everything); ≤ 30 is skipped.
	out := applyAll(f2, ls, 4)
	for i := 0; i < 30; i++ {
		if out[i] != nil {
			t.Fatalf("entry %d re-applied: %v", i+1, out[i])
		}
	}
	if !bytes.Equal(st.data, ref.data) {
		t.Fatalf("CommitLog after replay: %d bytes, reference %d", len(st.data), len(ref.data))
	}
	for tq, qo := range ref.queues {
		if st.queues[tq] != qo {
			t.Errorf("queue %v: next offset %d, reference %d", tq, st.queues[tq], qo)
		}
	}
	if _, ok := f2.Metadata().ConsumerOffset("GroupA", "TopicA", 1); !ok {
		t.Error("consumer offsets lost across restart")
	}
}

func TestNoCheckpointCutsEverything(t *testing.T) {
	st := newFakeStore()
	applyAll(newFSM(t, st, t.TempDir()), workload(t, 5), 1)
	f := newFSM(t, st, t.TempDir()) // another dir: no checkpoint
	if f.AppliedIndex() != 0 || st.MaxPhysicalOffset() != 0 {
		t.Fatalf("applied=%d max=%d", f.AppliedIndex(), st.MaxPhysicalOffset())
	}
}

func TestCheckpointAheadOfStoreIsAnError(t *testing.T) {
	st, dir := newFakeStore(), t.TempDir()
	f := newFSM(t, st, dir)
	applyAll(f, workload(t, 5), 1)
	if err := f.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Store: newFakeStore(), Dir: dir}); !errors.Is(err, ErrCheckpointAhead) {
		t.Fatalf("New with a lost CommitLog: %v", err)
	}
}

func TestCheckpointWaitsForFlush(t *testing.T) {
	st, dir := newFakeStore(), t.TempDir()
	f := newFSM(t, st, dir)
	applyAll(f, workload(t, 3), 1)
	st.flushLag = 10
	if err := f.Checkpoint(); err == nil {
		t.Fatal("checkpoint written while the CommitLog was not durable to its offset")
	}
	if _, err := os.Stat(filepath.Join(dir, CheckpointFile)); !os.IsNotExist(err) {
		t.Fatalf("checkpoint file exists: %v", err)
	}
	st.flushLag = 0
	if err := f.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	ck, found, err := readCheckpoint(dir)
	if err != nil || !found || ck.AppliedIndex != f.AppliedIndex() || ck.CommitLogOffset != f.CommitLogOffset() {
		t.Fatalf("checkpoint %+v found=%v err=%v", ck, found, err)
	}
}

func TestCorruptCheckpointIsAnError(t *testing.T) {
	st, dir := newFakeStore(), t.TempDir()
	f := newFSM(t, st, dir)
	applyAll(f, workload(t, 3), 1)
	if err := f.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, CheckpointFile)
	b, _ := os.ReadFile(p)
	b[len(b)-3] ^= 1
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Store: st, Dir: dir}); !errors.Is(err, ErrCheckpointCorrupt) {
		t.Fatalf("New: %v", err)
	}
}

func TestSegmentSizePin(t *testing.T) {
	f, err := New(Config{Store: newFakeStore(), Dir: t.TempDir(), SegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.Apply(cmdLog(1, enc(t, PinSegmentSize{SegmentSize: 1 << 20}))).(*ConfigResult); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := f.Apply(cmdLog(2, enc(t, PinSegmentSize{SegmentSize: 1 << 21}))).(*ConfigResult); !errors.Is(r.Err, ErrSegmentSizeConflict) {
		t.Fatalf("repin: %v", r.Err)
	}
	other, _ := New(Config{Store: newFakeStore(), Dir: t.TempDir(), SegmentSize: 1 << 22})
	m := mustPanic(t, func() { other.Apply(cmdLog(5, enc(t, PinSegmentSize{SegmentSize: 1 << 20}))) })
	if !strings.Contains(m, "raft index 5") || !strings.Contains(m, "4194304") {
		t.Errorf("panic %q", m)
	}
}

func TestReplayedIndexesAreSkipped(t *testing.T) {
	st := newFakeStore()
	f := newFSM(t, st, t.TempDir())
	ls := workload(t, 3)
	applyAll(f, ls, 1)
	max := st.MaxPhysicalOffset()
	if out := applyAll(f, ls, 2); out[len(out)-1] != nil || st.MaxPhysicalOffset() != max {
		t.Fatal("an index at or below appliedIndex was applied again")
	}
}
