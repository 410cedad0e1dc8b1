package broker

import (
	"crypto/tls"
	"net/netip"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/adminapi"
	"github.com/rocketraft/rocketraft/broker/auth"
	"github.com/rocketraft/rocketraft/broker/metrics"
	"github.com/rocketraft/rocketraft/broker/schedule"
	"github.com/rocketraft/rocketraft/broker/transaction"
	"github.com/rocketraft/rocketraft/transport"
)

// Peer is one member of the group: raft id, and the client-facing address that a
// follower forwards writes to when that peer leads (dLegerPeerClientAddrs). It
// takes precedence over what the peer announced through raft (fsm.MemberInfo).
type Peer struct {
	ID         string
	ClientAddr string
}

// Config is one broker node's settings (cmd maps config.Broker onto it).
type Config struct {
	ClusterName  string
	BrokerName   string
	ListenAddr   string // where the remoting server listens
	ClientAddr   string // advertised host:port (registration); a host name or an IP
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
	// StoreHost is the STOREHOST of the records this node writes (and of their
	// msgIds): an IP, because the record has no room for a name. Zero means
	// ClientAddr, which must then be ip:port.
	StoreHost netip.AddrPort
	// MessageDelayLevel is the delay of each level 1..N (default
	// schedule.DefaultMessageDelayLevel); DELAY above N is clamped to N.
	MessageDelayLevel []time.Duration
	// CacheTailLeader and CacheTailFollower are the store's cached tail
	// (store.SetCachedTail) while this node leads and while it follows; <= 0
	// keeps the whole CommitLog cached.
	CacheTailLeader, CacheTailFollower int64
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
	// TraceTopicEnable (traceTopicEnable) makes a new leader create TraceTopic
	// (msgTraceTopicName, default DefaultTraceTopic) with one queue, as Apache's
	// TopicConfigManager does, so trace producers have a route.
	TraceTopicEnable bool
	TraceTopic       string
	// RegionID (regionId; "" is Apache's DefaultRegion) and TraceOff (traceOn=false)
	// are stamped on every stored message and send answer as MSG_REGION and
	// TRACE_ON, unless the producer set them.
	RegionID string
	TraceOff bool
	// DLegerGroup is the raft group's name (dLegerGroup; default BrokerName).
	// This node announces it with its client address when it leads, and does
	// not relay writes to a leader that announced another one.
	DLegerGroup string
	// Metrics, when set, records every request (the first stage of the handler
	// chain), role changes and the store's flushes.
	Metrics *metrics.Metrics
	// ACL, when set, checks every request's signature and permissions (the
	// authorisation stage of the chain); nil leaves the broker open.
	ACL *auth.ACL
	// NamesrvAuthSecret, when set, signs this node's nameserver writes
	// (registration, unregistration) with nameserver.BrokerCredentials, as a
	// nameserver with brokerAuthFile requires; "" sends them unsigned.
	NamesrvAuthSecret string
	// VIPListenAddr is where the VIP channel listens (Apache's fastRemotingServer,
	// listenPort-2): every code but pull, with TLS and ACL as on ListenAddr.
	// "" opens no VIP channel.
	VIPListenAddr string
	// TLS, when set, applies to the client port (tlsMode: the first byte tells TLS
	// from plaintext); nil serves plaintext only.
	TLS *transport.TLSConfig
	// ClientTLS, when set, makes this node's own connections (nameservers, the
	// leader it forwards to) TLS; nil dials plaintext.
	ClientTLS *tls.Config
	// Settings, when set, is this node's broker.conf for GET_BROKER_CONFIG and
	// UPDATE_BROKER_CONFIG (mqadmin getBrokerConfig, updateBrokerConfig); nil:
	// those codes answer that the node has none.
	Settings adminapi.Settings
	// Version is the binary's version, reported in the runtime info.
	Version string
	// Monotonic is the clock of intervals measured on this node alone: queue
	// lock leases, client idle expiry, the spacing of disk checks. Its readings
	// are never stored, replicated or sent, so a wall-clock step (NTP, an
	// operator) must not move them. nil means time.Now, whose monotonic reading
	// Go uses for Sub and Before and which a step of the wall clock does not
	// move (raft's own timers rely on the same). The wall clock, for everything
	// stored or compared across nodes (store timestamps, delay due times,
	// half-message ages, retention), is the replica's Now (node.Config.Now);
	// docs/reliability.md "Clock jumps" says what each subsystem does.
	Monotonic func() time.Time
	Logger    hclog.Logger
}

// DefaultTraceTopic is Apache's RMQ_SYS_TRACE_TOPIC, where the official
// clients' trace dispatchers write by default.
const DefaultTraceTopic = "RMQ_SYS_TRACE_TOPIC"

// Intervals of the loops that have no setting (Java's values where it has one).
const (
	// clientExpiryScan is how often idle clients are dropped.
	clientExpiryScan = 10 * time.Second
	// clientIdleTimeout drops a client that has not heartbeated for this long
	// (Java's channelExpiredTimeout, 120 s).
	clientIdleTimeout = 120 * time.Second
	// diskCheckRefresh is how often the background loop refreshes the disk-full
	// flag while nobody sends (sends refresh it themselves, see diskCheckInterval).
	diskCheckRefresh = time.Second
)

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
	if c.Monotonic == nil {
		c.Monotonic = time.Now
	}
	if len(c.MessageDelayLevel) == 0 {
		c.MessageDelayLevel = schedule.DefaultMessageDelayLevel
	}
	if c.TransactionTimeout == 0 {
		c.TransactionTimeout = transaction.DefaultTimeout
	}
	if c.TransactionCheckInterval == 0 {
		c.TransactionCheckInterval = transaction.DefaultCheckInterval
	}
	if c.TransactionCheckMax == 0 {
		c.TransactionCheckMax = transaction.DefaultCheckMax
	}
	if c.DLegerGroup == "" {
		c.DLegerGroup = c.BrokerName
	}
	if c.TraceTopic == "" {
		c.TraceTopic = DefaultTraceTopic
	}
	return c
}
