package fsm

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

const aclDocV1 = "accounts:\n  - accessKey: adminAK01\n    secretKey: admin-secret\n    admin: true\n"

// TestGoldenACLSet pins code 16 and its encoding.
func TestGoldenACLSet(t *testing.T) {
	if uint8(CmdACLSet) != 16 {
		t.Fatalf("%s = %d, pinned 16", CmdACLSet, uint8(CmdACLSet))
	}
	c := ACLSet{Version: 3, Document: []byte(aclDocV1)}
	b := enc(t, c)
	path := filepath.Join("testdata", "16_acl_set.golden")
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
	if got := *d.(*ACLSet); !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip:\n%#v\nwant\n%#v", got, c)
	}
	if Type(b).String() != "ACLSet" {
		t.Errorf("String() = %s", Type(b))
	}
}

func TestDecodeACLSetRejects(t *testing.T) {
	good := enc(t, ACLSet{Version: 1, Document: []byte("accounts: []")})
	cases := map[string][]byte{
		"short":      {16, 1, 0, 0, 0},
		"truncated":  good[:len(good)-1],
		"trailing":   append(bytes.Clone(good), 0),
		"huge count": {16, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF},
	}
	for name, b := range cases {
		if _, err := DecodeCommand(b); !errors.Is(err, ErrBadCommand) {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

func TestApplyACLSet(t *testing.T) {
	f := newFSM(t, newFakeStore(), t.TempDir())
	if _, _, ok := f.Metadata().ACLDocument(); ok {
		t.Fatal("a fresh FSM has an ACL document")
	}
	data := enc(t, ACLSet{Version: 1, Document: []byte(aclDocV1)})
	res := f.Apply(cmdLog(1, data)).(*ConfigResult)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	// The stored document must not alias the log entry.
	for i := range data {
		data[i] = 'x'
	}
	doc, v, ok := f.Metadata().ACLDocument()
	if !ok || v != 1 || string(doc) != aclDocV1 {
		t.Fatalf("ACLDocument = %q v%d ok=%v", doc, v, ok)
	}
	// A stale version (a second proposer that read version 0) changes nothing.
	res = f.Apply(cmdLog(2, enc(t, ACLSet{Version: 1, Document: []byte("accounts: []")}))).(*ConfigResult)
	if !errors.Is(res.Err, ErrACLVersionConflict) {
		t.Fatalf("stale version: %v", res.Err)
	}
	// Too large: a result, not a panic; nothing changes.
	big := bytes.Repeat([]byte("#"), MaxACLDocument+1)
	res = f.Apply(cmdLog(3, enc(t, ACLSet{Version: 2, Document: big}))).(*ConfigResult)
	if !errors.Is(res.Err, ErrACLTooLarge) {
		t.Fatalf("too large: %v", res.Err)
	}
	if doc, v, _ := f.Metadata().ACLDocument(); v != 1 || string(doc) != aclDocV1 {
		t.Fatalf("refused commands changed the document: v%d %q", v, doc)
	}
	// An empty document is a document (every account removed).
	if res := f.Apply(cmdLog(4, enc(t, ACLSet{Version: 2}))).(*ConfigResult); res.Err != nil {
		t.Fatal(res.Err)
	}
	if doc, v, ok := f.Metadata().ACLDocument(); !ok || v != 2 || len(doc) != 0 {
		t.Fatalf("empty document: %q v%d ok=%v", doc, v, ok)
	}
	if f.Metadata().DataVersion() != 0 {
		t.Fatalf("an ACL change moved the topic DataVersion to %d", f.Metadata().DataVersion())
	}
}

func TestACLDocumentInCheckpointAndSnapshot(t *testing.T) {
	ls := workload(t, 10)
	ls = append(ls, cmdLog(uint64(len(ls)+1), enc(t, ACLSet{Version: 1, Document: []byte(aclDocV1)})))
	st, dir := newFakeStore(), t.TempDir()
	f := newFSM(t, st, dir)
	applyAll(f, ls, 3)
	if err := f.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	// Restart from the checkpoint.
	g := newFSM(t, st, dir)
	if doc, v, ok := g.Metadata().ACLDocument(); !ok || v != 1 || string(doc) != aclDocV1 {
		t.Fatalf("after restart: %q v%d ok=%v", doc, v, ok)
	}
	// Snapshot into a fresh node.
	snap := snapshotBytes(t, g)
	h := newFSM(t, newFakeStore(), t.TempDir())
	if err := h.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
		t.Fatal(err)
	}
	if doc, v, ok := h.Metadata().ACLDocument(); !ok || v != 1 || string(doc) != aclDocV1 {
		t.Fatalf("after restore: %q v%d ok=%v", doc, v, ok)
	}
	ma, _ := f.Metadata().marshal()
	mh, _ := h.Metadata().marshal()
	if !bytes.Equal(ma, mh) {
		t.Fatalf("images differ:\n%s\n%s", ma, mh)
	}
	// The next version applies on the restored node.
	res := h.Apply(cmdLog(uint64(len(ls)+1), enc(t, ACLSet{Version: 2, Document: []byte("accounts: []")}))).(*ConfigResult)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
}

// TestImageWithoutACLLoadsAsNeverSet: images written before ACLs were
// replicated have no "acl" key; they load with no document, and an image of
// state without one still has no key (so old and new nodes agree on bytes).
func TestImageWithoutACLLoadsAsNeverSet(t *testing.T) {
	m := newMetadata()
	old := []byte(`{"dataVersion":4,"segmentSize":0,"topics":[],"groups":[],"offsets":[],"schedule":[]}`)
	img, err := unmarshalImage(old)
	if err != nil {
		t.Fatal(err)
	}
	m.install(img)
	if _, _, ok := m.ACLDocument(); ok {
		t.Fatal("old image installed an ACL document")
	}
	b, _ := m.marshal()
	if !bytes.Equal(b, old) {
		t.Fatalf("image of an ACL-less state changed:\n%s\n%s", b, old)
	}
	// And a version survives the image even with an empty document.
	if err := m.setACL(&ACLSet{Version: 1}); err != nil {
		t.Fatal(err)
	}
	b, _ = m.marshal()
	img, _ = unmarshalImage(b)
	n := newMetadata()
	n.install(img)
	if doc, v, ok := n.ACLDocument(); !ok || v != 1 || len(doc) != 0 {
		t.Fatalf("empty document through an image: %q v%d ok=%v", doc, v, ok)
	}
}

func TestACLSetPayloadLayout(t *testing.T) {
	b := enc(t, ACLSet{Version: 0x0102, Document: []byte("ab")})
	if b[0] != 16 || b[1] != 1 || binary.BigEndian.Uint64(b[2:]) != 0x0102 || binary.BigEndian.Uint32(b[10:]) != 2 || string(b[14:]) != "ab" {
		t.Fatalf("layout % x", b)
	}
}
