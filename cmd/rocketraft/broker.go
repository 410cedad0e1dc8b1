package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/broker"
	"github.com/rocketraft/rocketraft/broker/auth"
	"github.com/rocketraft/rocketraft/broker/metrics"
	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/config"
	"github.com/rocketraft/rocketraft/raftlog"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

func newBrokerCommand() *cobra.Command {
	var conf configFlags
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Run one node of a broker group",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, eff, err := config.Layers{File: conf.path, Env: true, Set: conf.set}.Broker()
			if err != nil {
				return err
			}
			if conf.print {
				return printConfig(cmd.OutOrStdout(), eff)
			}
			return runBroker(cfg)
		},
	}
	conf.register(cmd.Flags(), "broker.conf")
	return cmd
}

// nodeConfig maps the broker.conf keys onto the raft node's settings. With
// raftTlsEnable, peers is what the raft port accepts peers from (raftStream).
func nodeConfig(cfg config.Broker, peers *raftPeers, log hclog.Logger) (node.Config, error) {
	self, _, err := cfg.Self()
	if err != nil {
		return node.Config{}, err
	}
	host, err := storeHost(cfg.ClientAddr(), systemLookup)
	if err != nil {
		return node.Config{}, err
	}
	// The raft configuration and the advertised address keep dLegerPeers as
	// written: peers dial a host name afresh each time, so a restarted pod
	// with a new IP is found again (transport.HostPort). Only the listener
	// resolves this node's own entry, to an address of this machine.
	stream, err := raftStream(cfg, self.Addr, transport.HostPort(self.Addr), peers, log)
	if err != nil {
		return node.Config{}, err
	}
	trans := raft.NewNetworkTransportWithLogger(stream, 3, 10*time.Second, log.Named("raft-net"))
	var servers []raft.Server
	if !cfg.Join { // a joining node starts with no configuration; the leader adds it
		for _, p := range cfg.Peers {
			servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Addr)})
		}
	}
	flushMode := store.FlushAsync
	if cfg.FlushDiskType == config.SyncFlush {
		flushMode = store.FlushSync
	}
	return node.Config{
		ID:        raft.ServerID(self.ID),
		Dir:       cfg.StorePathRootDir,
		Peers:     servers,
		Transport: trans,
		LogStore:  raftlog.LogStoreKind(cfg.Raft.LogStore),
		Store: store.Config{
			CommitLogSegmentSize:       cfg.MappedFileSizeCommitLog,
			ConsumeQueueEntriesPerFile: int(cfg.MappedFileSizeConsumeQueue / 20),
			IndexHashSlots:             cfg.MaxHashSlotNum,
			IndexMaxEntries:            cfg.MaxIndexNum,
			PreZeroSegments:            cfg.WarmMappedFile,
			WarmAhead:                  zeroMeansOff(cfg.CommitLogWarmAhead),
			ScrubRate:                  zeroMeansOff(cfg.CommitLogScrubRate),
			FlushMode:                  flushMode,
			FlushInterval:              cfg.FlushInterval,
			IndexFlushInterval:         cfg.IndexFlushInterval,
			FileReservedTime:           cfg.FileReservedTime,
			DeleteWhenHours:            cfg.DeleteWhen,
			DiskMaxUsedSpaceRatio:      float64(cfg.DiskMaxUsedSpaceRatio) / 100,
		},
		StoreHost:          host,
		HeartbeatTimeout:   cfg.Raft.HeartbeatTimeout,
		ElectionTimeout:    cfg.Raft.ElectionTimeout,
		LeaderLeaseTimeout: cfg.Raft.LeaderLeaseTimeout,
		CommitTimeout:      cfg.Raft.CommitTimeout,
		MaxAppendEntries:   cfg.Raft.MaxAppendEntries,
		SnapshotInterval:   cfg.Raft.SnapshotInterval,
		SnapshotThreshold:  cfg.Raft.SnapshotThreshold,
		TrailingLogs:       cfg.Raft.TrailingLogs,
		DiskStallTimeout:   cfg.Raft.DiskStallTimeout,
		SerialLeaderFsync:  cfg.Raft.SerialLeaderFsync,
		Proposer: node.ProposerConfig{
			MaxBatchBytes:    cfg.GroupCommit.MaxBytes,
			MaxBatchMessages: cfg.GroupCommit.MaxMessages,
			MaxPending:       cfg.GroupCommit.MaxPending,
			MaxInflight:      cfg.GroupCommit.MaxInflight,
			PipelineMinBytes: zeroMeansOff(cfg.GroupCommit.PipelineMinBytes),
			GatherMax:        zeroMeansOff(cfg.GroupCommit.GatherMax),
		},
		Logger: log,
	}, nil
}

// zeroMeansOff maps a key's 0 ("off": no pipelining threshold, no gather wait,
// no warm-ahead window) onto the negative value the proposer and the store take
// for it, because their own zero means "use the default".
func zeroMeansOff[T ~int | ~int64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

func brokerConfig(cfg config.Broker, log hclog.Logger) broker.Config {
	_, index, _ := cfg.Self()
	var peers []broker.Peer
	for _, p := range cfg.PeerClientAddrs {
		peers = append(peers, broker.Peer{ID: p.ID, ClientAddr: p.Addr})
	}
	return broker.Config{
		ClusterName:           cfg.ClusterName,
		BrokerName:            cfg.BrokerName,
		ListenAddr:            fmt.Sprintf(":%d", cfg.ListenPort),
		VIPListenAddr:         fmt.Sprintf(":%d", cfg.VIPPort()),
		ClientAddr:            cfg.ClientAddr(),
		NamesrvAddrs:          cfg.NamesrvAddrs,
		SelfID:                cfg.SelfID,
		SelfIndex:             index,
		Peers:                 peers,
		MaxMessageSize:        cfg.MaxMessageSize,
		AutoCreateTopicEnable: cfg.AutoCreateTopicEnable,
		DefaultTopicQueueNums: int32(cfg.DefaultTopicQueueNums),
		OffsetFlushInterval:   cfg.ConsumerOffsetFlushInterval,
		LongPollingEnable:     cfg.LongPollingEnable,
		PreferredLeaderID:     cfg.PreferredLeaderID,
		CacheTailLeader:       cfg.CommitLogCacheTailLeader,
		CacheTailFollower:     cfg.CommitLogCacheTailFollower,
		MessageDelayLevel:     cfg.MessageDelayLevel,
		// Transaction check-back (Java transactionTimeOut, transactionCheckInterval, transactionCheckMax).
		TransactionTimeout:       cfg.TransactionTimeOut,
		TransactionCheckInterval: cfg.TransactionCheckInterval,
		TransactionCheckMax:      int32(cfg.TransactionCheckMax),
		NamesrvAuthSecret:        cfg.NamesrvAuthSecret,
		Logger:                   log,

		// Apache keys: dLegerGroup, traceTopicEnable, msgTraceTopicName, registerNameServerPeriod, regionId, traceOn.
		DLegerGroup:      cfg.DLegerGroup,
		TraceTopicEnable: cfg.TraceTopicEnable,
		TraceTopic:       cfg.MsgTraceTopicName,
		RegisterInterval: cfg.RegisterNameServerPeriod,
		RegionID:         cfg.RegionID,
		TraceOff:         !cfg.TraceOn,
	}
}

func runBroker(cfg config.Broker) error {
	root := newLogger("rocketraft", cfg.LogLevel)
	log := root.With("broker", cfg.BrokerName, "node", cfg.SelfID)
	logConfigWarnings(log, cfg.Warnings)
	setBrokerGCPercent(log)
	setBrokerMaxProcs(log, cfg)
	if err := os.MkdirAll(filepath.Clean(cfg.StorePathRootDir), 0o755); err != nil {
		return fmt.Errorf("storePathRootDir=%q: %w", cfg.StorePathRootDir, err)
	}
	peers := newRaftPeers(cfg)
	ncfg, err := nodeConfig(cfg, peers, log)
	if err != nil {
		return err
	}
	n, err := node.Open(ncfg)
	if err != nil {
		return fmt.Errorf("open raft node: %w", err)
	}
	peers.follow(n.Configuration)
	m := metrics.New(metrics.Options{Cluster: cfg.ClusterName, BrokerName: cfg.BrokerName, SelfID: cfg.SelfID})
	if err := m.ExportRaftInternals(); err != nil {
		log.Warn("raft internals will not be exported", "error", err)
	}
	rep := replica.NewNode(n, replica.NodeOptions{ObserveApply: m.ObserveApply})
	bcfg := brokerConfig(cfg, log)
	bcfg.StoreHost = ncfg.StoreHost
	bcfg.Metrics = m
	if cfg.ACLEnable {
		if bcfg.ACL, err = auth.LoadFile(cfg.ACLFile); err != nil {
			_ = n.Close()
			return err
		}
		log.Info("access control on", "aclFile", cfg.ACLFile, "accounts", len(bcfg.ACL.AccessKeys()))
	}
	if bcfg.TLS, err = serverTLS(cfg.TLS); err != nil {
		_ = n.Close()
		return err
	}
	if bcfg.ClientTLS, err = brokerClientTLS(cfg, log); err != nil {
		_ = n.Close()
		return err
	}
	settings := &liveSettings{cfg: cfg}
	bcfg.Settings = settings
	bcfg.Version = binaryVersion().String()
	b, err := broker.New(bcfg, n.Store(), rep)
	if err != nil {
		_ = n.Close()
		return err
	}
	settings.targets = liveTargets{broker: b, store: n.Store(), log: root}
	if err := b.Start(); err != nil {
		_ = n.Close()
		return err
	}
	var adminHTTP *metrics.AdminHTTP
	if cfg.AdminListen != "" {
		if adminHTTP, err = metrics.StartAdminHTTP(cfg.AdminListen, metrics.Handler(m, rep.Status, metrics.DefaultReadyMaxLag)); err != nil {
			_ = b.Close()
			_ = n.Close()
			return err
		}
		log.Info("admin http serving", "addr", adminHTTP.Addr())
	}
	corrupt := waitForSignalOr(n.Store().Corrupt())
	if corrupt != nil {
		// The scrub found committed bytes that fail their checks (decision 0019): stop
		// serving and voting, as a start that found them would have refused to open.
		log.Error("stopping: the CommitLog holds corrupt committed data; wipe this node's data and let it rejoin, or restore the segment", "error", corrupt)
	} else {
		log.Info("shutting down")
	}
	if adminHTTP != nil {
		_ = adminHTTP.Close()
	}
	berr := b.Close()
	nerr := n.Close()
	switch {
	case corrupt != nil:
		return fmt.Errorf("stopped: %w", corrupt)
	case berr != nil:
		return berr
	}
	return nerr
}

// logConfigWarnings logs one line per key the config gave that has no effect
// (Apache keys such as brokerId or sendMessageThreadPoolNums), naming it,
// where it was set and why, so nothing an operator wrote is silently ignored.
func logConfigWarnings(log hclog.Logger, ws []config.Warning) {
	for _, w := range ws {
		log.Warn("config key has no effect", "key", w.Key, "value", w.Value, "at", w.Origin.String(), "why", w.Reason)
	}
}

// brokerGCPercent is the broker's garbage-collection target (GOGC) unless the
// GOGC variable sets one. A send allocates ~10 KB per 1 KiB message (frame,
// record, raft entry, raft-wal's encoding), so at Go's default of 100 the
// collector's marking and assists were ~9 % of a loaded leader's CPU; marking
// cost per second falls as the target rises, for a heap peak of about three
// times the live heap instead of two (docs/decisions/0010-broker-gc-target.md).
const brokerGCPercent = 200

func setBrokerGCPercent(log hclog.Logger) {
	if v := os.Getenv("GOGC"); v != "" {
		log.Info("garbage collection target from GOGC", "GOGC", v)
		return
	}
	debug.SetGCPercent(brokerGCPercent)
}
