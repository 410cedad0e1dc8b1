package broker

import (
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/fakereplica"

	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

func TestLeaderHandsOffLeadershipOnClose(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	if err := tb.b.Close(); err != nil {
		t.Fatal(err)
	}
	if got := tb.replica.TransferTargets(); len(got) != 1 || got[0] != "" {
		t.Fatalf("transfers on close = %q, want one to any node", got)
	}
	follower := startTestBroker(t, replica.RoleFollower, nil)
	if err := follower.b.Close(); err != nil {
		t.Fatal(err)
	}
	if got := follower.replica.TransferTargets(); len(got) != 0 {
		t.Fatalf("a follower transferred leadership on close: %q", got)
	}
}

func TestPreferredLeaderGetsLeadership(t *testing.T) {
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 1 << 20, ConsumeQueueEntriesPerFile: 1000, IndexHashSlots: 100, IndexMaxEntries: 400})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rep := fakereplica.New(st, replica.RoleLeader)
	b, err := New(Config{BrokerName: "b", ListenAddr: "127.0.0.1:0", ClientAddr: "127.0.0.1:10911", SelfID: "n0",
		PreferredLeaderID: "n2", PreferredLeaderCheck: 20 * time.Millisecond}, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if got := rep.TransferTargets(); len(got) > 0 {
			if got[0] != "n2" {
				t.Fatalf("transferred to %q, want n2", got[0])
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the leader never tried to hand leadership to the preferred node")
}

func TestSendRefusedWhileDiskFull(t *testing.T) {
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 1 << 20, ConsumeQueueEntriesPerFile: 1000, IndexHashSlots: 100, IndexMaxEntries: 400})
	if err != nil {
		t.Fatal(err)
	}
	var ratio atomic.Value
	ratio.Store(0.95)
	rep := fakereplica.New(st, replica.RoleLeader)
	b, err := New(Config{BrokerName: "b", ListenAddr: "127.0.0.1:0", ClientAddr: "127.0.0.1:10911", SelfID: "n0", AutoCreateTopicEnable: true}, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	b.diskUsedRatio = func() (float64, error) { return ratio.Load().(float64), nil }
	var free atomic.Uint64
	free.Store(1 << 40)
	b.diskFreeBytes = func() (uint64, error) { return free.Load(), nil }
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	c := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	t.Cleanup(func() { c.Close(); b.Close(); st.Close() })
	tb := &testBroker{b: b, st: st, replica: rep, client: c}
	b.checkDisk(time.Now())
	r := tb.call(t, transport.SendMessage, sendExt("TD", 0, ""), []byte("x"))
	if r.ResponseCode() != transport.ServiceNotAvailable || !strings.Contains(r.Remark, "full") {
		t.Fatalf("send on a full disk: code %d %q", r.Code, r.Remark)
	}
	ratio.Store(0.5)
	b.checkDisk(time.Now())
	if r := tb.call(t, transport.SendMessage, sendExt("TD", 0, ""), []byte("x")); r.ResponseCode() != transport.Success {
		t.Fatalf("send after space was freed: code %d %q", r.Code, r.Remark)
	}
	// Below 90 % but with less free space than the next raft log and CommitLog
	// segments need: refused too.
	free.Store(b.diskReserve() - 1)
	b.checkDisk(time.Now())
	if r := tb.call(t, transport.SendMessage, sendExt("TD", 0, ""), []byte("x")); r.ResponseCode() != transport.ServiceNotAvailable {
		t.Fatalf("send below the segment reserve: code %d %q", r.Code, r.Remark)
	}
	free.Store(1 << 40)
	b.checkDisk(time.Now())
	if r := tb.call(t, transport.SendMessage, sendExt("TD", 0, ""), []byte("x")); r.ResponseCode() != transport.Success {
		t.Fatalf("send after space was freed: code %d %q", r.Code, r.Remark)
	}
}
