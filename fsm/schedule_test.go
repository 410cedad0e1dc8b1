package fsm

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/store"
)

func deliverCmd(t testing.TB, from, to store.QueueOffset, bodies ...string) DeliverScheduled {
	var recs [][]byte
	for _, b := range bodies {
		recs = append(recs, msg(t, "Real", 1, b))
	}
	return DeliverScheduled{
		Advances: []ScheduleAdvance{{Level: 2, From: from, To: to}, {Level: 5, From: 0, To: 0}},
		Put:      PutMessages{StoreTimestamp: 1700000000999, StoreHost: leaderHost, Messages: recs},
	}
}

// TestGoldenDeliverScheduled pins code 24 and its encoding, like TestGoldenCommands
// does for the older codes.
func TestGoldenDeliverScheduled(t *testing.T) {
	if uint8(CmdDeliverScheduled) != 24 {
		t.Fatalf("%s = %d, pinned 24", CmdDeliverScheduled, uint8(CmdDeliverScheduled))
	}
	c := deliverCmd(t, 3, 5, "a", "b")
	b := enc(t, c)
	path := filepath.Join("testdata", "24_deliver_scheduled.golden")
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
	if len(b) != DeliverScheduledSize(len(c.Advances), c.Put.StoreHost, c.Put.Messages) {
		t.Errorf("DeliverScheduledSize = %d, encoded %d", DeliverScheduledSize(len(c.Advances), c.Put.StoreHost, c.Put.Messages), len(b))
	}
	d, err := DecodeCommand(b)
	if err != nil {
		t.Fatal(err)
	}
	got := *d.(*DeliverScheduled)
	if !reflect.DeepEqual(got.Advances, c.Advances) || !equalPut(got.Put, c.Put) {
		t.Fatalf("round trip:\n%#v\nwant\n%#v", got, c)
	}
	if Type(b).String() != "DeliverScheduled" {
		t.Errorf("String() = %s", Type(b))
	}
}

func TestDecodeDeliverScheduledRejects(t *testing.T) {
	good := enc(t, deliverCmd(t, 0, 1, "x"))
	back := bytes.Clone(good)
	back[2+4+4+7] = 9 // first advance: from=9 > to=1
	cases := map[string][]byte{
		"short":          {24, 1, 0, 0},
		"huge count":     {24, 1, 0xFF, 0xFF, 0xFF, 0xFF},
		"moves back":     back,
		"truncated puts": good[:len(good)-1],
		"trailing":       append(bytes.Clone(good), 0),
	}
	for name, b := range cases {
		if _, err := DecodeCommand(b); !errors.Is(err, ErrBadCommand) {
			t.Errorf("%s: err %v", name, err)
		}
	}
	if _, err := Encode(nil, DeliverScheduled{Advances: []ScheduleAdvance{{Level: 1, From: 2, To: 1}}}); !errors.Is(err, ErrBadCommand) {
		t.Errorf("encode of a backwards advance: %v", err)
	}
}

// TestApplyDeliverScheduledIsACompareAndSet: the re-puts and the progress move
// together, and an entry whose From no longer matches (proposed twice, or by a
// deposed leader) stores nothing.
func TestApplyDeliverScheduledIsACompareAndSet(t *testing.T) {
	st := newFakeStore()
	f := newFSM(t, st, t.TempDir())
	f.Apply(cmdLog(1, enc(t, TopicUpsert{Topic: TopicConfig{Name: "Real", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}})))
	first := enc(t, deliverCmd(t, 0, 2, "a", "b"))
	res := f.Apply(cmdLog(2, first)).(*PutResult)
	if res.Err != nil || len(res.Results) != 2 || res.Results[1].QueueOffset != 1 {
		t.Fatalf("first delivery: %+v", res)
	}
	if p := f.Metadata().ScheduleProgress(); p[2] != 2 || p[5] != 0 {
		t.Fatalf("progress %v, want level 2 at 2", p)
	}
	end := st.MaxPhysicalOffset()
	// The same entry again (an unknown-outcome retry that raced the first).
	res = f.Apply(cmdLog(3, first)).(*PutResult)
	if !errors.Is(res.Err, ErrScheduleConflict) || !errors.Is(res.Results[0].Err, ErrScheduleConflict) {
		t.Fatalf("duplicate entry: %+v", res)
	}
	if st.MaxPhysicalOffset() != end {
		t.Fatal("a conflicting entry stored messages")
	}
	if p := f.Metadata().ScheduleProgress(); p[2] != 2 {
		t.Fatalf("progress moved to %v on a conflict", p)
	}
	// The next range applies; a message for a missing topic is dropped, not blocking.
	next := deliverCmd(t, 2, 4, "c")
	next.Put.Messages = append(next.Put.Messages, msg(t, "Gone", 0, "d"))
	res = f.Apply(cmdLog(4, enc(t, next))).(*PutResult)
	if res.Err != nil || res.Results[0].Err != nil || !errors.Is(res.Results[1].Err, ErrTopicNotFound) {
		t.Fatalf("next delivery: %+v", res)
	}
	if p := f.Metadata().ScheduleProgress(); p[2] != 4 {
		t.Fatalf("progress %v, want level 2 at 4", p)
	}
}

// TestDeliverScheduledDeterministic: two replicas applying the same log end with the
// same bytes and the same progress, whatever the batching.
func TestDeliverScheduledDeterministic(t *testing.T) {
	var ls [][]byte
	ls = append(ls, enc(t, TopicUpsert{Topic: TopicConfig{Name: "Real", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}}))
	for i := range 20 {
		from := store.QueueOffset(i * 2)
		if i%7 == 3 {
			from++ // a stale entry among the good ones
		}
		ls = append(ls, enc(t, deliverCmd(t, from, store.QueueOffset(i*2+2), "x", "y")))
	}
	run := func(batch int) ([]byte, map[int32]store.QueueOffset) {
		st := newFakeStore()
		f := newFSM(t, st, t.TempDir())
		logs := make([]*raft.Log, 0, len(ls))
		for i, b := range ls {
			logs = append(logs, cmdLog(uint64(i+1), b))
		}
		applyAll(f, logs, batch)
		return bytesOf(t, st), f.Metadata().ScheduleProgress()
	}
	b1, p1 := run(1)
	b2, p2 := run(5)
	if !bytes.Equal(b1, b2) || !reflect.DeepEqual(p1, p2) {
		t.Fatalf("replicas diverged: %d vs %d bytes, progress %v vs %v", len(b1), len(b2), p1, p2)
	}
	if p1[2] != 6 {
		// Entry 3 (i=3) is stale, so every later From mismatches too: progress stops at 6.
		t.Fatalf("progress %v, want level 2 at 6", p1)
	}
}
