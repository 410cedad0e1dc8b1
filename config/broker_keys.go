package config

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// consumeQueueUnitSize is the size of one ConsumeQueue entry (offset 8, size 4,
// tag hash 8); a ConsumeQueue file must hold whole entries.
const consumeQueueUnitSize = 20

// Size bounds. The lower CommitLog bound keeps tests able to roll segments
// quickly; the upper keeps one segment's mmap and recovery scan bounded.
const (
	minCommitLogFileSize = 64 << 10
	maxCommitLogFileSize = 4 << 30
	// maxCacheTail bounds commitLogCacheTail*: 1 TiB, far above any page cache.
	maxCacheTail        = 1 << 40
	maxScrubRate        = 16 << 30 // bytes a second: beyond any disk
	maxMessageSizeLimit = 16 << 20
	// messageOverhead bounds the stored header of one message beyond its body
	// (fixed fields ~100 B, topic ≤ 127 B, properties ≤ 32767 B), rounded up: a
	// CommitLog segment must hold one maximal message since messages never span
	// segments.
	messageOverhead = 64 << 10
	// maxGroupCommitBytes keeps one raft entry well under what a follower can
	// receive and fsync in one heartbeat.
	maxGroupCommitBytes = 64 << 20
	// minDiskStallTimeout: below it the disk guard would fence a leader whose
	// fsyncs are only slow (D7 measured 20–50 ms added per fsync under load).
	minDiskStallTimeout = 500 * time.Millisecond
	// maxIndexFileSize: IndexFile positions are 32-bit in RocketMQ's layout.
	maxIndexFileSize = 1<<31 - 1
	indexHeaderSize  = 40
	indexSlotSize    = 4
	indexEntrySize   = 20
)

// brokerKeys is the broker.conf key table, in the order files and docs list them.
var brokerKeys = []keySpec[Broker]{
	// Identity and addresses.
	{
		name: "brokerClusterName", doc: "Cluster the group registers under with the nameserver.",
		set:   func(b *Broker, s string) error { b.ClusterName = strings.TrimSpace(s); return nil },
		get:   func(b *Broker) string { return b.ClusterName },
		check: func(b *Broker) string { return checkName(b.ClusterName) },
	},
	{
		name: "brokerName", doc: "Name of the broker group; the group's leader registers it as brokerId 0.",
		set:   func(b *Broker, s string) error { b.BrokerName = strings.TrimSpace(s); return nil },
		get:   func(b *Broker) string { return b.BrokerName },
		check: func(b *Broker) string { return checkName(b.BrokerName) },
	},
	{
		name: "brokerIP1", doc: "Client-facing IP or host name this node registers; clients connect to brokerIP1:listenPort.",
		set: func(b *Broker, s string) error { b.BrokerIP1 = strings.TrimSpace(s); return nil },
		get: func(b *Broker) string { return b.BrokerIP1 },
		check: func(b *Broker) string {
			if r := checkHost(b.BrokerIP1); r != "" {
				return r
			}
			if b.BrokerIP1 == "0.0.0.0" || b.BrokerIP1 == "::" {
				return "must be an address clients can connect to, not 0.0.0.0 or ::"
			}
			return ""
		},
	},
	{
		name: "listenPort", doc: "TCP port of the RocketMQ remoting protocol. The VIP channel listens on listenPort-2 (as Apache's broker does, always): every request code but pull, with the same tlsMode and ACL; rocketmq-dashboard and Java clients with sendMessageWithVIPChannel send and administer there.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 1, 65535)
			if err != nil {
				return err
			}
			b.ListenPort = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.ListenPort) },
		check: func(b *Broker) string { return intRule(int64(b.ListenPort), 1, 65535) },
	},
	{
		name: "namesrvAddr", doc: "Nameservers to register with, ';'-separated host:port list; empty registers nowhere.",
		listSep: ";",
		set: func(b *Broker, s string) error {
			addrs, err := parseAddrList(s)
			if err == nil {
				b.NamesrvAddrs = addrs
			}
			return err
		},
		get: func(b *Broker) string { return strings.Join(b.NamesrvAddrs, ";") },
		check: func(b *Broker) string {
			for _, a := range b.NamesrvAddrs {
				if err := checkHostPort(a, false); err != nil {
					return fmt.Sprintf("item %q %v", a, err)
				}
			}
			return ""
		},
	},
	{
		name: "storePathRootDir", doc: "Root directory of the CommitLog, ConsumeQueues, IndexFiles and raft data (relative to the working directory if not absolute).",
		set:   func(b *Broker, s string) error { b.StorePathRootDir = strings.TrimSpace(s); return nil },
		get:   func(b *Broker) string { return b.StorePathRootDir },
		check: func(b *Broker) string { return nonEmpty(b.StorePathRootDir) },
	},

	// Raft group membership (DLedger names).
	{
		name: "dLegerGroup", doc: "Raft group name; every peer of the group must use the same one: a leader announces it with its client address, and a follower does not relay writes to a leader of another group.",
		derivedDefault: "brokerName",
		set:            func(b *Broker, s string) error { b.DLegerGroup = strings.TrimSpace(s); return nil },
		get:            func(b *Broker) string { return b.DLegerGroup },
		check:          func(b *Broker) string { return checkName(b.DLegerGroup) },
	},
	{
		name: "dLegerPeers", doc: "Members of the group with their raft addresses: id-host:port;id-host:port;...",
		listSep: ";",
		set: func(b *Broker, s string) error {
			peers, err := parsePeers(s)
			if err == nil {
				b.Peers = peers
			}
			return err
		},
		get:   func(b *Broker) string { return formatPeers(b.Peers) },
		check: func(b *Broker) string { return checkPeers(b.Peers) },
	},
	{
		name: "dLegerPeerClientAddrs", doc: "Optional client-facing address of each member: id-host:port;... A follower relays writes to the leader's address listed here; for a member not listed (or when empty, as in Apache's configs) to the address that member announced through the group when it became leader (brokerIP1:listenPort).",
		listSep: ";",
		set: func(b *Broker, s string) error {
			if strings.TrimSpace(s) == "" {
				b.PeerClientAddrs = nil
				return nil
			}
			peers, err := parsePeers(s)
			if err == nil {
				b.PeerClientAddrs = peers
			}
			return err
		},
		get: func(b *Broker) string { return formatPeers(b.PeerClientAddrs) },
		check: func(b *Broker) string {
			for _, p := range b.PeerClientAddrs {
				if !hasPeer(b.Peers, p.ID) {
					return "id " + p.ID + " is not one of the dLegerPeers ids (" + peerIDs(b.Peers) + ")"
				}
			}
			return ""
		},
	},
	{
		name: "dLegerSelfId", doc: "This node's id; must be one of dLegerPeers.",
		set: func(b *Broker, s string) error { b.SelfID = strings.TrimSpace(s); return nil },
		get: func(b *Broker) string { return b.SelfID },
		check: func(b *Broker) string {
			if b.SelfID == "" {
				return "must not be empty"
			}
			if !hasPeer(b.Peers, b.SelfID) {
				return "must be one of the dLegerPeers ids (" + peerIDs(b.Peers) + ")"
			}
			return ""
		},
	},
	{
		name: "dLegerJoin", doc: "Start without bootstrapping the group: this node joins a running group after the leader adds it (rocketraft admin raft add-voter / add-nonvoter). Leave false for the group's initial members.",
		set: func(b *Broker, s string) error {
			v, err := parseBool(s)
			if err != nil {
				return err
			}
			b.Join = v
			return nil
		},
		get: func(b *Broker) string { return btoa(b.Join) },
	},
	{
		name: "preferredLeaderId", doc: "Peer that leadership is transferred to when it is healthy; empty for none.",
		set: func(b *Broker, s string) error { b.PreferredLeaderID = strings.TrimSpace(s); return nil },
		get: func(b *Broker) string { return b.PreferredLeaderID },
		check: func(b *Broker) string {
			if b.PreferredLeaderID != "" && !hasPeer(b.Peers, b.PreferredLeaderID) {
				return "must be empty or one of the dLegerPeers ids (" + peerIDs(b.Peers) + ")"
			}
			return ""
		},
	},

	// Store.
	{
		name: "mappedFileSizeCommitLog", doc: "Bytes per CommitLog segment file.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, minCommitLogFileSize, maxCommitLogFileSize)
			if err != nil {
				return err
			}
			b.MappedFileSizeCommitLog = n
			return nil
		},
		get: func(b *Broker) string { return i64toa(b.MappedFileSizeCommitLog) },
		check: func(b *Broker) string {
			return intRule(b.MappedFileSizeCommitLog, minCommitLogFileSize, maxCommitLogFileSize)
		},
	},
	{
		name: "warmMapedFileEnable", doc: "Write zeros through each new CommitLog segment (in the background, ahead of need) instead of only reserving its blocks with fallocate. Off by default, as in Apache: with ASYNC_FLUSH and segments rolling, the zeros cost as much CPU as the block allocation saves, double the bytes written and raise the max send latency (docs/performance.md); with SYNC_FLUSH on a disk where appending to fresh blocks is slow, turn it on.",
		set: func(b *Broker, s string) error {
			v, err := parseBool(s)
			if err != nil {
				return err
			}
			b.WarmMappedFile = v
			return nil
		},
		get: func(b *Broker) string { return btoa(b.WarmMappedFile) },
	},
	{
		name: "commitLogWarmAhead", doc: "Bytes of the CommitLog faulted in ahead of the write position by a background goroutine (MADV_POPULATE_WRITE: writable, bytes unchanged), so that appends never fault in and zero-fill fresh pages themselves: that fault stalled the apply of every node for 18-50 ms about every 8 MB (docs/performance.md, thirteenth pass). The window holds dirty zero pages until the writer reaches them, so keep it small; 0 turns it off.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 0, maxCommitLogFileSize)
			if err != nil {
				return err
			}
			b.CommitLogWarmAhead = n
			return nil
		},
		get: func(b *Broker) string { return i64toa(b.CommitLogWarmAhead) },
		check: func(b *Broker) string {
			return intRule(b.CommitLogWarmAhead, 0, maxCommitLogFileSize)
		},
	},
	{
		name: "commitLogCacheTailFollower", doc: "Bytes of the newest CommitLog a follower keeps in the page cache: each flush hands the older pages, once durable and dispatched, back to the kernel (decision 0022). Consumers read a follower's CommitLog only in passing (every pull answer sends them to brokerId 0, the leader), and a page cache that keeps growing costs every append a page the kernel must find; on a VM that hands idle guest memory back to its host, that costs several times the copy (docs/performance.md, thirty-fourth pass). 0 keeps every page, as Apache does.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 0, maxCacheTail)
			if err != nil {
				return err
			}
			b.CommitLogCacheTailFollower = n
			return nil
		},
		get: func(b *Broker) string { return i64toa(b.CommitLogCacheTailFollower) },
		check: func(b *Broker) string {
			return intRule(b.CommitLogCacheTailFollower, 0, maxCacheTail)
		},
	},
	{
		name: "commitLogCacheTailLeader", doc: "commitLogCacheTailFollower for the leader, whose CommitLog consumers read: a pull for messages further behind than this reads them from the disk. 0 keeps every page, as Apache does.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 0, maxCacheTail)
			if err != nil {
				return err
			}
			b.CommitLogCacheTailLeader = n
			return nil
		},
		get: func(b *Broker) string { return i64toa(b.CommitLogCacheTailLeader) },
		check: func(b *Broker) string {
			return intRule(b.CommitLogCacheTailLeader, 0, maxCacheTail)
		},
	},
	{
		name: "commitLogScrubRate", doc: "Bytes a second a background scrub reads, once after every start, to check the CommitLog segments the start did not: a start checks the last three segments and the raft entries from the entry log's floor up, so that it does not grow with retention (decision 0019). A record that fails its checks stops the node with an error naming the segment, as a start that found it would have refused to open. 0 turns the scrub off.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 0, maxScrubRate)
			if err != nil {
				return err
			}
			b.CommitLogScrubRate = n
			return nil
		},
		get: func(b *Broker) string { return i64toa(b.CommitLogScrubRate) },
		check: func(b *Broker) string {
			return intRule(b.CommitLogScrubRate, 0, maxScrubRate)
		},
	},
	{
		name: "mappedFileSizeConsumeQueue", doc: "Bytes per ConsumeQueue file; a multiple of the 20-byte entry. A queue's next file is made ahead in the background as a sparse file, which gets its disk blocks when the queue takes it: ls shows its full size, du does not (decision 0021).",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, consumeQueueUnitSize, maxCommitLogFileSize)
			if err != nil {
				return err
			}
			b.MappedFileSizeConsumeQueue = n
			return nil
		},
		get: func(b *Broker) string { return i64toa(b.MappedFileSizeConsumeQueue) },
		check: func(b *Broker) string {
			if r := intRule(b.MappedFileSizeConsumeQueue, consumeQueueUnitSize, maxCommitLogFileSize); r != "" {
				return r
			}
			if b.MappedFileSizeConsumeQueue%consumeQueueUnitSize != 0 {
				return "must be a multiple of 20 (one ConsumeQueue entry)"
			}
			return ""
		},
	},
	{
		name: "fileReservedTime", doc: "How long CommitLog files are kept, in hours (or a duration such as 36h).",
		set: func(b *Broker, s string) error {
			d, err := parseHours(s)
			if err != nil {
				return err
			}
			b.FileReservedTime = d
			return nil
		},
		get:   func(b *Broker) string { return formatHours(b.FileReservedTime) },
		check: func(b *Broker) string { return positive(b.FileReservedTime) },
	},
	{
		name: "deleteWhen", doc: "Hours of day (00-23, local time) when expired files are deleted, ';'-separated as in RocketMQ (04;16 runs retention at 04:00 and at 16:00).",
		listSep: ";",
		set: func(b *Broker, s string) error {
			hours, err := parseDeleteWhen(s)
			if err != nil {
				return err
			}
			b.DeleteWhen = hours
			return nil
		},
		get: func(b *Broker) string { return formatDeleteWhen(b.DeleteWhen) },
		check: func(b *Broker) string {
			if len(b.DeleteWhen) == 0 {
				return "must list at least one hour 00..23"
			}
			for _, h := range b.DeleteWhen {
				if h < 0 || h > 23 {
					return fmt.Sprintf("hour %d must be 0..23", h)
				}
			}
			return ""
		},
	},
	{
		name: "diskMaxUsedSpaceRatio", doc: "Disk usage percent above which the oldest files are deleted regardless of fileReservedTime.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 10, 95)
			if err != nil {
				return err
			}
			b.DiskMaxUsedSpaceRatio = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.DiskMaxUsedSpaceRatio) },
		check: func(b *Broker) string { return intRule(int64(b.DiskMaxUsedSpaceRatio), 10, 95) },
	},
	{
		name: "flushDiskType", doc: "ASYNC_FLUSH or SYNC_FLUSH: whether the CommitLog is forced to disk before an apply completes (the raft log is fsynced on a quorum either way).",
		set: func(b *Broker, s string) error {
			switch t := FlushDiskType(strings.ToUpper(strings.TrimSpace(s))); t {
			case AsyncFlush, SyncFlush:
				b.FlushDiskType = t
				return nil
			}
			return errors.New("must be ASYNC_FLUSH or SYNC_FLUSH")
		},
		get: func(b *Broker) string { return string(b.FlushDiskType) },
		check: func(b *Broker) string {
			if b.FlushDiskType != AsyncFlush && b.FlushDiskType != SyncFlush {
				return "must be ASYNC_FLUSH or SYNC_FLUSH"
			}
			return ""
		},
	},
	{
		name: "flushIntervalCommitLog", doc: "Interval of the asynchronous CommitLog flush, in ms (or a duration).",
		set: func(b *Broker, s string) error {
			d, err := parseDuration(s, true)
			if err != nil {
				return err
			}
			b.FlushInterval = d
			return nil
		},
		get:   func(b *Broker) string { return formatMillis(b.FlushInterval) },
		check: func(b *Broker) string { return positive(b.FlushInterval) },
	},
	{
		name: "maxMessageSize", doc: "Largest message body accepted, in bytes.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 1, maxMessageSizeLimit)
			if err != nil {
				return err
			}
			b.MaxMessageSize = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.MaxMessageSize) },
		check: func(b *Broker) string { return intRule(int64(b.MaxMessageSize), 1, maxMessageSizeLimit) },
	},
	{
		name: "autoCreateTopicEnable", doc: "Create a topic on first send instead of rejecting it.",
		set: func(b *Broker, s string) error {
			v, err := parseBool(s)
			if err != nil {
				return err
			}
			b.AutoCreateTopicEnable = v
			return nil
		},
		get: func(b *Broker) string { return btoa(b.AutoCreateTopicEnable) },
	},
	{
		name: "defaultTopicQueueNums", doc: "Queues of an automatically created topic.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 1, 1024)
			if err != nil {
				return err
			}
			b.DefaultTopicQueueNums = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.DefaultTopicQueueNums) },
		check: func(b *Broker) string { return intRule(int64(b.DefaultTopicQueueNums), 1, 1024) },
	},
	{
		name: "messageDelayLevel", doc: "Delay of each delay level 1..N, blank-separated, units s, m, h, d.",
		listSep: " ",
		set: func(b *Broker, s string) error {
			levels, err := parseDelayLevels(s)
			if err == nil {
				b.MessageDelayLevel = levels
			}
			return err
		},
		get: func(b *Broker) string { return formatDelayLevels(b.MessageDelayLevel) },
		check: func(b *Broker) string {
			if len(b.MessageDelayLevel) == 0 {
				return "must list at least one delay level"
			}
			for i, d := range b.MessageDelayLevel {
				if d <= 0 {
					return fmt.Sprintf("level %d must be positive", i+1)
				}
			}
			return ""
		},
	},
	millisKey("transactionTimeOut", "Age of a half (prepared) message before the broker asks its producer about it, in ms (or a duration).",
		func(b *Broker) *time.Duration { return &b.TransactionTimeOut }),
	millisKey("transactionCheckInterval", "Time between transaction check-back rounds, in ms (or a duration).",
		func(b *Broker) *time.Duration { return &b.TransactionCheckInterval }),
	{
		name: "transactionCheckMax", doc: "Check-backs a half message gets before it is moved to TRANS_CHECK_MAX_TIME_TOPIC.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 1, 1<<20)
			if err != nil {
				return err
			}
			b.TransactionCheckMax = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.TransactionCheckMax) },
		check: func(b *Broker) string { return intRule(int64(b.TransactionCheckMax), 1, 1<<20) },
	},
	{
		name: "longPollingEnable", doc: "Hold pull requests that find nothing until a message arrives or the client's suspend timeout passes.",
		set: func(b *Broker, s string) error {
			v, err := parseBool(s)
			if err != nil {
				return err
			}
			b.LongPollingEnable = v
			return nil
		},
		get: func(b *Broker) string { return btoa(b.LongPollingEnable) },
	},
	{
		name: "maxIndexNum", doc: "Index entries per IndexFile.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 1, maxIndexFileSize/indexEntrySize)
			if err != nil {
				return err
			}
			b.MaxIndexNum = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.MaxIndexNum) },
		check: func(b *Broker) string { return intRule(int64(b.MaxIndexNum), 1, maxIndexFileSize/indexEntrySize) },
	},
	{
		name: "maxHashSlotNum", doc: "Hash slots per IndexFile. The table of the file being written (4 bytes a slot, 20 MB by default) is kept on the heap and written into the file once it is full (decision 0018).",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 1, maxIndexFileSize/indexSlotSize)
			if err != nil {
				return err
			}
			b.MaxHashSlotNum = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.MaxHashSlotNum) },
		check: func(b *Broker) string { return intRule(int64(b.MaxHashSlotNum), 1, maxIndexFileSize/indexSlotSize) },
	},
	durationKey("indexFlushInterval", "How often the IndexFiles are synced to disk (rocketraft's; Apache syncs one when it is full). "+
		"A crash re-indexes the CommitLog written since, at the next start; syncing them every second rewrote most of the hash-slot table each time under random keys.",
		time.Second, func(b *Broker) *time.Duration { return &b.IndexFlushInterval }),

	// Message trace, registration and the region (Apache keys, trace_keys.go).
	traceTopicEnableKey(),
	msgTraceTopicNameKey(),
	registerNameServerPeriodKey(),
	regionIDKey(),
	traceOnKey(),

	// Access control (RocketMQ ACL 1.0).
	{
		name: "aclEnable", doc: "Check every request's signature and permissions against the accounts of aclFile; a denied request gets NO_PERMISSION.",
		set: func(b *Broker, s string) error {
			v, err := parseBool(s)
			if err != nil {
				return err
			}
			b.ACLEnable = v
			return nil
		},
		get: func(b *Broker) string { return btoa(b.ACLEnable) },
	},
	{
		name: "aclFile", doc: "Accounts and allow-lists in RocketMQ's plain_acl.yml format; required when aclEnable=true.",
		set: func(b *Broker, s string) error { b.ACLFile = strings.TrimSpace(s); return nil },
		get: func(b *Broker) string { return b.ACLFile },
		check: func(b *Broker) string {
			if !b.ACLEnable {
				return ""
			}
			if b.ACLFile == "" {
				return "required when aclEnable=true"
			}
			if _, err := os.Stat(b.ACLFile); err != nil {
				return "must name a readable file: " + err.Error()
			}
			return ""
		},
	},

	{
		name: "namesrvAuthSecret", doc: "The group's secret (at least 16 characters, the same on every node of the group): the broker signs REGISTER_BROKER and UNREGISTER_BROKER with AccessKey broker:<brokerName> and it, as a nameserver with brokerAuthFile requires. Empty: unsigned (Apache's behaviour).",
		set:   func(b *Broker, s string) error { b.NamesrvAuthSecret = s; return nil },
		get:   func(b *Broker) string { return redactSecret(b.NamesrvAuthSecret) },
		check: func(b *Broker) string { return secretRule(b.NamesrvAuthSecret) },
	},

	// TLS on the client port (RocketMQ's tls.server.* and tls.enable, as file keys).
	tlsModeKey(brokerTLS),
	tlsCertPathKey(brokerTLS),
	tlsKeyPathKey(brokerTLS),
	tlsTrustCertPathKey(brokerTLS, " With tlsClientEnable this node's own connections verify the servers they dial against it too; empty: they do not verify (RocketMQ's default)."),
	tlsNeedClientAuthKey(brokerTLS),
	{
		name: "tlsClientEnable", doc: "This node's own connections (registration with the nameservers, writes forwarded to the leader) use TLS, offering tlsServerCertPath as client certificate when the server asks for one. Needed when they run tlsMode=enforcing.",
		set: func(b *Broker, s string) error {
			v, err := parseBool(s)
			if err != nil {
				return err
			}
			b.TLSClientEnable = v
			return nil
		},
		get: func(b *Broker) string { return btoa(b.TLSClientEnable) },
	},
	{
		name: "raftTlsEnable", doc: "Mutual TLS on the raft port (dLegerPeers): peers dialling in must present a certificate signed by tlsServerTrustCertPath (the group's CA) that names (IP or DNS SAN) the host of one of the group's peers (dLegerPeers, or the current raft configuration), and peers dialled are verified against it, including the raft host as a certificate SAN; this node serves and presents tlsServerCertPath (needs the serverAuth and clientAuth usages), reloaded on change. Independent of tlsMode. A plain and an enforcing TLS node cannot talk: move a running group with raftTlsMode=permissive first.",
		set: func(b *Broker, s string) error {
			v, err := parseBool(s)
			if err != nil {
				return err
			}
			b.RaftTLSEnable = v
			return nil
		},
		get: func(b *Broker) string { return btoa(b.RaftTLSEnable) },
		check: func(b *Broker) string {
			if !b.RaftTLSEnable {
				return ""
			}
			var missing []string
			for _, k := range []struct{ name, val string }{
				{"tlsServerCertPath", b.TLS.CertPath}, {"tlsServerKeyPath", b.TLS.KeyPath}, {"tlsServerTrustCertPath", b.TLS.TrustCertPath},
			} {
				if k.val == "" {
					missing = append(missing, k.name)
				}
			}
			if len(missing) > 0 {
				return "needs " + strings.Join(missing, ", ") + " (the node's pair and the group's CA)"
			}
			return ""
		},
	},
	{
		name: "raftTlsMode", doc: "With raftTlsEnable: enforcing (peers must use TLS) or permissive (peers may use TLS or plaintext, told apart by the first byte, and this node dials TLS first, then plaintext). permissive is for moving a running group to TLS one node at a time (every node permissive, then every node enforcing, one restart each) and is not a secure mode.",
		set: func(b *Broker, s string) error {
			v, err := oneOf(s, raftTLSModes)
			if err == nil {
				b.RaftTLSMode = v
			}
			return err
		},
		get: func(b *Broker) string { return b.RaftTLSMode },
		check: func(b *Broker) string {
			if rule := oneOfRule(b.RaftTLSMode, raftTLSModes); rule != "" {
				return rule
			}
			if b.RaftTLSMode == TLSModePermissive && !b.RaftTLSEnable {
				return "needs raftTlsEnable=true (without it the raft port is plaintext only)"
			}
			return ""
		},
	},

	// Raft (our own keys). Minimums are hashicorp/raft's ValidateConfig rules,
	// checked here so the operator sees the key name instead of a raft error.
	durationKey("raftHeartbeatTimeout", "Follower waits this long without contact from the leader before becoming a candidate.",
		5*time.Millisecond, func(b *Broker) *time.Duration { return &b.Raft.HeartbeatTimeout }),
	durationKey("raftElectionTimeout", "Candidate waits this long without a leader before starting another election.",
		5*time.Millisecond, func(b *Broker) *time.Duration { return &b.Raft.ElectionTimeout }),
	durationKey("raftLeaderLeaseTimeout", "Leader steps down when it cannot reach a quorum for this long; at most raftHeartbeatTimeout.",
		5*time.Millisecond, func(b *Broker) *time.Duration { return &b.Raft.LeaderLeaseTimeout }),
	durationKey("raftCommitTimeout", "Leader sends a heartbeat carrying the commit index at least this often when idle.",
		time.Millisecond, func(b *Broker) *time.Duration { return &b.Raft.CommitTimeout }),
	durationKey("raftSnapshotInterval", "How often raft checks whether to snapshot.",
		5*time.Millisecond, func(b *Broker) *time.Duration { return &b.Raft.SnapshotInterval }),
	{
		name: "raftSnapshotThreshold", doc: "Raft log entries since the last snapshot that trigger a new one.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 1, 1<<62)
			if err != nil {
				return err
			}
			b.Raft.SnapshotThreshold = uint64(n)
			return nil
		},
		get:   func(b *Broker) string { return u64toa(b.Raft.SnapshotThreshold) },
		check: func(b *Broker) string { return uintRule(b.Raft.SnapshotThreshold, 1) },
	},
	{
		name: "raftTrailingLogs", doc: "Raft log entries kept after a snapshot so a briefly lagging follower catches up without one.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 0, 1<<62)
			if err != nil {
				return err
			}
			b.Raft.TrailingLogs = uint64(n)
			return nil
		},
		get: func(b *Broker) string { return u64toa(b.Raft.TrailingLogs) },
	},
	{
		name: "raftLogStore", doc: "Raft LogStore: wal (hashicorp/raft-wal), boltdb (raft-boltdb/v2), commitlog (the raft log kept in the CommitLog itself, so every message is written once: docs/decisions/0016), or auto (the kind this node's raft state was written with; commitlog for a new node). Every node of a group must use the same kind; a node's existing data is not converted.",
		set: func(b *Broker, s string) error {
			switch k := LogStoreKind(strings.ToLower(strings.TrimSpace(s))); k {
			case LogStoreWAL, LogStoreBoltDB, LogStoreCommitLog, LogStoreAuto:
				b.Raft.LogStore = k
				return nil
			}
			return errors.New("must be wal, boltdb, commitlog or auto")
		},
		get: func(b *Broker) string { return string(b.Raft.LogStore) },
		check: func(b *Broker) string {
			switch b.Raft.LogStore {
			case LogStoreWAL, LogStoreBoltDB, LogStoreCommitLog, LogStoreAuto:
			default:
				return "must be wal, boltdb, commitlog or auto"
			}
			return ""
		},
	},
	{
		name: "raftMaxAppendEntries", doc: "Raft log entries per AppendEntries request.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 1, 1024)
			if err != nil {
				return err
			}
			b.Raft.MaxAppendEntries = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.Raft.MaxAppendEntries) },
		check: func(b *Broker) string { return intRule(int64(b.Raft.MaxAppendEntries), 1, 1024) },
	},
	{
		name: "raftLeaderFsyncOverlap", doc: "The leader fsyncs its raft log while the followers receive the entry, instead of before sending it; an entry is applied and acknowledged only once the leader's copy is durable too, so an ack still means a quorum fsynced it (docs/decisions/0015). false: fsync, then replicate. Applies to raftLogStore=wal and commitlog; boltdb always fsyncs first.",
		set: func(b *Broker, s string) error {
			v, err := parseBool(s)
			if err != nil {
				return err
			}
			b.Raft.SerialLeaderFsync = !v
			return nil
		},
		get: func(b *Broker) string { return btoa(!b.Raft.SerialLeaderFsync) },
	},
	{
		// The disk guard (broker/node/diskguard.go, chaos D8): a leader whose raft
		// log write or CommitLog append hangs this long stops answering its
		// followers, so they elect a leader with a working disk.
		name: "raftDiskStallTimeout", doc: "A leader whose raft log write or CommitLog append has hung this long fences its raft RPCs so the followers elect another leader; 0s = max(2×raftHeartbeatTimeout, 2s), off disables; at least 500ms.",
		set: func(b *Broker, s string) error {
			if strings.TrimSpace(s) == "off" {
				b.Raft.DiskStallTimeout = -1
				return nil
			}
			d, err := parseDuration(s, false)
			if err != nil {
				return errors.New(`must be a duration with a unit ("0s", "3s") or off`)
			}
			b.Raft.DiskStallTimeout = d
			return nil
		},
		get: func(b *Broker) string {
			if b.Raft.DiskStallTimeout < 0 {
				return "off"
			}
			return b.Raft.DiskStallTimeout.String()
		},
		check: func(b *Broker) string {
			if d := b.Raft.DiskStallTimeout; d > 0 && d < minDiskStallTimeout {
				return "must be 0s (automatic), off, or at least " + minDiskStallTimeout.String() +
					" (an fsync under load takes hundreds of milliseconds; a healthy leader must not be fenced)"
			}
			return ""
		},
	},

	// Group commit (our own keys).
	{
		name: "groupCommitMaxBytes", doc: "Most encoded message bytes coalesced into one raft entry; at least maxMessageSize.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 1, maxGroupCommitBytes)
			if err != nil {
				return err
			}
			b.GroupCommit.MaxBytes = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.GroupCommit.MaxBytes) },
		check: func(b *Broker) string { return intRule(int64(b.GroupCommit.MaxBytes), 1, maxGroupCommitBytes) },
	},
	{
		name: "groupCommitMaxMessages", doc: "Most messages coalesced into one raft entry.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 1, 1<<20)
			if err != nil {
				return err
			}
			b.GroupCommit.MaxMessages = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.GroupCommit.MaxMessages) },
		check: func(b *Broker) string { return intRule(int64(b.GroupCommit.MaxMessages), 1, 1<<20) },
	},
	{
		name: "groupCommitMaxPending", doc: "Sends allowed to wait for a batch; beyond this the broker answers SYSTEM_BUSY.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 1, 1<<24)
			if err != nil {
				return err
			}
			b.GroupCommit.MaxPending = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.GroupCommit.MaxPending) },
		check: func(b *Broker) string { return intRule(int64(b.GroupCommit.MaxPending), 1, 1<<24) },
	},
	{
		name: "groupCommitMaxInflight", doc: "Raft entries the leader's group commit has proposed and not yet applied; more pipelines raft, fewer makes each entry a bigger batch.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 1, 64)
			if err != nil {
				return err
			}
			b.GroupCommit.MaxInflight = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.GroupCommit.MaxInflight) },
		check: func(b *Broker) string { return intRule(int64(b.GroupCommit.MaxInflight), 1, 64) },
	},
	{
		name: "groupCommitPipelineMinBytes", doc: "Message bytes that must be waiting before group commit proposes an entry while another is in flight; less waits for the entry ahead and joins the next, bigger one. 0 proposes whatever waits.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 0, 64<<20)
			if err != nil {
				return err
			}
			b.GroupCommit.PipelineMinBytes = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.GroupCommit.PipelineMinBytes) },
		check: func(b *Broker) string { return intRule(int64(b.GroupCommit.PipelineMinBytes), 0, 64<<20) },
	},
	{
		name: "groupCommitGatherMax", doc: "Longest time group commit waits, with no entry in flight, for the producers the last entry answered to send again, so that N sync producers share one entry; at most half the last commit time. 0 proposes at once.",
		set: func(b *Broker, s string) error {
			d, err := parseDuration(s, false)
			if err != nil {
				return err
			}
			b.GroupCommit.GatherMax = d
			return nil
		},
		get: func(b *Broker) string { return b.GroupCommit.GatherMax.String() },
		check: func(b *Broker) string {
			if b.GroupCommit.GatherMax < 0 || b.GroupCommit.GatherMax > time.Second {
				return "must be 0..1s"
			}
			return ""
		},
	},

	// Operations.
	durationKey("consumerOffsetFlushInterval", "How often committed consumer offsets are proposed to the group.",
		time.Millisecond, func(b *Broker) *time.Duration { return &b.ConsumerOffsetFlushInterval }),
	{
		name: "adminListen", doc: "HTTP address for /metrics, /healthz, /readyz and /debug/pprof; empty disables.",
		derivedDefault: "127.0.0.1:<listenPort+2>",
		set:            func(b *Broker, s string) error { b.AdminListen = strings.TrimSpace(s); return nil },
		get:            func(b *Broker) string { return b.AdminListen },
		check:          func(b *Broker) string { return checkListen(b.AdminListen) },
	},
	{
		name: "logLevel", doc: "trace, debug, info, warn or error.",
		set: func(b *Broker, s string) error {
			l, err := parseLogLevel(s)
			if err == nil {
				b.LogLevel = l
			}
			return err
		},
		get: func(b *Broker) string { return b.LogLevel },
		check: func(b *Broker) string {
			if l, err := parseLogLevel(b.LogLevel); err != nil || l != b.LogLevel {
				return "must be one of " + strings.Join(logLevels, "|")
			}
			return ""
		},
	},
	{
		name: "maxProcs", doc: "Threads that run the broker's Go code at once (GOMAXPROCS). 0 divides the cores Go gives the process among the group's members that run on this host, at least one each: dLegerPeers at a loopback or local address, at localhost or at this node's own host (other names are taken as other hosts; set the key where they are not). Three members on one machine, each scheduling on every core, spend that machine's CPU waking and spinning idle threads (decision 0023). The GOMAXPROCS variable, when set, wins.",
		set: func(b *Broker, s string) error {
			n, err := parseInt(s, 0, maxMaxProcs)
			if err != nil {
				return err
			}
			b.MaxProcs = int(n)
			return nil
		},
		get:   func(b *Broker) string { return itoa(b.MaxProcs) },
		check: func(b *Broker) string { return intRule(int64(b.MaxProcs), 0, maxMaxProcs) },
	},
}

// maxMaxProcs bounds maxProcs: more than any machine a broker runs on has.
const maxMaxProcs = 4096

// millisKey is a row for a RocketMQ duration key: plain milliseconds as in Java,
// or a Go duration.
func millisKey(name, doc string, field func(*Broker) *time.Duration) keySpec[Broker] {
	return keySpec[Broker]{
		name: name, doc: doc,
		set: func(b *Broker, s string) error {
			d, err := parseDuration(s, true)
			if err != nil {
				return err
			}
			*field(b) = d
			return nil
		},
		get:   func(b *Broker) string { return formatMillis(*field(b)) },
		check: func(b *Broker) string { return positive(*field(b)) },
	}
}

// durationKey is a row for one of our own Go-syntax duration keys.
func durationKey(name, doc string, least time.Duration, field func(*Broker) *time.Duration) keySpec[Broker] {
	return keySpec[Broker]{
		name: name, doc: doc,
		set: func(b *Broker, s string) error {
			d, err := parseDuration(s, false)
			if err != nil {
				return err
			}
			*field(b) = d
			return nil
		},
		get: func(b *Broker) string { return field(b).String() },
		check: func(b *Broker) string {
			if *field(b) < least {
				return "must be at least " + least.String()
			}
			return ""
		},
	}
}

// crossCheck holds the rules that tie keys together; each problem is reported on
// the key an operator would change.
func (b *Broker) crossCheck() problems {
	var probs problems
	r := b.Raft
	if r.LeaderLeaseTimeout > r.HeartbeatTimeout {
		probs.add("raftLeaderLeaseTimeout", r.LeaderLeaseTimeout.String(),
			"must be at most raftHeartbeatTimeout ("+r.HeartbeatTimeout.String()+")")
	}
	if r.ElectionTimeout < r.HeartbeatTimeout {
		probs.add("raftElectionTimeout", r.ElectionTimeout.String(),
			"must be at least raftHeartbeatTimeout ("+r.HeartbeatTimeout.String()+")")
	}
	if b.MappedFileSizeCommitLog < int64(b.MaxMessageSize)+messageOverhead {
		probs.add("mappedFileSizeCommitLog", i64toa(b.MappedFileSizeCommitLog), fmt.Sprintf(
			"must be at least maxMessageSize+%d (%d) so one largest message fits in a segment",
			messageOverhead, int64(b.MaxMessageSize)+messageOverhead))
	}
	if b.GroupCommit.MaxBytes < b.MaxMessageSize {
		probs.add("groupCommitMaxBytes", itoa(b.GroupCommit.MaxBytes),
			"must be at least maxMessageSize ("+itoa(b.MaxMessageSize)+") so one largest message fits in a batch")
	}
	if b.GroupCommit.MaxPending < b.GroupCommit.MaxMessages {
		probs.add("groupCommitMaxPending", itoa(b.GroupCommit.MaxPending),
			"must be at least groupCommitMaxMessages ("+itoa(b.GroupCommit.MaxMessages)+")")
	}
	if size := int64(indexHeaderSize) + int64(b.MaxHashSlotNum)*indexSlotSize + int64(b.MaxIndexNum)*indexEntrySize; size > maxIndexFileSize {
		probs.add("maxIndexNum", itoa(b.MaxIndexNum), fmt.Sprintf(
			"with maxHashSlotNum=%d makes an IndexFile of %d bytes; must be at most %d", b.MaxHashSlotNum, size, maxIndexFileSize))
	}
	// Port clashes on this node: remoting, its VIP channel, admin HTTP and our
	// raft address.
	vipPort := b.VIPPort()
	if b.ListenPort >= 1 && vipPort < 1 {
		probs.add("listenPort", itoa(b.ListenPort), fmt.Sprintf(
			"must be at least %d: the VIP channel listens on listenPort-%d, which must be 1..65535", 1+vipPortOffset, vipPortOffset))
	}
	adminPort := portOf(b.AdminListen)
	if adminPort != 0 && adminPort == b.ListenPort {
		probs.add("adminListen", b.AdminListen, "port must differ from listenPort ("+itoa(b.ListenPort)+")")
	}
	if adminPort != 0 && adminPort == vipPort {
		probs.add("adminListen", b.AdminListen, fmt.Sprintf(
			"port must differ from the VIP channel's listenPort-%d (%d)", vipPortOffset, vipPort))
	}
	if self, _, err := b.Self(); err == nil {
		raftPort := portOf(self.Addr)
		switch raftPort {
		case b.ListenPort:
			probs.add("dLegerPeers", formatPeers(b.Peers), fmt.Sprintf(
				"raft address of %s (%s) must not use listenPort (%d)", self.ID, self.Addr, b.ListenPort))
		case vipPort:
			probs.add("dLegerPeers", formatPeers(b.Peers), fmt.Sprintf(
				"raft address of %s (%s) must not use the VIP channel's listenPort-%d (%d)", self.ID, self.Addr, vipPortOffset, vipPort))
		case adminPort:
			probs.add("dLegerPeers", formatPeers(b.Peers), fmt.Sprintf(
				"raft address of %s (%s) must not use the adminListen port (%d)", self.ID, self.Addr, adminPort))
		}
	}
	return probs
}

func checkPeers(peers []Peer) string {
	if len(peers) == 0 {
		return "must list at least one peer as id-host:port"
	}
	ids := make(map[string]bool, len(peers))
	addrs := make(map[string]string, len(peers))
	for _, p := range peers {
		if p.ID == "" || strings.ContainsAny(p.ID, "-; \t") {
			return fmt.Sprintf("peer id %q must be non-empty without '-', ';' or blanks", p.ID)
		}
		if err := checkHostPort(p.Addr, false); err != nil {
			return fmt.Sprintf("peer %s address %q %v", p.ID, p.Addr, err)
		}
		if ids[p.ID] {
			return "duplicate peer id " + p.ID
		}
		ids[p.ID] = true
		if other, dup := addrs[p.Addr]; dup {
			return fmt.Sprintf("peers %s and %s share address %s", other, p.ID, p.Addr)
		}
		addrs[p.Addr] = p.ID
	}
	return ""
}

func hasPeer(peers []Peer, id string) bool {
	for _, p := range peers {
		if p.ID == id {
			return true
		}
	}
	return false
}

func peerIDs(peers []Peer) string {
	ids := make([]string, len(peers))
	for i, p := range peers {
		ids[i] = p.ID
	}
	return strings.Join(ids, ", ")
}

func intRule(n, lo, hi int64) string {
	if n < lo || n > hi {
		return rangeRule(lo, hi)
	}
	return ""
}

func uintRule(n, lo uint64) string {
	if n < lo {
		return "must be at least " + u64toa(lo)
	}
	return ""
}

func positive(d time.Duration) string {
	if d <= 0 {
		return "must be positive"
	}
	return ""
}

func nonEmpty(s string) string {
	if s == "" {
		return "must not be empty"
	}
	return ""
}

// checkListen validates a listen address; "" (disabled) is fine and an empty
// host means every interface.
func checkListen(addr string) string {
	if addr == "" {
		return ""
	}
	if err := checkHostPort(addr, true); err != nil {
		return err.Error()
	}
	return ""
}

func brokerTLS(b *Broker) *TLSServer { return &b.TLS }
