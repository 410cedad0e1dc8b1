package broker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Peer is one member of the group: raft id, and the client-facing address that a
// follower forwards writes to when that peer leads.
type Peer struct {
	ID         string
	ClientAddr string
}

// Config is one broker node's settings (cmd maps config.Broker onto it).
type Config struct {
	ClusterName  string
	BrokerName   string
	ListenAddr   string // where the remoting server listens
	ClientAddr   string // advertised ip:port (STOREHOST, registration)
	NamesrvAddrs []string
	SelfID       string
	// SelfIndex is this node's position in the peer list; followers register as
	// brokerId SelfIndex+1.
	SelfIndex             int
	Peers                 []Peer
	MaxMessageSize        int
	AutoCreateTopicEnable bool
	DefaultTopicQueueNums int32
	RegisterInterval      time.Duration // default 30 s
	OffsetFlushInterval   time.Duration // default 1 s
	LongPollingEnable     bool
	// MaxPullSuspend caps suspendTimeoutMillis (default 30 s).
	MaxPullSuspend time.Duration
	// MessageDelayLevel is the delay of each level 1..N (default
	// DefaultMessageDelayLevel); DELAY above N is clamped to N.
	MessageDelayLevel []time.Duration
	// RetentionInterval is how often the store's retention policy runs (default 10 s).
	RetentionInterval time.Duration
	// PreferredLeaderID, when set, gets leadership whenever it is caught up;
	// PreferredLeaderCheck is how often the leader tries (default 30 s).
	PreferredLeaderID    string
	PreferredLeaderCheck time.Duration
	// TransactionTimeout is the age of a half message before its first check-back
	// (transactionTimeOut, default 6 s); TransactionCheckInterval the time between
	// check rounds (default 30 s); TransactionCheckMax the check-backs a half
	// message gets before it goes to TRANS_CHECK_MAX_TIME_TOPIC (default 15).
	TransactionTimeout       time.Duration
	TransactionCheckInterval time.Duration
	TransactionCheckMax      int32
	Logger                   hclog.Logger
}

func (c Config) withDefaults() Config {
	if c.RegisterInterval == 0 {
		c.RegisterInterval = 30 * time.Second
	}
	if c.OffsetFlushInterval == 0 {
		c.OffsetFlushInterval = time.Second
	}
	if c.MaxMessageSize == 0 {
		c.MaxMessageSize = 4 << 20
	}
	if c.DefaultTopicQueueNums == 0 {
		c.DefaultTopicQueueNums = 4
	}
	if c.MaxPullSuspend == 0 {
		c.MaxPullSuspend = 30 * time.Second
	}
	if c.RetentionInterval == 0 {
		c.RetentionInterval = 10 * time.Second
	}
	if c.PreferredLeaderCheck == 0 {
		c.PreferredLeaderCheck = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if len(c.MessageDelayLevel) == 0 {
		c.MessageDelayLevel = DefaultMessageDelayLevel
	}
	if c.TransactionTimeout == 0 {
		c.TransactionTimeout = DefaultTransactionTimeout
	}
	if c.TransactionCheckInterval == 0 {
		c.TransactionCheckInterval = DefaultTransactionCheckInterval
	}
	if c.TransactionCheckMax == 0 {
		c.TransactionCheckMax = DefaultTransactionCheckMax
	}
	return c
}

// Broker is one node of a broker group serving the RocketMQ protocol.
//
// Concurrency: the transport runs each request on its own goroutine; the broker's
// own goroutines are the role watcher, the registration ticker, the offset flusher
// and the client-expiry scan. Replicated state lives behind Replica; soft state
// (clients, held pulls, pending offsets) behind their own locks.
type Broker struct {
	cfg       Config
	log       hclog.Logger
	store     *store.Store
	replica   Replica
	storeHost netip.AddrPort

	server  *transport.Server
	client  *transport.Client // nameservers and peer brokers
	nsrv    *nameserver.Client
	clients *clientRegistry
	pulls   *pullWaiters
	offsets *offsetBuffer

	mu     sync.Mutex
	status ReplicaStatus
	// diskFull is set while the store's disk is above diskFullRatio.
	diskFull atomic.Bool
	// diskCheckedAt is when diskFull was last refreshed (unix nanoseconds).
	diskCheckedAt atomic.Int64
	// diskUsedRatio and diskFreeBytes read the store disk's usage (seams for tests).
	diskUsedRatio func() (float64, error)
	diskFreeBytes func() (uint64, error)

	// leaderServices run only while this node leads: the schedule service
	// (schedule.go) and the transaction check-back (transaction_check.go);
	// owned by the watchRoles goroutine.
	leaderServices []*leaderService

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New wires a broker over an opened store and replica. Start begins serving.
func New(cfg Config, st *store.Store, rep Replica) (*Broker, error) {
	cfg = cfg.withDefaults()
	host, err := netip.ParseAddrPort(cfg.ClientAddr)
	if err != nil {
		return nil, fmt.Errorf("broker clientAddr=%q: must be ip:port: %w", cfg.ClientAddr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &Broker{
		cfg:       cfg,
		log:       cfg.Logger.Named("broker"),
		store:     st,
		replica:   rep,
		storeHost: host,
		clients:   newClientRegistry(),
		pulls:     newPullWaiters(),
		ctx:       ctx,
		cancel:    cancel,
	}
	b.offsets = newOffsetBuffer()
	b.leaderServices = []*leaderService{
		{name: "schedule service", newRun: b.newScheduleRun},
		{name: "transaction check service", newRun: b.newTxCheckRun},
	}
	b.diskUsedRatio = st.DiskUsedRatio
	b.diskFreeBytes = st.DiskFreeBytes
	b.client = transport.NewClient(transport.ClientConfig{DialTimeout: 3 * time.Second, Logger: b.log.Named("client")})
	b.nsrv = nameserver.NewClient(b.client)
	b.server = transport.NewServer(transport.ServerConfig{
		Addr:        cfg.ListenAddr,
		Logger:      b.log.Named("remoting"),
		OnConnClose: b.onConnClose,
	}, transport.HandlerFunc(b.serve))
	st.SetNotifier(b.pulls.notify)
	return b, nil
}

// Start listens for clients and starts the background loops.
func (b *Broker) Start() error {
	if err := b.server.Start(); err != nil {
		return fmt.Errorf("broker listen %s: %w", b.cfg.ListenAddr, err)
	}
	b.status = b.replica.Status()
	b.goLoop(b.watchRoles)
	b.goLoop(b.registrationLoop)
	b.goLoop(b.offsetFlushLoop)
	b.goLoop(b.clientExpiryLoop)
	b.goLoop(b.retentionLoop)
	b.goLoop(b.diskCheckLoop)
	b.goLoop(b.preferredLeaderLoop)
	b.log.Info("broker serving", "addr", b.server.Addr(), "broker", b.cfg.BrokerName, "self", b.cfg.SelfID)
	return nil
}

func (b *Broker) goLoop(f func()) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		f()
	}()
}

// Addr is the address the remoting server listens on.
func (b *Broker) Addr() string { return b.server.Addr() }

// Close stops serving: it unregisters from the nameservers, flushes pending
// consumer offsets if leader, and closes connections.
func (b *Broker) Close() error {
	if b.isLeader() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = b.flushOffsets(ctx)
		cancel()
		b.handOffLeadership()
	}
	b.unregisterAll()
	b.cancel()
	err := b.server.Close()
	b.wg.Wait()
	_ = b.client.Close()
	return err
}

func (b *Broker) isLeader() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status.Role == RoleLeader
}

func (b *Broker) currentStatus() ReplicaStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status
}

// leaderServicesRoleChanged starts or stops every leader-only service.
func (b *Broker) leaderServicesRoleChanged(st ReplicaStatus) {
	for _, s := range b.leaderServices {
		s.roleChanged(b.ctx, b.log, st)
	}
}

// watchRoles re-registers with every nameserver at once on every role change.
func (b *Broker) watchRoles() {
	ch := b.replica.RoleChanges()
	defer func() {
		for _, s := range b.leaderServices {
			s.stop(b.log)
		}
	}()
	b.leaderServicesRoleChanged(b.currentStatus())
	for {
		select {
		case <-b.ctx.Done():
			return
		case st, ok := <-ch:
			if !ok {
				return
			}
			b.mu.Lock()
			prev := b.status
			b.status = st
			b.mu.Unlock()
			b.leaderServicesRoleChanged(st)
			if prev.Role != st.Role || prev.Term != st.Term {
				b.log.Info("role changed", "role", st.Role, "term", st.Term, "leader", st.LeaderID)
				if st.Role == RoleLeader {
					b.ensureSystemTopics()
					b.ensureReplyTopic()
				}
				b.registerAll()
			}
		}
	}
}

// ensureSystemTopics creates TBW102 (the auto-create template) on a new leader.
func (b *Broker) ensureSystemTopics() {
	if !b.cfg.AutoCreateTopicEnable {
		return
	}
	if _, ok := b.replica.Topic(autoCreateTopic); ok {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	t := TopicConfig{Name: autoCreateTopic, ReadQueueNums: 8, WriteQueueNums: 8, Perm: PermInherit | PermRead | PermWrite}
	if err := b.replica.UpsertTopic(ctx, t); err != nil && !errors.Is(err, context.Canceled) {
		b.log.Warn("create TBW102 failed", "error", err)
	}
}

func (b *Broker) clientExpiryLoop() {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case now := <-t.C:
			for _, g := range b.clients.expireBefore(now.Add(-120 * time.Second)) {
				b.notifyConsumerIDsChanged(g)
			}
		}
	}
}

func (b *Broker) onConnClose(c *transport.Conn) {
	for _, g := range b.clients.removeConn(c.ID()) {
		b.notifyConsumerIDsChanged(g)
	}
}

// notifyConsumerIDsChanged tells a group's members to rebalance now.
func (b *Broker) notifyConsumerIDsChanged(group string) {
	for _, c := range b.clients.consumerConns(group) {
		req := transport.NewRequest(transport.NotifyConsumerIDsChanged, map[string]string{"consumerGroup": group}, nil)
		_ = c.InvokeOneway(req)
	}
}
