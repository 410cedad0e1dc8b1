package fsm

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestGoldenOffsetReset pins code 27 and its encoding.
func TestGoldenOffsetReset(t *testing.T) {
	if uint8(CmdOffsetReset) != 27 {
		t.Fatalf("%s = %d, pinned 27", CmdOffsetReset, uint8(CmdOffsetReset))
	}
	c := OffsetReset{At: 1764620000123, Offsets: []OffsetEntry{{Group: "g", Topic: "T", QueueID: 0, Offset: 320}, {Group: "g", Topic: "T", QueueID: 3, Offset: 7}}}
	b := enc(t, c)
	path := filepath.Join("testdata", "27_offset_reset.golden")
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
	if got := *d.(*OffsetReset); !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip:\n%#v\nwant\n%#v", got, c)
	}
	if Type(b).String() != "OffsetReset" {
		t.Errorf("String() = %s", Type(b))
	}
}

func TestDecodeOffsetResetRejects(t *testing.T) {
	good := enc(t, OffsetReset{At: 5, Offsets: []OffsetEntry{{Group: "g", Topic: "T", Offset: 1}}})
	for name, b := range map[string][]byte{
		"no time":       {27, 1, 0, 0},
		"no count":      good[:2+8],
		"short entry":   good[:len(good)-1],
		"trailing byte": append(append([]byte{}, good...), 0),
		"version 2":     append([]byte{27, 2}, good[2:]...),
	} {
		if _, err := DecodeCommand(b); !errors.Is(err, ErrBadCommand) {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

// TestApplyOffsetReset: a reset sets the offsets (backwards too) and leaves a
// mark every node reads; a later ConsumerOffsets moves the offset, not the mark.
func TestApplyOffsetReset(t *testing.T) {
	f := newFSM(t, newFakeStore(), t.TempDir())
	m := f.Metadata()
	f.Apply(cmdLog(1, enc(t, ConsumerOffsets{Offsets: []OffsetEntry{{Group: "g", Topic: "T", QueueID: 1, Offset: 900}}})))
	if _, ok := m.LastReset("g", "T", 1); ok {
		t.Fatal("a commit left a reset mark")
	}
	res := f.Apply(cmdLog(2, enc(t, OffsetReset{At: 1000, Offsets: []OffsetEntry{{Group: "g", Topic: "T", QueueID: 1, Offset: 300}}}))).(*ConfigResult)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if off, _ := m.ConsumerOffset("g", "T", 1); off != 300 {
		t.Fatalf("offset after the reset %d, want 300", off)
	}
	if r, ok := m.LastReset("g", "T", 1); !ok || r != (ResetMark{Offset: 300, At: 1000}) {
		t.Fatalf("mark %+v %v", r, ok)
	}
	f.Apply(cmdLog(3, enc(t, ConsumerOffsets{Offsets: []OffsetEntry{{Group: "g", Topic: "T", QueueID: 1, Offset: 310}}})))
	if off, _ := m.ConsumerOffset("g", "T", 1); off != 310 {
		t.Fatalf("offset after a later commit %d, want 310", off)
	}
	if r, _ := m.LastReset("g", "T", 1); r.Offset != 300 {
		t.Fatalf("a commit moved the mark: %+v", r)
	}
	if _, ok := m.LastReset("g", "T", 0); ok {
		t.Fatal("a queue never reset has a mark")
	}
}
