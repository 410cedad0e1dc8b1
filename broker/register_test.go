package broker

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/nameserver"
)

// cutNamesrv stands between a broker and a nameserver: while cut it accepts
// connections and answers nothing (a blackholed route: requests time out),
// once healed it closes those connections and forwards new ones.
type cutNamesrv struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	healed bool
	held   []net.Conn
}

func newCutNamesrv(t *testing.T, target string) *cutNamesrv {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutNamesrv{ln: ln, target: target}
	t.Cleanup(func() { _ = ln.Close(); c.heal() })
	go c.accept()
	return c
}

func (c *cutNamesrv) Addr() string { return c.ln.Addr().String() }

func (c *cutNamesrv) accept() {
	for {
		in, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		healed := c.healed
		if !healed {
			c.held = append(c.held, in)
		}
		c.mu.Unlock()
		if !healed {
			go func() { _, _ = io.Copy(io.Discard, in) }()
			continue
		}
		go func() {
			defer in.Close()
			out, err := net.Dial("tcp", c.target)
			if err != nil {
				return
			}
			defer out.Close()
			go func() { _, _ = io.Copy(out, in) }()
			_, _ = io.Copy(in, out)
		}()
	}
}

// heldConns is how many connections arrived while cut.
func (c *cutNamesrv) heldConns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.held)
}

func (c *cutNamesrv) heal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.healed = true
	for _, h := range c.held {
		_ = h.Close()
	}
	c.held = nil
}

func startBrokerBehind(t *testing.T, nsAddr string, role replica.Role) (*Broker, *fakereplica.Replica, string) {
	t.Helper()
	st := openBrokerStore(t)
	rep := fakereplica.New(st, role)
	if err := rep.UpsertTopic(t.Context(), fsmTopic("Orders")); err != nil {
		t.Fatal(err)
	}
	addr := proctest.TestAddr(t)
	b, err := New(Config{ClusterName: "c", BrokerName: "broker-a", ListenAddr: addr, ClientAddr: addr,
		NamesrvAddrs: []string{nsAddr}, SelfID: "n0", Peers: []Peer{{ID: "n0", ClientAddr: addr}}}, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b, rep, addr
}

func waitWithin(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// TestR4RegistrationRetriedAfterNamesrvCut: the chaos scenario R4 cut a new
// leader off from the nameserver; its registration timed out and the next
// came only at RegisterInterval (30 s), so for 30 s after the network healed
// the nameserver listed no brokerId 0 and no client could send. A failed
// registration is now retried within registerRetry.
func TestR4RegistrationRetriedAfterNamesrvCut(t *testing.T) {
	ns := startNameserver(t, nameserver.Config{})
	cut := newCutNamesrv(t, ns.Addr())
	_, _, addr := startBrokerBehind(t, cut.Addr(), replica.RoleLeader)
	waitWithin(t, 5*time.Second, "first registration attempt", func() bool { return cut.heldConns() > 0 })
	time.Sleep(registerTimeout + 200*time.Millisecond) // the attempt has timed out
	cut.heal()
	took := waitWithin(t, registerRetry+registerTimeout+2*time.Second, "broker listed as brokerId 0 after the cut healed", func() bool {
		bd, ok := ns.Registry().ClusterInfo().BrokerAddrTable["broker-a"]
		return ok && bd.BrokerAddrs[nameserver.MasterID] == addr
	})
	t.Logf("listed %v after healing", took.Round(time.Millisecond))
}

// TestR4RoleChangeNotHeldUpByNamesrv: in R4 a new leader reported role
// CANDIDATE for 3 s after it was ready, refusing sends, because the role
// watcher registered the candidate inline and the nameserver did not answer.
// A role change now shows at once whatever the nameserver does.
func TestR4RoleChangeNotHeldUpByNamesrv(t *testing.T) {
	ns := startNameserver(t, nameserver.Config{})
	cut := newCutNamesrv(t, ns.Addr())
	b, rep, _ := startBrokerBehind(t, cut.Addr(), replica.RoleFollower)
	waitWithin(t, 5*time.Second, "first registration attempt", func() bool { return cut.heldConns() > 0 })
	rep.SetStatus(replica.Status{Role: replica.RoleCandidate, Term: 2, SelfID: "n0"})
	waitWithin(t, time.Second, "candidate role shown", func() bool { return b.Status().Role == replica.RoleCandidate })
	rep.SetStatus(replica.Status{Role: replica.RoleLeader, Term: 2, SelfID: "n0", LeaderID: "n0"})
	took := waitWithin(t, 2*time.Second, "leader role shown while the nameserver hangs", func() bool { return b.Status().Role == replica.RoleLeader })
	if took > 500*time.Millisecond {
		t.Errorf("leader role shown after %v, want well under registerTimeout %v", took, registerTimeout)
	}
}
