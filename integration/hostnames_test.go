package integration

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// TestHostNamesElectAndServe runs a group configured the way a Kubernetes
// StatefulSet is: brokerIP1, dLegerPeers, dLegerPeerClientAddrs and namesrvAddr
// are host names ("localhost" here, pod DNS names there), not IPs. The group
// must elect over raft addresses it dials by name, register the names with
// the nameserver, and serve the real client's sends and pulls; the msgId
// still carries an IP, because the record format has no room for a name.
func TestHostNamesElectAndServe(t *testing.T) {
	c := startClusterOn(t, "localhost")
	addrs, err := c.brokerAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for id, a := range addrs {
		if !strings.HasPrefix(a, "localhost:") {
			t.Errorf("brokerId %d registered %q, want the host name as configured", id, a)
		}
	}
	// Raft's configuration keeps the names: a resolved IP there would go
	// stale when a pod comes back with a new one.
	peers := runAdmin(t, c, "raft", "peers")
	if strings.Count(peers, "localhost:") != groupSize || strings.Contains(peers, "127.0.0.1:") {
		t.Errorf("raft peers should list every member by name, got:\n%s", peers)
	}
	leader := c.nodeIndex(addrs[0])
	_, leaderPort, _ := net.SplitHostPort(c.clientAddrs[leader])

	topic := unique(t, "T")
	p := newProducer(t, c)
	want := bodies("dns", 20)
	for _, res := range sendBodies(t, p, topic, want) {
		id, err := primitive.UnmarshalMsgID([]byte(res.OffsetMsgID))
		if err != nil {
			t.Fatalf("offsetMsgId %q: %v", res.OffsetMsgID, err)
		}
		if ip := net.ParseIP(id.Addr); ip == nil || !ip.IsLoopback() || fmt.Sprint(id.Port) != leaderPort {
			t.Fatalf("offsetMsgId %q names %s:%d, want the leader's resolved loopback address and port %s",
				res.OffsetMsgID, id.Addr, id.Port, leaderPort)
		}
	}
	col := newCollector()
	newPushConsumer(t, c, unique(t, "CG"), topic, selectAll, col)
	col.expectExactly(t, "host-name group", want, 30*time.Second, time.Second)
}
