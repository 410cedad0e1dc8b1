package auth

import (
	"errors"
	"maps"
	"net/netip"
	"strings"
	"testing"

	tsign "github.com/rocketraft/rocketraft/transport/sign"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

const checkACL = `
globalWhiteRemoteAddresses: ["10.0.0.*"]
accounts:
  - accessKey: consumerAK
    secretKey: consumer-secret
    whiteRemoteAddress: 192.168.7.7
    defaultTopicPerm: DENY
    defaultGroupPerm: DENY
    topicPerms: ["Orders=SUB", "Audit=PUB|SUB"]
    groupPerms: ["billing=SUB"]
  - accessKey: adminAll
    secretKey: admin-secret
    admin: true
  - accessKey: adminNarrow
    secretKey: narrow-secret
    admin: true
    defaultTopicPerm: DENY
    topicPerms: ["Orders=PUB"]
`

func sign(ak, sk string, ext map[string]string, body []byte) map[string]string {
	out := maps.Clone(ext)
	if out == nil {
		out = map[string]string{}
	}
	out[tsign.AccessKeyField] = ak
	out[tsign.SignatureField] = tsign.Sign(sk, tsign.StringToSign(out, body, nil))
	return out
}

func TestCheckRules(t *testing.T) {
	acl, err := Parse([]byte(checkACL))
	if err != nil {
		t.Fatal(err)
	}
	outside := netip.MustParseAddr("172.16.0.9")
	c := func(ak, sk string) func(map[string]string, []byte) map[string]string {
		return func(ext map[string]string, body []byte) map[string]string { return sign(ak, sk, ext, body) }
	}
	consumer, admin, narrow := c("consumerAK", "consumer-secret"), c("adminAll", "admin-secret"), c("adminNarrow", "narrow-secret")
	hb := []byte(`{"clientID":"c1","consumerDataSet":[{"groupName":"billing","subscriptionDataSet":[{"topic":"Orders"},{"topic":"%RETRY%billing"}]}]}`)
	hbBad := []byte(`{"clientID":"c1","consumerDataSet":[{"groupName":"billing","subscriptionDataSet":[{"topic":"Payments"}]}]}`)
	lock := []byte(`{"consumerGroup":"billing","clientId":"c1","mqSet":[{"topic":"Orders","brokerName":"b","queueId":0}]}`)
	cases := []struct {
		name   string
		code   transport.RequestCode
		ext    map[string]string
		body   []byte
		remote netip.Addr
		deny   string // "" = allowed
	}{
		{"global allow-list, unsigned", transport.UpdateAndCreateTopic, nil, nil, netip.MustParseAddr("10.0.0.5"), ""},
		{"account allow-list skips the signature", transport.PullMessage,
			map[string]string{tsign.AccessKeyField: "consumerAK", "topic": "Payments"}, nil, netip.MustParseAddr("192.168.7.7"), ""},
		{"pull with SUB on topic and group", transport.PullMessage, consumer(map[string]string{"topic": "Orders", "consumerGroup": "billing"}, nil), nil, outside, ""},
		{"pull of a denied group", transport.PullMessage, consumer(map[string]string{"topic": "Orders", "consumerGroup": "other"}, nil), nil, outside, "group other"},
		{"lite pull (361) is checked like a pull", transport.LitePullMessage, consumer(map[string]string{"topic": "Orders", "consumerGroup": "other"}, nil), nil, outside, "group other"},
		{"publish needs PUB", transport.SendMessage, consumer(map[string]string{"topic": "Orders"}, []byte("x")), []byte("x"), outside, "needs PUB"},
		{"retry topic send is the group", transport.SendMessage, consumer(map[string]string{"topic": "%RETRY%billing"}, nil), nil, outside, ""},
		{"V2 send reads b", transport.SendMessageV2, consumer(map[string]string{"a": "pg", "b": "Audit"}, nil), nil, outside, ""},
		{"V2 send to a denied topic", transport.SendMessageV2, consumer(map[string]string{"a": "pg", "b": "Orders"}, nil), nil, outside, "topic Orders"},
		{"trace topic is always publishable", transport.SendMessage, consumer(map[string]string{"topic": "RMQ_SYS_TRACE_TOPIC"}, nil), nil, outside, ""},
		{"heartbeat groups and topics", transport.HeartBeat, consumer(nil, hb), hb, outside, ""},
		{"heartbeat subscribing a denied topic", transport.HeartBeat, consumer(nil, hbBad), hbBad, outside, "topic Payments"},
		{"lock checks group and queue topics", transport.LockBatchMQ, consumer(nil, lock), lock, outside, ""},
		{"no-resource code needs only a signature", transport.GetBrokerRuntimeInfo, consumer(nil, nil), nil, outside, ""},
		{"admin code for a plain account", transport.DeleteTopicInBroker, consumer(map[string]string{"topic": "Orders"}, nil), nil, outside, "needs an admin account"},
		{"ACL code for a plain account", transport.RequestCode(50), consumer(map[string]string{"accessKey": "x"}, nil), nil, outside, "needs an admin account"},
		{"admin without perms may do anything", transport.SendMessage, admin(map[string]string{"topic": "Payments"}, nil), nil, outside, ""},
		{"admin with perms is held to them", transport.SendMessage, narrow(map[string]string{"topic": "Payments"}, nil), nil, outside, "topic Payments"},
		{"admin code for an admin", transport.RaftTransferLeader, narrow(nil, nil), nil, outside, ""},
		{"unsigned outside the allow-list", transport.PullMessage, map[string]string{"topic": "Orders"}, nil, outside, "not signed"},
		{"no address at all is not allow-listed", transport.PullMessage, map[string]string{"topic": "Orders"}, nil, netip.Addr{}, "not signed"},
	}
	for _, tc := range cases {
		err := acl.Check(tc.code, tc.ext, tc.body, tc.remote)
		switch {
		case tc.deny == "" && err != nil:
			t.Errorf("%s: denied: %v", tc.name, err)
		case tc.deny != "" && (!errors.Is(err, route.ErrNoPermission) || !strings.Contains(err.Error(), tc.deny)):
			t.Errorf("%s: got %v, want NO_PERMISSION naming %q", tc.name, err, tc.deny)
		}
		if err != nil && route.ResponseCode(err) != transport.NoPermission {
			t.Errorf("%s: answered %s, want NO_PERMISSION", tc.name, route.ResponseCode(err))
		}
	}
}

func TestCheckIgnoresTheForwardingMarkerAndUniqueKeyFlag(t *testing.T) {
	acl, err := Parse([]byte(checkACL))
	if err != nil {
		t.Fatal(err)
	}
	remote := netip.MustParseAddr("172.16.0.9")
	ext := sign("consumerAK", "consumer-secret", map[string]string{"topic": "Orders", "key": "k"}, nil)
	relayed := maps.Clone(ext)
	relayed["rocketraftForwarded"] = "n1"
	if err := acl.Check(transport.QueryMessage, relayed, nil, remote); err != nil {
		t.Fatalf("relayed request: %v", err)
	}
	// A 4.9 Java client signs _UNIQUE_KEY_QUERY; a 4.9 broker does not: both verify.
	withFlag := sign("consumerAK", "consumer-secret", map[string]string{"topic": "Orders", "key": "k", tsign.UniqueKeyQuery: "false"}, nil)
	if err := acl.Check(transport.QueryMessage, withFlag, nil, remote); err != nil {
		t.Fatalf("signed with the flag: %v", err)
	}
	added := maps.Clone(ext)
	added[tsign.UniqueKeyQuery] = "false"
	if err := acl.Check(transport.QueryMessage, added, nil, remote); err != nil {
		t.Fatalf("flag added after signing: %v", err)
	}
	added["topic"] = "Audit"
	if err := acl.Check(transport.QueryMessage, added, nil, remote); !errors.Is(err, route.ErrNoPermission) {
		t.Fatalf("tampered request with the flag: %v", err)
	}
}

func TestCheckUnreadableBodyIsBadHeader(t *testing.T) {
	acl, err := Parse([]byte(checkACL))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("{not json")
	err = acl.Check(transport.HeartBeat, sign("consumerAK", "consumer-secret", nil, body), body, netip.MustParseAddr("172.16.0.9"))
	if route.ResponseCode(err) != transport.InvalidParameter {
		t.Fatalf("malformed heartbeat: %v → %s", err, route.ResponseCode(err))
	}
}

// AuthorizeAdmin, the nameserver's check of its writes: an admin account's
// signature or an allow-listed address; any other account is refused even
// with a good signature, and a narrow admin is still an admin.
func TestAuthorizeAdmin(t *testing.T) {
	acl, err := Parse([]byte(checkACL))
	if err != nil {
		t.Fatal(err)
	}
	ext := map[string]string{"topic": "Orders"}
	outside := netip.MustParseAddr("172.16.0.9")
	for _, tc := range []struct {
		name   string
		ext    map[string]string
		remote netip.Addr
		remark string // "" = allowed
	}{
		{"admin", sign("adminAll", "admin-secret", ext, nil), outside, ""},
		{"narrow admin", sign("adminNarrow", "narrow-secret", ext, nil), outside, ""},
		{"global allow-list", ext, netip.MustParseAddr("10.0.0.4"), ""},
		{"unsigned", ext, outside, "is not signed (no AccessKey)"},
		{"not an admin", sign("consumerAK", "consumer-secret", ext, nil), outside, "needs an admin account; accessKey=consumerAK"},
		{"bad signature", sign("adminAll", "admin-secreT", ext, nil), outside, "signature check failed for accessKey=adminAll"},
		{"unknown", sign("nobodyAK", "whatever-secret", ext, nil), outside, "no account with accessKey=nobodyAK"},
	} {
		err := acl.AuthorizeAdmin(transport.DeleteTopicInNameSrv, tc.ext, nil, tc.remote)
		if tc.remark == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, route.ErrNoPermission) || !strings.Contains(err.Error(), tc.remark) {
			t.Errorf("%s: err = %v, want ErrNoPermission with %q", tc.name, err, tc.remark)
		}
		for _, secret := range []string{"admin-secret", "consumer-secret", "narrow-secret"} {
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("%s: remark quotes a secret: %v", tc.name, err)
			}
		}
	}
}
