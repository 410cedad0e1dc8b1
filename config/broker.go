package config

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// FlushDiskType is RocketMQ's CommitLog flush policy. With Raft the quorum
// fsyncs the raft log before an ack either way; this only decides whether the
// CommitLog page cache is also forced before an apply is reported.
type FlushDiskType string

const (
	AsyncFlush FlushDiskType = "ASYNC_FLUSH"
	SyncFlush  FlushDiskType = "SYNC_FLUSH"
)

// LogStoreKind selects the raft LogStore implementation.
type LogStoreKind string

const (
	LogStoreWAL    LogStoreKind = "wal"    // hashicorp/raft-wal: segment files, fsync per batch
	LogStoreBoltDB LogStoreKind = "boltdb" // hashicorp/raft-boltdb/v2
	// LogStoreCommitLog keeps the raft log in the CommitLog (decision 0016).
	LogStoreCommitLog LogStoreKind = "commitlog"
	// LogStoreAuto is the kind a node's raft state was written with, commitlog for
	// a new node.
	LogStoreAuto LogStoreKind = "auto"
)

// Peer is one member of a broker group, from dLegerPeers ("n0-127.0.0.1:40911").
type Peer struct {
	ID   string // raft ServerID
	Addr string // raft address, host:port
}

// RaftConfig holds the raft timing and storage keys (our own, prefixed "raft").
type RaftConfig struct {
	HeartbeatTimeout   time.Duration // raftHeartbeatTimeout
	ElectionTimeout    time.Duration // raftElectionTimeout
	LeaderLeaseTimeout time.Duration // raftLeaderLeaseTimeout
	CommitTimeout      time.Duration // raftCommitTimeout
	SnapshotInterval   time.Duration // raftSnapshotInterval
	SnapshotThreshold  uint64        // raftSnapshotThreshold, in raft log entries
	TrailingLogs       uint64        // raftTrailingLogs, entries kept after a snapshot
	LogStore           LogStoreKind  // raftLogStore
	MaxAppendEntries   int           // raftMaxAppendEntries
	// DiskStallTimeout (raftDiskStallTimeout): 0 = automatic, negative = off.
	DiskStallTimeout time.Duration
	// SerialLeaderFsync is raftLeaderFsyncOverlap=false: the leader fsyncs
	// its log before replicating, as hashicorp/raft does by itself.
	SerialLeaderFsync bool
}

// GroupCommitConfig bounds the proposer that coalesces concurrent sends into one
// raft entry.
type GroupCommitConfig struct {
	MaxBytes    int // groupCommitMaxBytes: encoded messages per raft entry
	MaxMessages int // groupCommitMaxMessages: messages per raft entry
	MaxPending  int // groupCommitMaxPending: sends waiting for a batch before SYSTEM_BUSY
	MaxInflight int // groupCommitMaxInflight: entries proposed and not yet applied
	// PipelineMinBytes (groupCommitPipelineMinBytes): bytes queued before an
	// entry is proposed while another is in flight; 0 = no threshold.
	PipelineMinBytes int
	// GatherMax (groupCommitGatherMax): longest wait, with nothing in flight,
	// for the callers the last entry answered to send again; 0 = no wait.
	GatherMax time.Duration
}

// Broker is one node of a broker group. Field comments name the file key.
type Broker struct {
	ClusterName      string   // brokerClusterName
	BrokerName       string   // brokerName: the group; the leader registers it as brokerId 0
	BrokerIP1        string   // brokerIP1: the address clients are told to connect to
	ListenPort       int      // listenPort
	NamesrvAddrs     []string // namesrvAddr, ';'-separated; empty = register nowhere
	StorePathRootDir string   // storePathRootDir

	DLegerGroup string // dLegerGroup; defaults to BrokerName
	Peers       []Peer // dLegerPeers
	// PeerClientAddrs (dLegerPeerClientAddrs) maps peer ids to client addresses for
	// forwarding writes to the leader; Addr is the client-facing host:port.
	PeerClientAddrs   []Peer
	SelfID            string // dLegerSelfId. Invariant (after Validate): one of Peers
	PreferredLeaderID string // preferredLeaderId; "" = none. Invariant: "" or one of Peers
	// Join (dLegerJoin) starts the node without bootstrapping: it waits to be added
	// to a running group. A fresh node that bootstraps with a peer list the running
	// group does not share could write a conflicting entry at index 1.
	Join bool

	MappedFileSizeCommitLog    int64         // mappedFileSizeCommitLog, bytes per CommitLog segment
	MappedFileSizeConsumeQueue int64         // mappedFileSizeConsumeQueue, bytes; multiple of 20
	WarmMappedFile             bool          // warmMapedFileEnable: pre-zero CommitLog segments
	CommitLogWarmAhead         int64         // commitLogWarmAhead: bytes populated ahead of the write position; 0 = off
	CommitLogScrubRate         int64         // commitLogScrubRate: bytes a second the scrub reads after a start; 0 = off
	CommitLogCacheTailLeader   int64         // commitLogCacheTailLeader: CommitLog bytes a leader keeps in the page cache; 0 = all
	CommitLogCacheTailFollower int64         // commitLogCacheTailFollower: the same on a follower; 0 = all
	FileReservedTime           time.Duration // fileReservedTime (hours in the file)
	DeleteWhen                 []int         // deleteWhen: hours of day 0-23 when expired files go
	DiskMaxUsedSpaceRatio      int           // diskMaxUsedSpaceRatio, percent
	FlushDiskType              FlushDiskType // flushDiskType
	FlushInterval              time.Duration // flushIntervalCommitLog (ms in the file)
	MaxMessageSize             int           // maxMessageSize, bytes
	AutoCreateTopicEnable      bool          // autoCreateTopicEnable
	DefaultTopicQueueNums      int           // defaultTopicQueueNums
	MessageDelayLevel          []time.Duration
	TransactionTimeOut         time.Duration // transactionTimeOut (ms in the file)
	TransactionCheckInterval   time.Duration // transactionCheckInterval (ms in the file)
	TransactionCheckMax        int           // transactionCheckMax
	LongPollingEnable          bool          // longPollingEnable
	ACLEnable                  bool          // aclEnable
	ACLFile                    string        // aclFile: plain_acl.yml; required when ACLEnable
	NamesrvAuthSecret          string        // namesrvAuthSecret: the group's secret for signing nameserver writes
	MaxIndexNum                int           // maxIndexNum: entries per IndexFile
	MaxHashSlotNum             int           // maxHashSlotNum: hash slots per IndexFile
	IndexFlushInterval         time.Duration // indexFlushInterval: how often the IndexFiles are synced (decision 0017)
	TraceTopicEnable           bool          // traceTopicEnable: the leader creates MsgTraceTopicName
	MsgTraceTopicName          string        // msgTraceTopicName (default RMQ_SYS_TRACE_TOPIC)
	RegisterNameServerPeriod   time.Duration // registerNameServerPeriod (ms in the file)

	RegionID string // regionId: MSG_REGION stamped on stored messages and send answers (default DefaultRegion)
	TraceOn  bool   // traceOn: TRACE_ON stamped likewise (default true)

	Raft        RaftConfig
	GroupCommit GroupCommitConfig
	TLS         TLSServer // tls* keys of the client port
	// TLSClientEnable (tlsClientEnable): this node's outbound remoting connections
	// (nameservers, the leader) dial TLS.
	TLSClientEnable bool
	// RaftTLSEnable (raftTlsEnable): mutual TLS on the raft port, with the
	// node's TLS.CertPath/KeyPath and TLS.TrustCertPath as the group's CA.
	RaftTLSEnable bool
	// RaftTLSMode (raftTlsMode): enforcing (TLS only) or permissive (TLS and
	// plaintext peers, for moving a running group to TLS); read with
	// raftTlsEnable only.
	RaftTLSMode string

	ConsumerOffsetFlushInterval time.Duration // consumerOffsetFlushInterval
	AdminListen                 string        // adminListen: HTTP metrics/health; "" disables
	LogLevel                    string        // logLevel: trace|debug|info|warn|error (lowercase)
	MaxProcs                    int           // maxProcs: GOMAXPROCS; 0 = the cores divided among the group's members on this host

	// Warnings are the Apache keys the file (or a variable, or --set) gave
	// that have no effect here, one per key, ordered like problems (apache.go).
	// The broker logs each at start; nil when there were none.
	Warnings []Warning
}

// Defaults that other keys or docs refer to.
const (
	DefaultBrokerListenPort  = 10911
	DefaultNamesrvListenPort = 9876
	// adminPortOffset: admin HTTP sits at listenPort+2, clear of RocketMQ's
	// listenPort-2 (VIP channel) and listenPort+1 (HA) neighbours.
	adminPortOffset = 2
	// vipPortOffset: the VIP channel (Apache's fastRemotingServer) listens at
	// listenPort-2, where Java clients with sendMessageWithVIPChannel and
	// rocketmq-dashboard look for it (MixAll.brokerVIPChannel).
	vipPortOffset = 2
)

// DefaultMessageDelayLevel is RocketMQ's default delay ladder (18 levels).
const DefaultMessageDelayLevel = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"

// DefaultBroker returns a valid single-node group ("n0" on 127.0.0.1:40911)
// with RocketMQ's defaults, so `rocketraft broker` runs without a file.
func DefaultBroker() Broker {
	levels, err := parseDelayLevels(DefaultMessageDelayLevel)
	if err != nil {
		panic("config: DefaultMessageDelayLevel does not parse: " + err.Error())
	}
	return Broker{
		ClusterName:       "DefaultCluster",
		BrokerName:        "broker-a",
		BrokerIP1:         "127.0.0.1",
		ListenPort:        DefaultBrokerListenPort,
		NamesrvAddrs:      []string{"127.0.0.1:9876"},
		StorePathRootDir:  "store",
		DLegerGroup:       "broker-a",
		Peers:             []Peer{{ID: "n0", Addr: "127.0.0.1:40911"}},
		SelfID:            "n0",
		PreferredLeaderID: "",

		MappedFileSizeCommitLog:    1 << 30,
		WarmMappedFile:             false,
		CommitLogWarmAhead:         4 << 20,
		CommitLogScrubRate:         8 << 20,
		CommitLogCacheTailLeader:   0,
		CommitLogCacheTailFollower: 64 << 20,
		MappedFileSizeConsumeQueue: 300000 * consumeQueueUnitSize,
		FileReservedTime:           72 * time.Hour,
		DeleteWhen:                 []int{4},
		DiskMaxUsedSpaceRatio:      75,
		FlushDiskType:              AsyncFlush,
		FlushInterval:              500 * time.Millisecond,
		MaxMessageSize:             4 << 20,
		AutoCreateTopicEnable:      true,
		DefaultTopicQueueNums:      4,
		MessageDelayLevel:          levels,
		TransactionTimeOut:         6 * time.Second,
		TransactionCheckInterval:   30 * time.Second,
		TransactionCheckMax:        15,
		LongPollingEnable:          true,
		MaxIndexNum:                5000000 * 4,
		IndexFlushInterval:         time.Minute,
		MaxHashSlotNum:             5000000,
		MsgTraceTopicName:          DefaultTraceTopic,
		RegisterNameServerPeriod:   30 * time.Second,
		RegionID:                   DefaultRegionID,
		TraceOn:                    true,

		Raft: RaftConfig{
			HeartbeatTimeout:   time.Second,
			ElectionTimeout:    time.Second,
			LeaderLeaseTimeout: 500 * time.Millisecond,
			CommitTimeout:      50 * time.Millisecond,
			SnapshotInterval:   30 * time.Second, // decision 0011
			SnapshotThreshold:  2048,
			TrailingLogs:       10240,
			LogStore:           LogStoreAuto, // decision 0016: commitlog for a new node
			MaxAppendEntries:   64,
		},
		GroupCommit: GroupCommitConfig{
			MaxBytes:    4 << 20,
			MaxMessages: 1024,
			MaxPending:  65536,
			MaxInflight: 4,
			// Only an async window's worth pipelines (docs/performance.md,
			// seventh pass).
			PipelineMinBytes: 128 << 10,
			// One entry for N sync producers, not 1 and N-1 (docs/performance.md,
			// tenth pass).
			GatherMax: time.Millisecond,
		},
		TLS:                         defaultTLSServer(),
		RaftTLSMode:                 TLSModeEnforcing,
		ConsumerOffsetFlushInterval: time.Second,
		AdminListen:                 defaultAdminListen(DefaultBrokerListenPort),
		LogLevel:                    "info",
	}
}

// defaultAdminListen is loopback on listenPort+2: metrics and health are not
// exposed off the host unless the operator says so. "" when the port overflows.
func defaultAdminListen(listenPort int) string {
	p := listenPort + adminPortOffset
	if p > 65535 {
		return ""
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
}

// LoadBroker reads path (format by extension), applies it over DefaultBroker and
// validates. A *ValidationError lists every problem in the file, each with its
// line. It reads no environment and no flags: Layers does.
func LoadBroker(path string) (Broker, error) {
	b, _, err := Layers{File: path}.Broker()
	return b, err
}

// ParseBroker applies data over DefaultBroker and validates. Keys missing from
// data keep their defaults; dLegerGroup defaults to brokerName and adminListen
// to 127.0.0.1:<listenPort+2> as set in data. Problems name lines ("line 3").
func ParseBroker(data []byte, format Format) (Broker, error) {
	b, _, err := loadBroker(sources{data: data, format: format, hasFile: true})
	return b, err
}

// loadBroker layers src over DefaultBroker, derives the derived defaults and
// validates, naming the origin of every bad value.
func loadBroker(src sources) (Broker, Effective, error) {
	b := DefaultBroker()
	origins, probs, err := applyLayers(brokerLoadKeys, keyNames(namesrvKeys), src, &b)
	if err != nil {
		return Broker{}, Effective{}, err
	}
	b.Warnings = attributeWarnings(b.Warnings, origins)
	if origins["dLegerGroup"].Kind == OriginDefault {
		b.DLegerGroup = b.BrokerName
		origins["dLegerGroup"] = Origin{Kind: OriginDefault, Derived: "brokerName"}
	}
	if origins["adminListen"].Kind == OriginDefault {
		origins["adminListen"] = Origin{Kind: OriginDefault, Derived: "127.0.0.1:<listenPort+2>"}
		b.AdminListen = defaultAdminListen(b.ListenPort)
		if b.AdminListen == "" {
			probs.addAt(origins["adminListen"], "adminListen", "", fmt.Sprintf(
				"default listenPort+%d is above 65535; set adminListen, or set it empty to disable", adminPortOffset))
		}
	}
	vprobs := b.validate()
	if origins["dLegerGroup"].Derived != "" && (hasKey(probs, "brokerName") || hasKey(vprobs, "brokerName")) {
		// dLegerGroup copied a bad brokerName: one report, on the key to fix.
		vprobs = dropKeys(vprobs, problems{{Key: "dLegerGroup"}})
	}
	vprobs.attribute(origins)
	probs = append(probs, dropKeys(vprobs, probs)...)
	probs.sortByOrigin()
	if err := probs.err(); err != nil {
		return Broker{}, Effective{}, err
	}
	eff := effective("broker", brokerKeys, &b, origins)
	eff.Warnings = b.Warnings
	return b, eff, nil
}

// Validate checks every key and the rules between keys, returning a
// *ValidationError that lists all problems, or nil.
func (b Broker) Validate() error { return b.validate().err() }

func (b Broker) validate() problems {
	probs := checkAll(brokerKeys, &b)
	return append(probs, dropKeys(b.crossCheck(), probs)...)
}

// VIPPort is where the VIP channel listens: listenPort-2, every request code
// but pull, same tlsMode and ACL as listenPort. Validate keeps it 1..65535 and
// clear of adminListen and this node's raft port.
func (b Broker) VIPPort() int { return b.ListenPort - vipPortOffset }

// ClientAddr is the address clients connect to: brokerIP1:listenPort.
func (b Broker) ClientAddr() string {
	return net.JoinHostPort(b.BrokerIP1, strconv.Itoa(b.ListenPort))
}

// Self returns this node's peer (dLegerSelfId) and its index in Peers.
func (b Broker) Self() (Peer, int, error) {
	for i, p := range b.Peers {
		if p.ID == b.SelfID {
			return p, i, nil
		}
	}
	return Peer{}, -1, fmt.Errorf("config: dLegerSelfId=%q: %w", b.SelfID, ErrUnknownPeer)
}

// BrokerKeys documents every broker.conf key, in file order.
func BrokerKeys() []KeyDoc { return keyDocs(brokerKeys, DefaultBroker()) }
