package broker

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// A node advertised by host name (a Kubernetes pod's DNS name) writes the
// resolved StoreHost into its records: the msgId a producer gets back names
// that IP, while the name stays what registration uses.
func TestHostNameClientAddrUsesStoreHost(t *testing.T) {
	const name = "broker-a-0.broker-a.rocketraft.svc.cluster.local:10911"
	want := netip.MustParseAddrPort("10.1.2.3:10911")
	tb := startTestBroker(t, replica.RoleLeader, nil, func(c *Config) {
		c.ClientAddr = name
		c.StoreHost = want
	})
	if tb.b.cfg.ClientAddr != name {
		t.Fatalf("ClientAddr = %q, want the host name kept as written", tb.b.cfg.ClientAddr)
	}
	r := tb.call(t, transport.SendMessage, sendExt("TopicDNS", 0, props(store.PropertyUniqKey, "U1")), []byte("hello"))
	if r.ResponseCode() != transport.Success {
		t.Fatalf("send: code %d %s", r.Code, r.Remark)
	}
	id, err := primitive.UnmarshalMsgID([]byte(r.Field("msgId")))
	if err != nil {
		t.Fatalf("msgId %q: %v", r.Field("msgId"), err)
	}
	if got := netip.AddrPortFrom(netip.MustParseAddr(id.Addr), uint16(id.Port)); got != want {
		t.Fatalf("msgId names %s, want the StoreHost %s", got, want)
	}
}

func TestHostNameClientAddrWithoutStoreHostIsRefused(t *testing.T) {
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 1 << 20, ConsumeQueueEntriesPerFile: 1000, IndexHashSlots: 100, IndexMaxEntries: 400})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = New(Config{BrokerName: "b", ListenAddr: "127.0.0.1:0", ClientAddr: "broker-a-0.broker-a:10911", SelfID: "n0"},
		st, fakereplica.New(st, replica.RoleLeader))
	if err == nil || !strings.Contains(err.Error(), "broker-a-0.broker-a:10911") || !strings.Contains(err.Error(), "StoreHost") {
		t.Fatalf("New with a host name and no StoreHost: err = %v, want one naming the address and StoreHost", err)
	}
}
