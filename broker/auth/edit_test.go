package auth

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tsign "github.com/rocketraft/rocketraft/transport/sign"
)

const editBase = `
globalWhiteRemoteAddresses: [10.10.103.*]
accounts:
  - accessKey: RocketMQ
    secretKey: 12345678
    whiteRemoteAddress: 192.168.0.*
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms: [topicB=PUB|SUB, topicA=DENY]
    groupPerms: ["%RETRY%groupA=DENY"]
  - accessKey: adminAK01
    secretKey: "admin: secret # not a comment"
    admin: true
`

func mustParse(t *testing.T, doc string) *ACL {
	t.Helper()
	a, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestDocumentRoundTrips: Parse(Document(a)) is a, secrets included (the ACL
// keeps them in memory only, so the document is the only place they live).
func TestDocumentRoundTrips(t *testing.T) {
	a := mustParse(t, editBase)
	doc, err := a.Document()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(doc)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip differs:\n%s", doc)
	}
	again, _ := b.Document()
	if string(again) != string(doc) {
		t.Fatalf("rendering is not deterministic:\n%s\n%s", doc, again)
	}
	if !reflect.DeepEqual(mustParse(t, "accounts: []"), mustParse(t, string(mustDoc(t, mustParse(t, ""))))) {
		t.Fatal("empty ACL does not round-trip")
	}
}

func mustDoc(t *testing.T, a *ACL) []byte {
	t.Helper()
	d, err := a.Document()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func ptr(s string) *string { return &s }

var noAddr netip.Addr

func TestWithAccount(t *testing.T) {
	a := mustParse(t, editBase)
	// Create: defaults DENY, lists parsed, %RETRY% dropped from groups.
	b, err := a.WithAccount(AccountUpdate{AccessKey: "newAccount", SecretKey: "new-secret", DefaultGroupPerm: ptr("SUB"),
		TopicPerms: ptr("Orders=PUB, Audit=PUB|SUB"), GroupPerms: ptr("%RETRY%billing=SUB")})
	if err != nil {
		t.Fatal(err)
	}
	acc, ok := b.account("newAccount")
	if !ok || acc.SecretKey != "new-secret" || acc.Admin || acc.DefaultTopicPerm != PermDeny || acc.DefaultGroupPerm != PermSub ||
		acc.TopicPerms["Orders"] != PermPub || acc.TopicPerms["Audit"] != PermPub|PermSub || acc.GroupPerms["billing"] != PermSub {
		t.Fatalf("created %+v", acc)
	}
	if _, ok := a.account("newAccount"); ok {
		t.Fatal("WithAccount changed its receiver")
	}
	// Update: absent fields keep their value, admin is always written (an update
	// without admin demotes), a blank list clears.
	c, err := b.WithAccount(AccountUpdate{AccessKey: "adminAK01", SecretKey: "rotated-secret", TopicPerms: ptr("")})
	if err != nil {
		t.Fatal(err)
	}
	acc, _ = c.account("adminAK01")
	if acc.Admin || acc.SecretKey != "rotated-secret" || len(acc.TopicPerms) != 0 {
		t.Fatalf("updated %+v", acc)
	}
	acc, _ = c.account("RocketMQ")
	d, err := c.WithAccount(AccountUpdate{AccessKey: "RocketMQ", SecretKey: "12345678", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := d.account("RocketMQ")
	if !kept.Admin || kept.White == nil || kept.White.String() != acc.White.String() || !reflect.DeepEqual(kept.TopicPerms, acc.TopicPerms) ||
		kept.DefaultGroupPerm != PermSub {
		t.Fatalf("absent fields not kept: %+v", kept)
	}
	e, err := d.WithAccount(AccountUpdate{AccessKey: "RocketMQ", SecretKey: "12345678", WhiteRemoteAddress: ptr("")})
	if err != nil {
		t.Fatal(err)
	}
	if acc, _ := e.account("RocketMQ"); acc.White != nil {
		t.Fatal("a blank whiteRemoteAddress must clear it")
	}

	refused := []struct {
		name string
		u    AccountUpdate
		want string
	}{
		{"no access key", AccountUpdate{SecretKey: "long-enough"}, "accessKey is required"},
		{"short access key", AccountUpdate{AccessKey: "abc", SecretKey: "long-enough"}, "accessKey is required"},
		{"no secret on update", AccountUpdate{AccessKey: "RocketMQ"}, "secretKey is required"},
		{"short secret", AccountUpdate{AccessKey: "RocketMQ", SecretKey: "123456"}, "at least 7"},
		{"bad perm", AccountUpdate{AccessKey: "RocketMQ", SecretKey: "12345678", DefaultTopicPerm: ptr("ANY")}, "permission"},
		{"bad resource", AccountUpdate{AccessKey: "RocketMQ", SecretKey: "12345678", TopicPerms: ptr("Orders")}, "name=PERM"},
		{"bad address", AccountUpdate{AccessKey: "RocketMQ", SecretKey: "12345678", WhiteRemoteAddress: ptr("1.2.*.4")}, "IP pattern"},
	}
	for _, r := range refused {
		_, err := a.WithAccount(r.u)
		if !errors.Is(err, ErrBadACL) || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: %v, want ErrBadACL naming %q", r.name, err, r.want)
		}
		if err != nil && (strings.Contains(err.Error(), "long-enough") || strings.Contains(err.Error(), "12345678")) {
			t.Errorf("%s: error quotes a secret: %v", r.name, err)
		}
	}
}

func TestWithoutAccountAndGlobalWhite(t *testing.T) {
	a := mustParse(t, editBase)
	b, err := a.WithoutAccount("RocketMQ")
	if err != nil {
		t.Fatal(err)
	}
	if got := b.AccessKeys(); len(got) != 1 || got[0] != "adminAK01" {
		t.Fatalf("after delete: %v", got)
	}
	if _, err := b.WithoutAccount("RocketMQ"); !errors.Is(err, ErrNoAccount) {
		t.Fatalf("delete unknown: %v", err)
	}
	c, err := b.WithGlobalWhite([]string{"127.0.0.1", " ", "10.0.0.*"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.GlobalWhite(); !reflect.DeepEqual(got, []string{"127.0.0.1", "10.0.0.*"}) {
		t.Fatalf("global white %v", got)
	}
	if _, err := c.WithGlobalWhite([]string{"1.2.*.4"}); !errors.Is(err, ErrBadACL) {
		t.Fatalf("bad pattern: %v", err)
	}
	if d, _ := c.WithGlobalWhite(nil); len(d.GlobalWhite()) != 0 {
		t.Fatal("empty list kept patterns")
	}
	for _, info := range a.Accounts() {
		if strings.Contains(strings.Join([]string{info.AccessKey, info.WhiteRemoteAddress, strings.Join(info.TopicPerms, ",")}, " "), "12345678") {
			t.Fatal("Accounts shows a secret")
		}
	}
	if got := a.Accounts()[0].TopicPerms; !reflect.DeepEqual(got, []string{"topicA=DENY", "topicB=PUB|SUB"}) {
		t.Fatalf("topic perms %v", got)
	}
}

// fakeDocs is a replicated document that counts reads.
type fakeDocs struct {
	doc     atomic.Pointer[[]byte]
	version atomic.Uint64
	reads   atomic.Int64
}

func (d *fakeDocs) ACLDocument() ([]byte, uint64, bool) {
	d.reads.Add(1)
	p := d.doc.Load()
	if p == nil {
		return nil, 0, false
	}
	return *p, d.version.Load(), true
}

func (d *fakeDocs) set(doc string) {
	b := []byte(doc)
	d.doc.Store(&b)
	d.version.Add(1)
}

func TestSourceFileThenReplicated(t *testing.T) {
	file := mustParse(t, editBase)
	docs := &fakeDocs{}
	now := time.Unix(1700000000, 0)
	s := NewSource(file, docs, nil, func() time.Time { return now })
	if c := s.Current(); c.ACL != file || c.Replicated {
		t.Fatalf("before any document: %+v", c)
	}
	next, _ := file.WithoutAccount("RocketMQ")
	docs.set(string(mustDoc(t, next)))
	c := s.Current()
	if !c.Replicated || c.Version != 1 || c.Stale || !reflect.DeepEqual(c.ACL, next) || !c.Since.Equal(now) {
		t.Fatalf("after a document: %+v", c)
	}
	// Cached: the same version is not parsed again.
	if s.Current() != c || s.ACL() != c.ACL {
		t.Fatal("same version parsed again")
	}
	// A document that does not parse keeps the previous ACL, once.
	docs.set("accounts: [{accessKey: short}]")
	bad := s.Current()
	if !bad.Stale || bad.Version != 2 || bad.ACL != c.ACL || s.Current() != bad {
		t.Fatalf("unparsable document: %+v", bad)
	}
	// The next good one is taken.
	docs.set(editBase)
	if c := s.Current(); c.Stale || c.Version != 3 || !reflect.DeepEqual(c.ACL, file) {
		t.Fatalf("good document after a bad one: %+v", c)
	}
	// A Source without documents is the file.
	if NewSource(file, nil, nil, nil).ACL() != file {
		t.Fatal("file-only source")
	}
}

func TestSourceStageUsesTheACLInForce(t *testing.T) {
	docs := &fakeDocs{}
	s := NewSource(mustParse(t, editBase), docs, nil, nil)
	ext := func(ak, sk string) map[string]string {
		return tsign.Credentials{AccessKey: ak, SecretKey: sk}.SignExt(map[string]string{"topic": "T"}, nil)
	}
	if err := s.ACL().Check(codeACLConfig, ext("adminAK01", "admin: secret # not a comment"), nil, noAddr); err != nil {
		t.Fatalf("file admin: %v", err)
	}
	next, err := s.ACL().WithAccount(AccountUpdate{AccessKey: "adminAK02", SecretKey: "second-admin", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	next, _ = next.WithoutAccount("adminAK01")
	docs.set(string(mustDoc(t, next)))
	if err := s.ACL().Check(codeACLConfig, ext("adminAK02", "second-admin"), nil, noAddr); err != nil {
		t.Fatalf("new admin: %v", err)
	}
	if err := s.ACL().Check(codeACLConfig, ext("adminAK01", "admin: secret # not a comment"), nil, noAddr); err == nil {
		t.Fatal("removed admin still allowed")
	}
}
