package auth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePlainACL(t *testing.T) {
	acl, err := Parse([]byte(`
globalWhiteRemoteAddresses:
  - 10.10.103.*
  - ""
accounts:
  - accessKey: RocketMQ
    secretKey: 12345678
    whiteRemoteAddress: 192.168.0.*
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - topicA=DENY
      - topicB=PUB|SUB
    groupPerms:
      - "%RETRY%groupA=DENY"
  - accessKey: rocketmq2
    secretKey: "12345678"
    admin: true
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := acl.AccessKeys(); len(got) != 2 || got[0] != "RocketMQ" || got[1] != "rocketmq2" {
		t.Fatalf("accounts %v", got)
	}
	a, _ := acl.account("RocketMQ")
	if a.SecretKey != "12345678" {
		t.Error("a YAML integer secret must be read as its digits")
	}
	if a.TopicPerms["topicA"] != PermDeny || a.TopicPerms["topicB"] != PermPub|PermSub || a.GroupPerms["groupA"] != PermDeny {
		t.Errorf("perms %v %v", a.TopicPerms, a.GroupPerms)
	}
	if a.DefaultGroupPerm != PermSub || a.DefaultTopicPerm != PermDeny || a.White == nil {
		t.Errorf("defaults %v %v white %v", a.DefaultTopicPerm, a.DefaultGroupPerm, a.White)
	}
	if b, _ := acl.account("rocketmq2"); !b.Admin || b.DefaultTopicPerm != PermDeny {
		t.Errorf("admin account %+v: a missing default is DENY", b)
	}
	if len(acl.globalWhite) != 1 {
		t.Errorf("blank global patterns are skipped, got %d", len(acl.globalWhite))
	}
}

func TestParseReportsEveryProblemWithoutSecrets(t *testing.T) {
	_, err := Parse([]byte(`
globalWhiteRemoteAddresses: ["1.2.3.300"]
accounts:
  - accessKey: short
    secretKey: s3cr3t
  - accessKey: longenough
    secretKey: hunter22secret
    defaultTopicPerm: ANY
    topicPerms: ["noequals", "t=WRITE"]
  - accessKey: longenough
    secretKey: hunter22secret
`))
	if !errors.Is(err, ErrBadACL) {
		t.Fatalf("err = %v, want ErrBadACL", err)
	}
	msg := err.Error()
	for _, want := range []string{"globalWhiteRemoteAddresses[0]", `accessKey="short"`, "at least 7 characters",
		"defaultTopicPerm", "ANY", `topicPerms[0]="noequals"`, "WRITE", "appears twice"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	for _, secret := range []string{"s3cr3t", "hunter22secret"} {
		if strings.Contains(msg, secret) {
			t.Errorf("error quotes a secret %q:\n%s", secret, msg)
		}
	}
}

func TestLoadFileNamesThePath(t *testing.T) {
	if _, err := LoadFile(filepath.Join(t.TempDir(), "missing.yml")); err == nil || !strings.Contains(err.Error(), "aclFile=") {
		t.Fatalf("missing file: %v", err)
	}
	p := filepath.Join(t.TempDir(), "plain_acl.yml")
	if err := os.WriteFile(p, []byte("accounts: [ {accessKey: abcdefg, secretKey: 1234567} ]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	acl, err := LoadFile(p)
	if err != nil || len(acl.AccessKeys()) != 1 {
		t.Fatalf("load: %v", err)
	}
}
