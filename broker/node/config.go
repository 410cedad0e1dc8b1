package node

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/raftlog"
	"github.com/rocketraft/rocketraft/store"
)

// Raft timing defaults. hashicorp/raft's own; with them an election after a
// leader crash takes ~2 s (lessons-from-dledger.md #4).
const (
	DefaultHeartbeatTimeout   = time.Second
	DefaultElectionTimeout    = time.Second
	DefaultLeaderLeaseTimeout = 500 * time.Millisecond
	DefaultCommitTimeout      = 50 * time.Millisecond
	// DefaultMaxAppendEntries is both the entries per AppendEntries RPC and the
	// entries raft's leader loop gathers into one log write (BatchApplyCh).
	DefaultMaxAppendEntries = 64
	// A snapshot here is a checkpoint and a reference to the CommitLog range
	// (a few hundred bytes), and until one compacts the raft log every sealed
	// raft-wal segment keeps its writer's buffers on the heap: snapshotting
	// every 30-60 s instead of every 2-4 min keeps a node's memory flat
	// (decision 0011).
	DefaultSnapshotInterval   = 30 * time.Second
	DefaultSnapshotThreshold  = 2048
	DefaultTrailingLogs       = 10240
	DefaultSnapshotRetain     = 2
	DefaultCheckpointInterval = time.Second
	// MinDiskStallTimeout floors the default DiskStallTimeout: an fsync of a few
	// hundred ms on a busy disk is slow, not stalled, and must not cost an
	// election even with the fast timings of tests.
	MinDiskStallTimeout = 2 * time.Second
)

// Directory layout under Config.Dir.
const (
	RaftDirName     = "raft"      // raftlog stores
	SnapshotDirName = "snapshots" // raft snapshot store
	StoreDirName    = "store"     // CommitLog, ConsumeQueues, IndexFiles, apply checkpoint
)

// Config configures a Node. Zero durations and counts take the defaults above.
type Config struct {
	// ID is this node's raft server id (stable for the node's life).
	ID raft.ServerID
	// Dir is the node's data root; see the *DirName constants.
	Dir string
	// Peers is the static initial membership. A node with no raft state that is
	// itself in Peers bootstraps the group with it; every such node may do so
	// with the same list. Nodes added later (AddVoter/AddNonvoter) start with
	// Peers empty.
	Peers []raft.Server
	// Transport carries raft RPCs; the node owns it from Open on and closes it.
	Transport raft.Transport
	// LogStore selects the raft LogStore backend ("" = raft-wal).
	LogStore raftlog.LogStoreKind
	// OpenRaftStores, when set, replaces raftlog.OpenStores. Test and chaos
	// hook only (a fault-injecting file layer under the raft log, scenario D2);
	// nil in production.
	OpenRaftStores func(dir string, kind raftlog.LogStoreKind, logger hclog.Logger) (*raftlog.Stores, error)
	// WrapLogStore, when set, wraps the LogStore handed to raft (the outermost
	// one, in front of raftlog's cache, so injected errors reach raft intact).
	// Test and chaos hook only (raftlog.FaultyLogStore, scenario D1); nil in
	// production.
	WrapLogStore func(raft.LogStore) raft.LogStore
	// Store configures the message store; Store.Dir defaults to Dir/store.
	Store store.Config
	// StoreHost is the broker address written into every message (and its msgId).
	StoreHost netip.AddrPort

	// Raft timing, see raft.Config.
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	MaxAppendEntries   int
	SnapshotInterval   time.Duration
	SnapshotThreshold  uint64
	// TrailingLogs kept after a snapshot. 0 means the default; set
	// KeepNoTrailingLogs to really keep none.
	TrailingLogs       uint64
	KeepNoTrailingLogs bool
	SnapshotRetain     int

	// DiskStallTimeout: once a raft log write or CommitLog append has run this
	// long, the node fences its outgoing raft RPCs until it returns, so a
	// leader whose disk hangs stops heartbeating and the group elects another
	// (diskguard.go). 0 means 2 × HeartbeatTimeout, at least
	// MinDiskStallTimeout; negative disables it.
	DiskStallTimeout time.Duration
	// SerialLeaderFsync turns off the overlap of the leader's raft log fsync
	// with replication (raftlog's leadersync.go): the leader then fsyncs each
	// batch before raft sends it, as hashicorp/raft does by itself.
	SerialLeaderFsync bool
	// CheckpointInterval is how often the FSM's apply checkpoint is written.
	CheckpointInterval time.Duration
	// Proposer bounds group commit.
	Proposer ProposerConfig
	// Now is the leader's clock for store timestamps; nil means time.Now.
	Now    func() time.Time
	Logger hclog.Logger
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.HeartbeatTimeout, DefaultHeartbeatTimeout)
	def(&c.ElectionTimeout, DefaultElectionTimeout)
	def(&c.LeaderLeaseTimeout, DefaultLeaderLeaseTimeout)
	def(&c.CommitTimeout, DefaultCommitTimeout)
	def(&c.SnapshotInterval, DefaultSnapshotInterval)
	def(&c.CheckpointInterval, DefaultCheckpointInterval)
	if c.DiskStallTimeout == 0 {
		c.DiskStallTimeout = max(2*c.HeartbeatTimeout, MinDiskStallTimeout)
	}
	if c.MaxAppendEntries <= 0 {
		c.MaxAppendEntries = DefaultMaxAppendEntries
	}
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = DefaultSnapshotThreshold
	}
	if c.TrailingLogs == 0 && !c.KeepNoTrailingLogs {
		c.TrailingLogs = DefaultTrailingLogs
	}
	if c.SnapshotRetain <= 0 {
		c.SnapshotRetain = DefaultSnapshotRetain
	}
	if c.Store.Dir == "" {
		c.Store.Dir = filepath.Join(c.Dir, StoreDirName)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	c.Proposer = c.Proposer.withDefaults()
	return c
}

func (c Config) validate() error {
	switch {
	case c.ID == "":
		return fmt.Errorf("%w: ID is required", ErrConfig)
	case c.Dir == "":
		return fmt.Errorf("%w: Dir is required", ErrConfig)
	case c.Transport == nil:
		return fmt.Errorf("%w: Transport is required", ErrConfig)
	}
	return nil
}

func (c Config) raftConfig() *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = c.ID
	rc.HeartbeatTimeout = c.HeartbeatTimeout
	rc.ElectionTimeout = c.ElectionTimeout
	rc.LeaderLeaseTimeout = c.LeaderLeaseTimeout
	rc.CommitTimeout = c.CommitTimeout
	rc.MaxAppendEntries = c.MaxAppendEntries
	rc.BatchApplyCh = true
	rc.SnapshotInterval = c.SnapshotInterval
	rc.SnapshotThreshold = c.SnapshotThreshold
	rc.TrailingLogs = c.TrailingLogs
	// The store and the apply checkpoint survive a restart; raft replays only
	// what follows the checkpoint (fsm.New cut the store back to it).
	rc.NoSnapshotRestoreOnStart = true
	rc.Logger = c.Logger.Named("raft")
	return rc
}
