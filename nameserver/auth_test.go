package nameserver

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/sign"
)

const (
	secretA = "secret-of-group-a-0123"
	secretB = "secret-of-group-b-4567"
)

func testSecrets(t *testing.T) *BrokerSecrets {
	t.Helper()
	s, err := ParseBrokerSecrets([]byte(fmt.Sprintf(
		"brokers:\n  - brokerName: broker-a\n    secret: %s\n  - brokerName: broker-b\n    secret: %s\n", secretA, secretB)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseBrokerSecrets(t *testing.T) {
	if got := strings.Join(testSecrets(t).BrokerNames(), ","); got != "broker-a,broker-b" {
		t.Fatalf("BrokerNames = %s", got)
	}
	short := "tooShortSecret1"
	doc := "brokers:\n" +
		"  - brokerName: broker-a\n    secret: " + short + "\n" +
		"  - brokerName: \"\"\n    secret: " + secretA + "\n" +
		"  - brokerName: broker-b\n    secret: " + secretB + "\n" +
		"  - brokerName: broker-b\n    secret: " + secretB + "\n"
	_, err := ParseBrokerSecrets([]byte(doc))
	if !errors.Is(err, ErrBadBrokerAuth) {
		t.Fatalf("err = %v, want ErrBadBrokerAuth", err)
	}
	for _, want := range []string{
		`brokers[0] brokerName="broker-a": secret must have at least 16 characters`,
		"brokers[1]: brokerName is required",
		`brokers[3] brokerName="broker-b": brokerName appears twice`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	for _, secret := range []string{short, secretA, secretB} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error quotes a secret: %v", err)
		}
	}
	for doc, want := range map[string]string{
		"":              "brokers: empty",
		"brokers: []\n": "brokers: empty",
		"brokers:\n  - brokerName: a\n    secretKey: " + secretA + "\n": "field secretKey not found",
		"brokers: {": "did not find",
	} {
		if _, err := ParseBrokerSecrets([]byte(doc)); !errors.Is(err, ErrBadBrokerAuth) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want ErrBadBrokerAuth with %q", doc, err, want)
		}
	}
	if _, err := LoadBrokerSecrets(t.TempDir() + "/missing.yml"); !errors.Is(err, ErrBadBrokerAuth) ||
		!strings.Contains(err.Error(), "brokerAuthFile=") {
		t.Errorf("missing file: %v", err)
	}
}

// invokeRaw sends one request with hand-made extFields and returns the answer.
func invokeRaw(t *testing.T, tc *transport.Client, addr string, code transport.RequestCode, ext map[string]string, body []byte) *transport.Command {
	t.Helper()
	resp, err := tc.Invoke(ctxT(t), addr, transport.NewRequest(code, ext, body))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func masterOf(t *testing.T, s *Server, name string) string {
	t.Helper()
	bd, ok := s.Registry().ClusterInfo().BrokerAddrTable[name]
	if !ok {
		return ""
	}
	return bd.BrokerAddrs[MasterID]
}

// A nameserver with brokerAuthFile accepts a group's registration signed with
// its secret and refuses every fake: unsigned, wrong secret, another group's
// secret, a group not in the file. The route keeps naming the real leader.
func TestBrokerAuthRefusesFakeRegistrations(t *testing.T) {
	s := startServer(t, Config{BrokerAuth: testSecrets(t)})
	tc := newTransportClient(t)
	ctx := ctxT(t)
	real := NewClient(tc).WithCredentials(BrokerCredentials("broker-a", secretA))
	const leader, fake = "127.0.0.1:10911", "10.6.6.6:10911"
	if _, err := real.RegisterBroker(ctx, s.Addr(), reg("broker-a", leader, 0, 3, 0, "TopicTest")); err != nil {
		t.Fatalf("signed registration refused: %v", err)
	}
	// An equal stateVersion would win against the real leader without auth.
	forged := reg("broker-a", fake, 0, 3, 0, "TopicTest")
	ext, body, err := encodeRegister(forged)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc2 := range []struct {
		name, remark string
		ext          map[string]string
	}{
		{"unsigned", "is not signed (no AccessKey)", ext},
		{"wrong secret", "signature check failed for brokerName=broker-a",
			BrokerCredentials("broker-a", "not-the-secret-of-a").SignExt(ext, body)},
		{"another group's secret", `AccessKey="broker:broker-b" does not match brokerName=broker-a`,
			BrokerCredentials("broker-b", secretB).SignExt(ext, body)},
		{"another group's secret under this group's AccessKey", "signature check failed for brokerName=broker-a",
			sign.Credentials{AccessKey: BrokerAccessKey("broker-a"), SecretKey: secretB}.SignExt(ext, body)},
		{"admin-style AccessKey", `AccessKey="devAdmin" does not match`,
			sign.Credentials{AccessKey: "devAdmin", SecretKey: secretA}.SignExt(ext, body)},
	} {
		t.Run(tc2.name, func(t *testing.T) {
			resp := invokeRaw(t, tc, s.Addr(), transport.RegisterBroker, tc2.ext, body)
			if resp.ResponseCode() != transport.NoPermission || !strings.Contains(resp.Remark, tc2.remark) {
				t.Fatalf("answer %s %q, want NO_PERMISSION with %q", resp.ResponseCode(), resp.Remark, tc2.remark)
			}
			for _, secret := range []string{secretA, secretB} {
				if strings.Contains(resp.Remark, secret) {
					t.Fatalf("remark quotes a secret: %q", resp.Remark)
				}
			}
			if got := masterOf(t, s, "broker-a"); got != leader {
				t.Fatalf("broker-a master = %q after a refused registration, want %s", got, leader)
			}
		})
	}
	// The body is signed: a real signature over other topics does not carry.
	signed := BrokerCredentials("broker-a", secretA).SignExt(ext, body)
	other, otherBody, err := encodeRegister(reg("broker-a", fake, 0, 3, 0, "Other"))
	if err != nil {
		t.Fatal(err)
	}
	signed[extBodyCRC32] = other[extBodyCRC32]
	if resp := invokeRaw(t, tc, s.Addr(), transport.RegisterBroker, signed, otherBody); resp.ResponseCode() != transport.NoPermission {
		t.Fatalf("a signature moved to another body: %s %q", resp.ResponseCode(), resp.Remark)
	}
	// A group not in the file cannot register, signed or not.
	_, err = NewClient(tc).WithCredentials(BrokerCredentials("broker-z", secretA)).
		RegisterBroker(ctx, s.Addr(), reg("broker-z", fake, 0, 1, 0, "TopicTest"))
	if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), "broker-z") ||
		!strings.Contains(err.Error(), "is not in the nameserver's brokerAuthFile") {
		t.Fatalf("broker-z: %v", err)
	}
	route, err := NewClient(tc).GetRoute(ctx, s.Addr(), "TopicTest") // reads stay open
	if err != nil {
		t.Fatal(err)
	}
	if len(route.BrokerDatas) != 1 || route.BrokerDatas[0].BrokerAddrs[MasterID] != leader {
		t.Fatalf("route after the fakes: %+v", route.BrokerDatas)
	}
}

func TestBrokerAuthUnregister(t *testing.T) {
	s := startServer(t, Config{BrokerAuth: testSecrets(t)})
	tc := newTransportClient(t)
	ctx := ctxT(t)
	const leader = "127.0.0.1:10911"
	real := NewClient(tc).WithCredentials(BrokerCredentials("broker-a", secretA))
	if _, err := real.RegisterBroker(ctx, s.Addr(), reg("broker-a", leader, 0, 3, 0, "TopicTest")); err != nil {
		t.Fatal(err)
	}
	ur := UnregisterRequest{ClusterName: "DefaultCluster", BrokerName: "broker-a", BrokerAddr: leader, BrokerID: MasterID}
	for name, c := range map[string]*Client{
		"unsigned":        NewClient(tc),
		"other group":     NewClient(tc).WithCredentials(BrokerCredentials("broker-b", secretB)),
		"wrong secret":    NewClient(tc).WithCredentials(BrokerCredentials("broker-a", secretB)),
		"admin-like name": NewClient(tc).WithCredentials(sign.Credentials{AccessKey: "admin", SecretKey: secretA}),
	} {
		err := c.UnregisterBroker(ctx, s.Addr(), ur)
		if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), "code=NO_PERMISSION") {
			t.Errorf("%s unregister: err = %v, want NO_PERMISSION", name, err)
		}
		if got := masterOf(t, s, "broker-a"); got != leader {
			t.Fatalf("%s unregister removed the leader (master = %q)", name, got)
		}
	}
	if err := real.UnregisterBroker(ctx, s.Addr(), ur); err != nil {
		t.Fatalf("signed unregister: %v", err)
	}
	if got := masterOf(t, s, "broker-a"); got != "" {
		t.Fatalf("signed unregister left master %q", got)
	}
}

// fakeAdmin refuses every request without AccessKey=admin and records the remote.
type fakeAdmin struct {
	mu      sync.Mutex
	remotes []netip.Addr
}

func (f *fakeAdmin) seen() []netip.Addr {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]netip.Addr(nil), f.remotes...)
}

func (f *fakeAdmin) AuthorizeAdmin(code transport.RequestCode, ext map[string]string, _ []byte, remote netip.Addr) error {
	f.mu.Lock()
	f.remotes = append(f.remotes, remote)
	f.mu.Unlock()
	if ext[sign.AccessKeyField] != "admin" {
		return fmt.Errorf("no permission: request code %s needs an admin account", code)
	}
	return nil
}

func TestAdminAuthorizerGuardsDeleteTopic(t *testing.T) {
	admin := &fakeAdmin{}
	s := startServer(t, Config{Admin: admin})
	tc := newTransportClient(t)
	ctx := ctxT(t)
	open := NewClient(tc)
	// Without brokerAuthFile, registrations stay open as before.
	if _, err := open.RegisterBroker(ctx, s.Addr(), reg("broker-a", "127.0.0.1:10911", 0, 1, 0, "TopicTest")); err != nil {
		t.Fatal(err)
	}
	err := open.DeleteTopic(ctx, s.Addr(), "TopicTest", "")
	if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), "code=NO_PERMISSION") ||
		!strings.Contains(err.Error(), `remark="no permission: request code DELETE_TOPIC_IN_NAMESRV(216) needs an admin account"`) {
		t.Fatalf("unsigned delete: %v", err)
	}
	if _, err := open.GetRoute(ctx, s.Addr(), "TopicTest"); err != nil {
		t.Fatalf("route gone after a refused delete: %v", err)
	}
	if r := admin.seen(); len(r) != 1 || !r[0].IsLoopback() {
		t.Fatalf("authorizer saw remotes %v, want the loopback caller", r)
	}
	signed := NewClient(tc).WithCredentials(sign.Credentials{AccessKey: "admin", SecretKey: "admin-secret"})
	if err := signed.DeleteTopic(ctx, s.Addr(), "TopicTest", ""); err != nil {
		t.Fatalf("admin delete: %v", err)
	}
	if _, err := open.GetRoute(ctx, s.Addr(), "TopicTest"); !errors.Is(err, ErrTopicNotExist) {
		t.Fatalf("route after admin delete: %v", err)
	}
}
