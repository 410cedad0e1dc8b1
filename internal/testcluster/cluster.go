package testcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Options shape a test group. Zero values give a fast in-memory group.
type Options struct {
	// TCP runs raft over loopback TCP (transport's stream layer) instead of
	// raft's in-memory transport. Partition/Heal need the in-memory transport.
	TCP bool
	// RaftTLS, with TCP, runs raft over mutual TLS (transport.NewTLSStreamLayer)
	// with these files on every node; its Logger defaults to the group's.
	RaftTLS *transport.StreamTLS
	// Store is the base store config of every node (Dir is set per node). Zero
	// sizes get small test sizes: 1 MiB CommitLog segments, 4096-entry
	// ConsumeQueue files, small IndexFiles.
	Store store.Config
	// Configure, if set, adjusts each node's config before Open (timings,
	// proposer bounds, snapshot thresholds).
	Configure func(*node.Config)
	// Logger for all nodes; nil logs at Warn to the test log.
	Logger hclog.Logger
	// FastTimings sets raft timeouts to a fraction of the defaults (elections in
	// ~100 ms) for tests that do not measure failover.
	FastTimings bool
}

// Member is one node slot of the group. Node is nil while it is stopped.
type Member struct {
	ID   raft.ServerID
	Addr raft.ServerAddress
	Dir  string
	// StoreHost is the broker address written into this node's messages.
	StoreHost netip.AddrPort

	mu    sync.Mutex
	node  *node.Node
	inmem *raft.InmemTransport
	peers []raft.Server
}

// Node returns the running node, or nil when stopped.
func (m *Member) Node() *node.Node {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.node
}

// Cluster is an in-process broker group. Methods must be called from the test
// goroutine unless documented otherwise; Leader and Member lookups are safe
// from any goroutine.
type Cluster struct {
	t    testing.TB
	opts Options
	log  hclog.Logger

	mu      sync.Mutex
	members []*Member
	// cut[a][b] means a cannot reach b (in-memory transport only).
	cut map[raft.ServerAddress]map[raft.ServerAddress]bool
}

// New starts an n-node group bootstrapped from a static peer list and waits for
// a leader. Nodes are closed by t.Cleanup.
func New(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "tc", Level: hclog.Warn, Output: testWriter{t}})
	}
	c := &Cluster{t: t, opts: opts, log: opts.Logger, cut: map[raft.ServerAddress]map[raft.ServerAddress]bool{}}
	var peers []raft.Server
	for i := range n {
		m := c.newMember(fmt.Sprintf("n%d", i))
		peers = append(peers, raft.Server{Suffrage: raft.Voter, ID: m.ID, Address: m.Addr})
	}
	for _, m := range c.members {
		m.peers = peers
	}
	t.Cleanup(c.Close)
	for _, m := range c.members {
		c.start(m)
	}
	c.WaitLeader(10 * time.Second)
	return c
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", p)
	return len(p), nil
}

func (c *Cluster) newMember(id string) *Member {
	dir := filepath.Join(c.t.TempDir(), id)
	m := &Member{ID: raft.ServerID(id), Dir: dir}
	if c.opts.TCP {
		m.Addr = c.reservePort()
	} else {
		m.Addr = raft.ServerAddress(id)
	}
	m.StoreHost = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(10911+len(c.members)))
	c.mu.Lock()
	c.members = append(c.members, m)
	c.mu.Unlock()
	return m
}

// reservePort picks a free loopback port that no member of c uses; the stream
// layer binds it on every start. The kernel may hand out a port again as soon
// as its listener is closed, so a port a member already has is refused (held
// open while the next is picked), or two members would share an address.
func (c *Cluster) reservePort() raft.ServerAddress {
	c.mu.Lock()
	taken := make(map[raft.ServerAddress]bool, len(c.members))
	for _, m := range c.members {
		taken[m.Addr] = true
	}
	c.mu.Unlock()
	var held []net.Listener
	defer func() {
		for _, ln := range held {
			_ = ln.Close()
		}
	}()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			c.t.Fatalf("reserve port: %v", err)
		}
		held = append(held, ln)
		if addr := raft.ServerAddress(ln.Addr().String()); !taken[addr] {
			return addr
		}
	}
	c.t.Fatalf("reserve port: 100 tries gave only ports the members already have")
	return ""
}

func (c *Cluster) config(m *Member, trans raft.Transport) node.Config {
	st := c.opts.Store
	st.Dir = ""
	if st.CommitLogSegmentSize == 0 {
		st.CommitLogSegmentSize = 1 << 20
	}
	if st.ConsumeQueueEntriesPerFile == 0 {
		st.ConsumeQueueEntriesPerFile = 4096
	}
	if st.IndexHashSlots == 0 {
		st.IndexHashSlots = 4096
	}
	if st.IndexMaxEntries == 0 {
		st.IndexMaxEntries = 16384
	}
	cfg := node.Config{
		ID:        m.ID,
		Dir:       m.Dir,
		Peers:     m.peers,
		Transport: trans,
		Store:     st,
		StoreHost: m.StoreHost,
		Logger:    c.log.With("node", m.ID),
	}
	if c.opts.FastTimings {
		cfg.HeartbeatTimeout = 100 * time.Millisecond
		cfg.ElectionTimeout = 100 * time.Millisecond
		cfg.LeaderLeaseTimeout = 50 * time.Millisecond
		cfg.CommitTimeout = 5 * time.Millisecond
	}
	if c.opts.Configure != nil {
		c.opts.Configure(&cfg)
	}
	return cfg
}

func (c *Cluster) start(m *Member) {
	c.t.Helper()
	var trans raft.Transport
	if c.opts.TCP {
		var sl *transport.StreamLayer
		var err error
		if c.opts.RaftTLS != nil {
			st := *c.opts.RaftTLS
			if st.Logger == nil {
				st.Logger = c.log.Named("raft-tls").With("node", m.ID)
			}
			sl, err = transport.NewTLSStreamLayer(string(m.Addr), nil, st)
		} else {
			sl, err = transport.NewTCPStreamLayer(string(m.Addr), nil)
		}
		if err != nil {
			c.t.Fatalf("node %s: %v", m.ID, err)
		}
		trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream:  sl,
			MaxPool: 3,
			Timeout: 10 * time.Second,
			Logger:  c.log.Named("net").With("node", m.ID),
		})
	} else {
		_, it := raft.NewInmemTransport(m.Addr)
		m.mu.Lock()
		m.inmem = it
		m.mu.Unlock()
		c.rewire()
		trans = it
	}
	n, err := node.Open(c.config(m, trans))
	if err != nil {
		c.t.Fatalf("open node %s: %v", m.ID, err)
	}
	m.mu.Lock()
	m.node = n
	m.mu.Unlock()
}

// rewire connects every pair of running in-memory transports that is not cut.
func (c *Cluster) rewire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.members {
		a.mu.Lock()
		ta := a.inmem
		a.mu.Unlock()
		if ta == nil {
			continue
		}
		for _, b := range c.members {
			if a == b {
				continue
			}
			b.mu.Lock()
			tb := b.inmem
			b.mu.Unlock()
			if tb == nil || c.cut[a.Addr][b.Addr] {
				ta.Disconnect(b.Addr)
				continue
			}
			ta.Connect(b.Addr, tb)
		}
	}
}

// Members returns the node slots in creation order.
func (c *Cluster) Members() []*Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Member(nil), c.members...)
}

// Member returns the slot with id.
func (c *Cluster) Member(id raft.ServerID) *Member {
	for _, m := range c.Members() {
		if m.ID == id {
			return m
		}
	}
	c.t.Fatalf("no member %s", id)
	return nil
}

// Running returns the members whose node is open.
func (c *Cluster) Running() []*Member {
	var out []*Member
	for _, m := range c.Members() {
		if m.Node() != nil {
			out = append(out, m)
		}
	}
	return out
}

// Leader returns the member whose node is the ready leader (barrier passed),
// or nil. Safe from any goroutine.
func (c *Cluster) Leader() *Member {
	for _, m := range c.Members() {
		if n := m.Node(); n != nil && n.State().Role == node.RoleLeader {
			return m
		}
	}
	return nil
}

// WaitLeader waits for a ready leader among the running nodes.
func (c *Cluster) WaitLeader(timeout time.Duration) *Member {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if l := c.Leader(); l != nil {
			return l
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no leader within %s", timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// WaitLeaderAmong waits for a ready leader that is one of ids.
func (c *Cluster) WaitLeaderAmong(timeout time.Duration, ids ...raft.ServerID) *Member {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, id := range ids {
			if n := c.Member(id).Node(); n != nil && n.State().Role == node.RoleLeader {
				return c.Member(id)
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no leader among %v within %s", ids, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Partition cuts the members in ids off from all others (both directions).
// In-memory transport only.
func (c *Cluster) Partition(ids ...raft.ServerID) {
	c.t.Helper()
	if c.opts.TCP {
		c.t.Fatal("Partition needs the in-memory transport")
	}
	side := map[raft.ServerID]bool{}
	for _, id := range ids {
		side[id] = true
	}
	c.mu.Lock()
	for _, a := range c.members {
		for _, b := range c.members {
			if side[a.ID] != side[b.ID] {
				if c.cut[a.Addr] == nil {
					c.cut[a.Addr] = map[raft.ServerAddress]bool{}
				}
				c.cut[a.Addr][b.Addr] = true
			}
		}
	}
	c.mu.Unlock()
	c.rewire()
}

// Heal removes every cut.
func (c *Cluster) Heal() {
	c.mu.Lock()
	c.cut = map[raft.ServerAddress]map[raft.ServerAddress]bool{}
	c.mu.Unlock()
	c.rewire()
}

// StopNode closes a node cleanly (final checkpoint).
func (c *Cluster) StopNode(id raft.ServerID) {
	c.t.Helper()
	c.stop(c.Member(id), false)
}

// CrashNode stops a node without its final apply checkpoint, then tears the
// CommitLog tail: it appends a partial record after the last one, as a crash in
// the middle of a write leaves it. On restart the store cuts the torn bytes and
// raft replays everything after the last periodic checkpoint.
func (c *Cluster) CrashNode(id raft.ServerID) {
	c.t.Helper()
	m := c.Member(id)
	c.stop(m, true)
	if err := tearCommitLogTail(filepath.Join(m.Dir, node.StoreDirName)); err != nil {
		c.t.Fatalf("tear tail of %s: %v", id, err)
	}
}

func (c *Cluster) stop(m *Member, crash bool) {
	c.t.Helper()
	m.mu.Lock()
	n := m.node
	m.node = nil
	m.inmem = nil
	m.mu.Unlock()
	if n == nil {
		c.t.Fatalf("node %s is not running", m.ID)
	}
	var err error
	if crash {
		err = n.Kill()
	} else {
		err = n.Close()
	}
	if err != nil {
		c.t.Fatalf("stop %s: %v", m.ID, err)
	}
	if !c.opts.TCP {
		c.rewire() // peers fail fast instead of timing out on a dead transport
	}
}

// RestartNode opens a stopped node on its existing data.
func (c *Cluster) RestartNode(id raft.ServerID) {
	c.t.Helper()
	m := c.Member(id)
	if m.Node() != nil {
		c.t.Fatalf("node %s is running", id)
	}
	c.start(m)
}

// WipeNode stops a node, deletes its whole data directory and starts it again
// empty. It must catch up from the leader (log or snapshot); it does not
// bootstrap because it still has peers that know it.
func (c *Cluster) WipeNode(id raft.ServerID) {
	c.t.Helper()
	m := c.Member(id)
	if m.Node() != nil {
		c.stop(m, false)
	}
	if err := os.RemoveAll(m.Dir); err != nil {
		c.t.Fatalf("wipe %s: %v", id, err)
	}
	m.peers = nil // a wiped node must not bootstrap a group of its own
	c.start(m)
}

// AddNode creates and starts a new empty node (not yet a member: call the
// leader's AddNonvoter/AddVoter with its ID and Addr).
func (c *Cluster) AddNode(id string) *Member {
	c.t.Helper()
	m := c.newMember(id)
	c.start(m)
	return m
}

// Close closes every running node. Safe to call more than once.
func (c *Cluster) Close() {
	for _, m := range c.Members() {
		m.mu.Lock()
		n := m.node
		m.node = nil
		m.mu.Unlock()
		if n != nil {
			if err := n.Close(); err != nil {
				c.t.Errorf("close %s: %v", m.ID, err)
			}
		}
	}
}

// WaitApplied waits until every running node has applied index.
func (c *Cluster) WaitApplied(index uint64, timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		behind := ""
		for _, m := range c.Running() {
			if a := m.Node().State().AppliedIndex; a < index {
				behind += fmt.Sprintf(" %s=%d", m.ID, a)
			}
		}
		if behind == "" {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("nodes behind index %d after %s:%s", index, timeout, behind)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// WaitConverged waits for a leader and until every running node has applied
// the leader's last index (after a barrier, so it covers every acked write).
func (c *Cluster) WaitConverged(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		l := c.WaitLeader(time.Until(deadline))
		err := l.Node().Raft().Barrier(time.Second).Error()
		if err == nil {
			c.WaitApplied(l.Node().State().AppliedIndex, time.Until(deadline))
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("converge: barrier on %s: %v", l.ID, err)
		}
	}
}

// Propose sends msgs to the current leader, retrying on ErrNotLeader and
// ErrBusy (what the broker's forwarding does) until ctx ends. Unknown
// outcomes are returned as they are.
func (c *Cluster) Propose(ctx context.Context, msgs [][]byte) ([]fsm.MessageResult, error) {
	for {
		l := c.Leader()
		if l != nil {
			if n := l.Node(); n != nil {
				res, err := n.Propose(ctx, msgs)
				if err == nil || !(errors.Is(err, node.ErrNotLeader) || errors.Is(err, node.ErrBusy) || errors.Is(err, node.ErrClosed)) {
					return res, err
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
