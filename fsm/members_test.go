package fsm

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestGoldenMemberUpsert pins code 26 and its encoding.
func TestGoldenMemberUpsert(t *testing.T) {
	if uint8(CmdMemberUpsert) != 26 {
		t.Fatalf("%s = %d, pinned 26", CmdMemberUpsert, uint8(CmdMemberUpsert))
	}
	c := MemberUpsert{Member: MemberInfo{ID: "n1", ClientAddr: "10.0.0.6:30921", Group: "RaftNode00"}}
	b := enc(t, c)
	path := filepath.Join("testdata", "26_member_upsert.golden")
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
	d, err := DecodeCommand(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := *d.(*MemberUpsert); !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip:\n%#v\nwant\n%#v", got, c)
	}
	if Type(b).String() != "MemberUpsert" {
		t.Errorf("String() = %s", Type(b))
	}
}

func TestDecodeMemberUpsertRejects(t *testing.T) {
	long := string(bytes.Repeat([]byte("a"), maxMemberField+1))
	for name, b := range map[string][]byte{
		"not json":     append([]byte{26, 1}, "{"...),
		"no id":        append([]byte{26, 1}, `{"clientAddr":"h:1"}`...),
		"no address":   append([]byte{26, 1}, `{"id":"n0"}`...),
		"long group":   append([]byte{26, 1}, `{"id":"n0","clientAddr":"h:1","group":"`+long+`"}`...),
		"version 2":    append([]byte{26, 2}, `{"id":"n0","clientAddr":"h:1"}`...),
		"wrong fields": append([]byte{26, 1}, `{"id":1}`...),
	} {
		if _, err := DecodeCommand(b); !errors.Is(err, ErrBadCommand) {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

func TestApplyMemberUpsert(t *testing.T) {
	f := newFSM(t, newFakeStore(), t.TempDir())
	if _, ok := f.Metadata().Member("n0"); ok {
		t.Fatal("a fresh FSM knows a member")
	}
	n0 := MemberInfo{ID: "n0", ClientAddr: "127.0.0.1:30911", Group: "RaftNode00"}
	n1 := MemberInfo{ID: "n1", ClientAddr: "127.0.0.1:30921", Group: "RaftNode00"}
	for i, c := range []MemberUpsert{{n1}, {n0}} {
		if res := f.Apply(cmdLog(uint64(i+1), enc(t, c))).(*ConfigResult); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	if got := f.Metadata().Members(); !reflect.DeepEqual(got, []MemberInfo{n0, n1}) {
		t.Fatalf("Members() = %+v", got)
	}
	// A later announcement replaces the member's entry (its address moved).
	moved := MemberInfo{ID: "n1", ClientAddr: "10.0.0.6:30921", Group: "RaftNode00"}
	f.Apply(cmdLog(3, enc(t, MemberUpsert{moved})))
	if got, ok := f.Metadata().Member("n1"); !ok || got != moved {
		t.Fatalf("Member(n1) = %+v %v, want %+v", got, ok, moved)
	}
	if f.Metadata().DataVersion() != 0 {
		t.Fatalf("a member change moved the topic DataVersion to %d", f.Metadata().DataVersion())
	}
}

// Members survive a restart from the checkpoint and travel in snapshots.
func TestMembersInCheckpointAndSnapshot(t *testing.T) {
	ls := workload(t, 5)
	n2 := MemberInfo{ID: "n2", ClientAddr: "127.0.0.1:30931", Group: "RaftNode00"}
	ls = append(ls, cmdLog(uint64(len(ls)+1), enc(t, MemberUpsert{n2})))
	st, dir := newFakeStore(), t.TempDir()
	f := newFSM(t, st, dir)
	applyAll(f, ls, 2)
	if err := f.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	g := newFSM(t, st, dir)
	if got, ok := g.Metadata().Member("n2"); !ok || got != n2 {
		t.Fatalf("after restart: %+v %v", got, ok)
	}
	h := newFSM(t, newFakeStore(), t.TempDir())
	if err := h.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, g)))); err != nil {
		t.Fatal(err)
	}
	if got := h.Metadata().Members(); !reflect.DeepEqual(got, []MemberInfo{n2}) {
		t.Fatalf("after restore: %+v", got)
	}
	ma, _ := f.Metadata().marshal()
	mh, _ := h.Metadata().marshal()
	if !bytes.Equal(ma, mh) {
		t.Fatalf("images differ:\n%s\n%s", ma, mh)
	}
}

// An image written before members were replicated has no "members" key: it
// loads with none, and the image of a state without members has no key either,
// so an upgraded node writes the bytes an old one would.
func TestImageWithoutMembersLoads(t *testing.T) {
	old := []byte(`{"dataVersion":2,"segmentSize":0,"topics":[],"groups":[],"offsets":[],"schedule":[]}`)
	img, err := unmarshalImage(old)
	if err != nil {
		t.Fatal(err)
	}
	m := newMetadata()
	m.install(img)
	if got := m.Members(); len(got) != 0 {
		t.Fatalf("old image installed members %+v", got)
	}
	if b, _ := m.marshal(); !bytes.Equal(b, old) {
		t.Fatalf("image of a member-less state changed:\n%s\n%s", b, old)
	}
	// After install, the map is usable (not nil): an upsert works.
	m.upsertMember(MemberInfo{ID: "n0", ClientAddr: "h:1"})
	if _, ok := m.Member("n0"); !ok {
		t.Fatal("upsert after installing an old image was lost")
	}
}
