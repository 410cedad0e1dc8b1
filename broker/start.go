package broker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/rocketraft/rocketraft/broker/adminapi"
	"github.com/rocketraft/rocketraft/broker/auth"
	"github.com/rocketraft/rocketraft/broker/clientapi"
	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/metrics"
	"github.com/rocketraft/rocketraft/broker/offsets"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/broker/schedule"
	"github.com/rocketraft/rocketraft/broker/stats"
	"github.com/rocketraft/rocketraft/broker/transaction"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Bounds of the broker's own connections and of Close.
const (
	// dialTimeout bounds connecting to a nameserver or a peer broker.
	dialTimeout = 3 * time.Second
	// closeFlushTimeout bounds replicating the pending consumer offsets of a
	// leader that shuts down cleanly.
	closeFlushTimeout = 2 * time.Second
)

// New wires a broker over an opened store and replica. Start begins serving.
func New(cfg Config, st *store.Store, rep replica.Replica) (*Broker, error) {
	cfg = cfg.withDefaults()
	host := cfg.StoreHost
	if !host.IsValid() {
		var err error
		if host, err = netip.ParseAddrPort(cfg.ClientAddr); err != nil {
			return nil, fmt.Errorf("broker clientAddr=%q: not ip:port, so StoreHost must be set: %w", cfg.ClientAddr, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &Broker{
		cfg:          cfg,
		log:          cfg.Logger.Named("broker"),
		store:        st,
		replica:      rep,
		storeHost:    host,
		clients:      clients.NewRegistry(cfg.Monotonic()),
		pulls:        clients.NewPullWaiters(),
		offsets:      offsets.NewBuffer(rep, rep.Now),
		stats:        stats.New(cfg.ClusterName, rep.Now()),
		ctx:          ctx,
		registerKick: make(chan struct{}, 1),
		cancel:       cancel,
	}
	b.status = rep.Status()
	b.setCacheTail(b.status.Role)
	b.monoBase = cfg.Monotonic()
	b.diskUsedRatio = st.DiskUsedRatio
	b.diskFreeBytes = st.DiskFreeBytes
	b.client = transport.NewClient(transport.ClientConfig{DialTimeout: dialTimeout, Logger: b.log.Named("client"), TLS: cfg.ClientTLS})
	b.nsrv = nameserver.NewClient(b.client)
	if cfg.NamesrvAuthSecret != "" {
		b.nsrv = b.nsrv.WithCredentials(nameserver.BrokerCredentials(cfg.BrokerName, cfg.NamesrvAuthSecret))
	}

	cdeps := clientapi.Deps{
		Config: clientapi.Config{
			ClusterName: cfg.ClusterName, BrokerName: cfg.BrokerName, ClientAddr: cfg.ClientAddr, SelfID: cfg.SelfID,
			MaxMessageSize: cfg.MaxMessageSize, AutoCreateTopicEnable: cfg.AutoCreateTopicEnable,
			DefaultTopicQueueNums: cfg.DefaultTopicQueueNums, LongPollingEnable: cfg.LongPollingEnable,
			MaxPullSuspend: cfg.MaxPullSuspend, MessageDelayLevel: cfg.MessageDelayLevel,
			RegionID: cfg.RegionID, TraceOff: cfg.TraceOff,
		},
		StoreHost: host, Store: st, Replica: rep, Clients: b.clients, Pulls: b.pulls, Offsets: b.offsets,
		Status: b.Status, DiskFull: b.errDiskFull, TopicsChanged: b.registerAllAsync, Logger: b.log,
		Monotonic: cfg.Monotonic,
	}
	cdeps.Sent, cdeps.Pulled = b.observeSent, b.observePulled
	capi := clientapi.New(cdeps)
	b.capi = capi
	// The ACL in force: the aclFile until the group replicates a document
	// (ACL codes 50, 51, 53), then that document at the index this node applied.
	var acl *auth.Source
	if cfg.ACL != nil {
		acl = auth.NewSource(cfg.ACL, rep, b.log, nil)
	}
	aapi := adminapi.New(adminapi.Deps{
		Config: adminapi.Config{ClusterName: cfg.ClusterName, BrokerName: cfg.BrokerName, ClientAddr: cfg.ClientAddr, SelfID: cfg.SelfID,
			Version: cfg.Version},
		Store: st, Replica: rep, Offsets: b.offsets, Clients: b.clients, Pulls: b.pulls, TopicsChanged: b.registerAllAsync,
		Logger: b.log.Named("admin"), ACL: acl, Settings: cfg.Settings, Stats: b.stats,
	})
	table := route.NewTable()
	capi.Register(table)
	aapi.Register(table)
	fwd := &route.Forwarder{
		SelfID: cfg.SelfID, BrokerName: cfg.BrokerName, Leading: b.isLeader, Status: rep.Status,
		LeaderAddr: b.peerClientAddr, Client: b.client, Logger: b.log,
	}
	// The chain: metrics first (it sees every request and its final code), then
	// the send timing of the runtime stats, then authentication and
	// authorisation, then forwarding to the leader, then the handler.
	var stages []route.Stage
	if cfg.Metrics != nil {
		stages = append(stages, cfg.Metrics.Stage())
	}
	stages = append(stages, b.stats.SendStage(b.isLeader))
	if acl != nil {
		stages = append(stages, acl.Stage)
	}
	b.serve = table.Serve(fwd.Stage, stages...)

	b.leaderServices = []*leaderService{
		{name: "schedule service", newRun: func(replica.Status) func(context.Context) {
			return schedule.New(schedule.Config{
				Levels: cfg.MessageDelayLevel, StoreHost: host, Now: rep.Now, Logger: b.log,
			}, st, rep).Run
		}},
		{name: "transaction check service", newRun: func(replica.Status) func(context.Context) {
			return transaction.NewChecker(transaction.Config{
				Timeout: cfg.TransactionTimeout, Interval: cfg.TransactionCheckInterval, CheckMax: cfg.TransactionCheckMax,
				BrokerName: cfg.BrokerName, StoreHost: host, Now: rep.Now, Logger: b.log,
				Producer: func(group string) (transaction.CheckConn, bool) {
					if c := b.clients.ProducerConn(group); c != nil {
						return c, true
					}
					return nil, false
				},
				EnsureTopic: capi.EnsureTopic,
			}, st, rep).Run
		}},
	}
	b.server = transport.NewServer(transport.ServerConfig{
		Addr:        cfg.ListenAddr,
		Logger:      b.log.Named("remoting"),
		OnConnClose: b.onConnClose,
		TLS:         cfg.TLS,
	}, b.serve)
	b.vipServer = b.newVIPServer(table, fwd.Stage, stages)
	st.SetNotifier(b.pulls.Notify)
	if cfg.Metrics != nil {
		cfg.Metrics.Watch(metrics.Source{
			Status: rep.Status, RaftStats: rep.RaftStats, Store: st, LongPollWaiters: b.pulls.Count,
			Topics: rep.Topics, SubscriptionGroups: rep.SubscriptionGroups, Subscriptions: b.clients.Subscriptions,
			CommittedOffset: b.offsets.Committed, Now: rep.Now,
		})
	}
	return b, nil
}

// Start listens for clients and starts the background loops.
func (b *Broker) Start() error {
	if err := b.server.Start(); err != nil {
		return fmt.Errorf("broker listen %s: %w", b.cfg.ListenAddr, err)
	}
	if b.vipServer != nil {
		if err := b.vipServer.Start(); err != nil {
			_ = b.server.Close()
			return fmt.Errorf("broker VIP channel listen %s (listenPort-2): %w", b.cfg.VIPListenAddr, err)
		}
	}
	b.mu.Lock()
	b.status = b.replica.Status()
	b.mu.Unlock()
	b.goLoop(b.watchRoles)
	b.startLoops()
	b.log.Info("broker serving", "addr", b.server.Addr(), "vip", b.VIPAddr(), "broker", b.cfg.BrokerName, "self", b.cfg.SelfID)
	return nil
}

// Close stops serving: it flushes pending consumer offsets and hands leadership
// off if leader, unregisters from the nameservers, and closes connections.
func (b *Broker) Close() error {
	if b.isLeader() {
		ctx, cancel := context.WithTimeout(context.Background(), closeFlushTimeout)
		_ = b.offsets.Flush(ctx)
		cancel()
		b.handOffLeadership()
	}
	b.unregisterAll()
	b.cancel()
	err := b.server.Close()
	if b.vipServer != nil {
		err = errors.Join(err, b.vipServer.Close())
	}
	b.wg.Wait()
	_ = b.client.Close()
	return err
}
