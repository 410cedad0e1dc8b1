package adminapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/transport/sign"

	"github.com/rocketraft/rocketraft/broker/auth"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

const aclFile = `
globalWhiteRemoteAddresses: [10.10.103.*]
accounts:
  - accessKey: adminAK01
    secretKey: admin-secret
    admin: true
  - accessKey: producerAK
    secretKey: producer-secret
    topicPerms: [Orders=PUB]
`

var noAddr netip.Addr

func aclFixture(t *testing.T) (*fixture, *auth.Source) {
	t.Helper()
	fx := newFixture(t)
	file, err := auth.Parse([]byte(aclFile))
	if err != nil {
		t.Fatal(err)
	}
	src := auth.NewSource(file, fx.rep, nil, func() time.Time { return time.UnixMilli(1700000000123) })
	fx.api.d.ACL = src
	return fx, src
}

// respond runs a handler and maps its error as the chain does.
func respond(t *testing.T, h route.Handler, code transport.RequestCode, ext map[string]string) *transport.Command {
	t.Helper()
	return route.Respond(h(context.Background(), request(code, ext)))
}

func TestACLUpdateCreatesAndReplicates(t *testing.T) {
	fx, src := aclFixture(t)
	r := respond(t, fx.api.updateACL, transport.UpdateAndCreateACLConfig, map[string]string{
		"accessKey": "consumerAK", "secretKey": "consumer-secret", "defaultGroupPerm": "SUB",
		"topicPerms": "Orders=SUB,Audit=PUB|SUB", "groupPerms": "billing=SUB", "whiteRemoteAddress": "",
	})
	if r.ResponseCode() != transport.Success {
		t.Fatalf("%s %q", r.ResponseCode(), r.Remark)
	}
	doc, v, ok := fx.rep.ACLDocument()
	if !ok || v != 1 {
		t.Fatalf("replicated v%d ok=%v", v, ok)
	}
	parsed, err := auth.Parse(doc)
	if err != nil {
		t.Fatalf("the replicated document does not parse: %v", err)
	}
	if got := parsed.AccessKeys(); strings.Join(got, ",") != "adminAK01,consumerAK,producerAK" {
		t.Fatalf("accounts %v", got)
	}
	if c := src.Current(); !c.Replicated || c.Version != 1 {
		t.Fatalf("source did not move: %+v", c)
	}
	signedExt := sign.Credentials{AccessKey: "consumerAK", SecretKey: "consumer-secret"}.SignExt(
		map[string]string{"topic": "Orders", "consumerGroup": "billing"}, nil)
	if err := src.ACL().Check(transport.PullMessage, signedExt, nil, noAddr); err != nil {
		t.Fatalf("new account: %v", err)
	}
}

func TestACLWriteFailuresAnswerApacheCodes(t *testing.T) {
	fx, _ := aclFixture(t)
	cases := []struct {
		name string
		h    route.Handler
		code transport.RequestCode
		ext  map[string]string
		want transport.ResponseCode
		text string
	}{
		{"50 no access key", fx.api.updateACL, transport.UpdateAndCreateACLConfig, map[string]string{"secretKey": "long-secret"}, 209, "accessKey is required"},
		{"50 update without secret", fx.api.updateACL, transport.UpdateAndCreateACLConfig, map[string]string{"accessKey": "producerAK"}, 209, "secretKey is required"},
		{"50 short secret", fx.api.updateACL, transport.UpdateAndCreateACLConfig, map[string]string{"accessKey": "producerAK", "secretKey": "123456"}, 209, "at least 7"},
		{"50 ANY", fx.api.updateACL, transport.UpdateAndCreateACLConfig, map[string]string{"accessKey": "producerAK", "secretKey": "1234567", "defaultTopicPerm": "ANY"}, 209, "ANY"},
		{"50 bad admin", fx.api.updateACL, transport.UpdateAndCreateACLConfig, map[string]string{"accessKey": "producerAK", "secretKey": "1234567", "admin": "yes"}, 209, "admin"},
		{"51 no key", fx.api.deleteACL, transport.DeleteACLConfig, nil, 210, "required"},
		{"53 bad pattern", fx.api.updateGlobalWhite, transport.UpdateGlobalWhiteAddrsConfig, map[string]string{"globalWhiteAddrs": "1.2.*.4"}, 211, "IP pattern"},
	}
	for _, c := range cases {
		r := respond(t, c.h, c.code, c.ext)
		if r.ResponseCode() != c.want || !strings.Contains(r.Remark, c.text) {
			t.Errorf("%s: %s %q, want %d naming %q", c.name, r.ResponseCode(), r.Remark, c.want, c.text)
		}
		if strings.Contains(r.Remark, "producer-secret") || strings.Contains(r.Remark, "long-secret") {
			t.Errorf("%s: remark leaks a secret: %q", c.name, r.Remark)
		}
	}
	if _, v, ok := fx.rep.ACLDocument(); ok || v != 0 {
		t.Fatalf("a refused change was replicated (v%d)", v)
	}
}

func TestACLDeleteAndGlobalWhite(t *testing.T) {
	fx, src := aclFixture(t)
	if r := respond(t, fx.api.deleteACL, transport.DeleteACLConfig, map[string]string{"accessKey": "producerAK"}); r.ResponseCode() != transport.Success {
		t.Fatalf("delete: %s %q", r.ResponseCode(), r.Remark)
	}
	if keys := src.ACL().AccessKeys(); len(keys) != 1 || keys[0] != "adminAK01" {
		t.Fatalf("after delete %v", keys)
	}
	r := respond(t, fx.api.updateGlobalWhite, transport.UpdateGlobalWhiteAddrsConfig, map[string]string{"globalWhiteAddrs": "127.0.0.1,192.168.1.*"})
	if r.ResponseCode() != transport.Success {
		t.Fatalf("global white: %s %q", r.ResponseCode(), r.Remark)
	}
	if got := src.ACL().GlobalWhite(); strings.Join(got, ",") != "127.0.0.1,192.168.1.*" {
		t.Fatalf("global white %v", got)
	}
	if _, v, _ := fx.rep.ACLDocument(); v != 2 {
		t.Fatalf("version %d after two edits", v)
	}
}

// TestACLDeleteAbsentAccountIsANoOp: mqadmin `deleteAclConfig -c` sends code
// 51 to every node of the group; the first deletes the account from the one
// replicated document, the others must answer 0 too (Apache's brokers each
// delete from their own file) and replicate nothing.
func TestACLDeleteAbsentAccountIsANoOp(t *testing.T) {
	fx, src := aclFixture(t)
	for i := range 3 {
		r := respond(t, fx.api.deleteACL, transport.DeleteACLConfig, map[string]string{"accessKey": "producerAK"})
		if r.ResponseCode() != transport.Success {
			t.Fatalf("delete %d: %s %q", i, r.ResponseCode(), r.Remark)
		}
	}
	if r := respond(t, fx.api.deleteACL, transport.DeleteACLConfig, map[string]string{"accessKey": "nobody123"}); r.ResponseCode() != transport.Success {
		t.Fatalf("delete of a key that never existed: %s %q", r.ResponseCode(), r.Remark)
	}
	if keys := src.ACL().AccessKeys(); len(keys) != 1 || keys[0] != "adminAK01" {
		t.Fatalf("after deletes %v", keys)
	}
	if _, v, _ := fx.rep.ACLDocument(); v != 1 {
		t.Fatalf("version %d: only the first delete changes the document", v)
	}
}

func TestACLWriteOnFollowerIsNotLeader(t *testing.T) {
	fx, _ := aclFixture(t)
	fx.rep.SetStatusQuietly(replica.Status{Role: replica.RoleFollower})
	_, err := fx.api.deleteACL(context.Background(), request(transport.DeleteACLConfig, map[string]string{"accessKey": "producerAK"}))
	if !errors.Is(err, replica.ErrNotLeader) || route.ResponseCode(err) != transport.ServiceNotAvailable {
		t.Fatalf("err %v (code %s): a leader that lost leadership must let the chain forward", err, route.ResponseCode(err))
	}
}

func TestACLInfo(t *testing.T) {
	fx, _ := aclFixture(t)
	r := respond(t, fx.api.aclInfo, transport.GetBrokerClusterACLInfo, nil)
	if r.ResponseCode() != transport.Success {
		t.Fatalf("%s %q", r.ResponseCode(), r.Remark)
	}
	var v dataVersion
	if err := json.Unmarshal([]byte(r.Field("version")), &v); err != nil || v.Counter != 0 || v.Timestamp != 1700000000123 {
		t.Fatalf("version %q: %+v %v", r.Field("version"), v, err)
	}
	var all map[string]dataVersion
	if err := json.Unmarshal([]byte(r.Field("allAclFileVersion")), &all); err != nil || all[DefaultACLFilePath] != v {
		t.Fatalf("allAclFileVersion %q: %v", r.Field("allAclFileVersion"), err)
	}
	if r.Field("brokerName") != "broker-a" || r.Field("brokerAddr") != "127.0.0.1:10911" || r.Field("clusterName") != "c" {
		t.Fatalf("ext %v", r.Fields())
	}
	respond(t, fx.api.deleteACL, transport.DeleteACLConfig, map[string]string{"accessKey": "producerAK"})
	r = respond(t, fx.api.aclInfo, transport.GetBrokerClusterACLInfo, nil)
	if !strings.Contains(r.Field("version"), `"counter":1`) {
		t.Fatalf("after an edit: %q", r.Field("version"))
	}
}

func TestACLConfigHasNoSecrets(t *testing.T) {
	fx, _ := aclFixture(t)
	r := respond(t, fx.api.aclConfig, transport.GetBrokerClusterACLConfig, nil)
	if r.ResponseCode() != transport.Success {
		t.Fatalf("%s %q", r.ResponseCode(), r.Remark)
	}
	for _, s := range []string{"admin-secret", "producer-secret"} {
		if bytes.Contains(r.Body, []byte(s)) {
			t.Fatalf("body contains a secret: %s", r.Body)
		}
	}
	var body struct {
		GlobalWhiteAddrs   []string `json:"globalWhiteAddrs"`
		PlainAccessConfigs []map[string]any
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.GlobalWhiteAddrs) != 1 || len(body.PlainAccessConfigs) != 2 {
		t.Fatalf("body %s", r.Body)
	}
	p := body.PlainAccessConfigs[1]
	if p["accessKey"] != "producerAK" || p["secretKey"] != "" || p["admin"] != false || p["defaultTopicPerm"] != "DENY" {
		t.Fatalf("account %v", p)
	}
	if tp, _ := p["topicPerms"].([]any); len(tp) != 1 || tp[0] != "Orders=PUB" {
		t.Fatalf("topicPerms %v", p["topicPerms"])
	}
}

func TestACLCodesWithoutACL(t *testing.T) {
	fx := newFixture(t)
	for code, h := range map[transport.RequestCode]route.Handler{
		transport.UpdateAndCreateACLConfig: fx.api.updateACL, transport.GetBrokerClusterACLInfo: fx.api.aclInfo,
		transport.GetBrokerClusterACLConfig: fx.api.aclConfig,
	} {
		ext := map[string]string{"accessKey": "someone1", "secretKey": "something"}
		if r := respond(t, h, code, ext); r.ResponseCode() != transport.RequestCodeNotSupported {
			t.Errorf("%s without ACL: %s %q", code, r.ResponseCode(), r.Remark)
		}
	}
}
