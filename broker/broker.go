package broker

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/clientapi"
	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/offsets"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/broker/stats"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Broker is one node of a broker group serving the RocketMQ protocol.
//
// Concurrency: the transport runs each request on its own goroutine through the
// route table built by New; the broker's own goroutines are the role watcher
// and the periodic loops of loops.go. Replicated state lives behind Replica;
// soft state (clients, held pulls, pending offsets) behind their rooms' locks.
type Broker struct {
	cfg       Config
	log       hclog.Logger
	store     *store.Store
	replica   replica.Replica
	storeHost netip.AddrPort

	server  *transport.Server
	serve   *route.Chain      // the route table's chains, what server runs
	client  *transport.Client // nameservers and peer brokers
	nsrv    *nameserver.Client
	clients *clients.Registry
	pulls   *clients.PullWaiters
	offsets *offsets.Buffer
	capi    *clientapi.API // its maxMessageSize changes live (live.go)
	stats   *stats.Stats   // traffic counters; Tick runs once a second (loops.go)

	// vipServer is the VIP channel (listenPort-2, vip.go); nil when not configured.
	vipServer *transport.Server

	// registerKick wakes registerLoop (capacity 1: requests coalesce).
	registerKick chan struct{}

	mu     sync.Mutex
	status replica.Status
	// diskFull is set while the store's disk is above diskFullRatio.
	diskFull atomic.Bool
	// diskCheckedAt is when diskFull was last refreshed, as nanoseconds of
	// monoSinceStart.
	diskCheckedAt atomic.Int64
	// monoBase is Config.Monotonic at New: the origin of monoSinceStart.
	monoBase time.Time
	// diskUsedRatio and diskFreeBytes read the store disk's usage (seams for tests).
	diskUsedRatio func() (float64, error)
	diskFreeBytes func() (uint64, error)

	// leaderServices run only while this node leads: the schedule service and
	// the transaction check-back; owned by the watchRoles goroutine.
	leaderServices []*leaderService

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Addr is the address the remoting server listens on.
func (b *Broker) Addr() string { return b.server.Addr() }

// Status is this node's role as the broker serves it: LEADER only after the
// barrier, as the last role event said.
func (b *Broker) Status() replica.Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status
}

func (b *Broker) isLeader() bool { return b.Status().Role == replica.RoleLeader }

// goLoop runs f on a goroutine Close waits for.
func (b *Broker) goLoop(f func()) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		f()
	}()
}

func (b *Broker) onConnClose(c *transport.Conn) {
	for _, g := range b.clients.RemoveConn(c.ID()) {
		b.clients.NotifyConsumerIDsChanged(g)
	}
}
