package proctest

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
)

// SegmentSize is the CommitLog segment size (mappedFileSizeCommitLog) the test
// clusters give their brokers: small, so that three nodes fit on a test machine
// and segments roll during a test. The broker's default is 1 GiB.
const SegmentSize = 8 << 20

// IndexFile sizing (maxHashSlotNum, maxIndexNum) every BrokerConfig writes:
// small, because IndexFiles are allocated whole (fallocate) at creation. Code
// that opens a stopped broker's store offline must use the same values.
const (
	IndexHashSlots  = 50_000
	IndexMaxEntries = 200_000
)

// Peer is one entry of dLegerPeers or dLegerPeerClientAddrs: a member's
// dLegerSelfId and an address, written "id-host:port".
type Peer struct {
	ID   string
	Addr string
}

func (p Peer) String() string { return p.ID + "-" + p.Addr }

func joinPeers(ps []Peer) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ";")
}

// NamesrvConfig is a nameserver's namesrv.conf.
type NamesrvConfig struct {
	Addr        string // listenAddr and listenPort, "host:port"
	AdminListen string // adminListen; always written, "" disables the HTTP listener
	LogLevel    string // logLevel; omitted when ""
}

// Write writes the config to path, replacing any file there.
func (c NamesrvConfig) Write(path string) error {
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("namesrv config %s: addr=%q: %w", path, c.Addr, err)
	}
	lines := []string{"listenAddr=" + host, "listenPort=" + port, "adminListen=" + c.AdminListen}
	if c.LogLevel != "" {
		lines = append(lines, "logLevel="+c.LogLevel)
	}
	return writeLines(path, lines)
}

// BrokerConfig is one broker node's broker.conf (RocketMQ key names, design.md
// §8). Keys are written in a fixed order; optional ones are omitted when zero so
// that the broker's default applies, and Extra lines come last.
type BrokerConfig struct {
	ClusterName string // brokerClusterName
	BrokerName  string // brokerName
	ClientAddr  string // brokerIP1 and listenPort, "host:port"
	NamesrvAddr string // namesrvAddr
	DataDir     string // storePathRootDir
	Group       string // dLegerGroup; omitted when "" (the broker then uses brokerName)
	// Peers is dLegerPeers: every member's raft address as this node dials it
	// (its own is the address it binds).
	Peers       []Peer
	PeerClients []Peer // dLegerPeerClientAddrs: every member's client address
	SelfID      string // dLegerSelfId
	SegmentSize int64  // mappedFileSizeCommitLog; omitted when 0
	// FlushDiskType is ASYNC_FLUSH or SYNC_FLUSH; omitted when "".
	FlushDiskType    string
	AutoCreateTopics bool   // autoCreateTopicEnable=true; omitted when false
	DefaultQueues    int    // defaultTopicQueueNums; omitted when 0
	AdminListen      string // adminListen; always written, "" disables the HTTP listener
	LogLevel         string // logLevel; omitted when ""
	// Extra is more key=value lines, written last. A key set here replaces the
	// line the fields above would write for it: the broker refuses a key set
	// twice.
	Extra []string
}

// Write writes the config to path, replacing any file there. maxHashSlotNum and
// maxIndexNum are IndexHashSlots and IndexMaxEntries unless Extra sets them.
func (c BrokerConfig) Write(path string) error {
	host, port, err := net.SplitHostPort(c.ClientAddr)
	if err != nil {
		return fmt.Errorf("broker config %s: clientAddr=%q: %w", path, c.ClientAddr, err)
	}
	lines := []string{
		"brokerClusterName=" + c.ClusterName,
		"brokerName=" + c.BrokerName,
		"brokerIP1=" + host,
		"listenPort=" + port,
		"namesrvAddr=" + c.NamesrvAddr,
		"storePathRootDir=" + c.DataDir,
	}
	if c.Group != "" {
		lines = append(lines, "dLegerGroup="+c.Group)
	}
	lines = append(lines,
		"dLegerPeers="+joinPeers(c.Peers),
		"dLegerPeerClientAddrs="+joinPeers(c.PeerClients),
		"dLegerSelfId="+c.SelfID,
	)
	if c.SegmentSize != 0 {
		lines = append(lines, fmt.Sprintf("mappedFileSizeCommitLog=%d", c.SegmentSize))
	}
	if c.FlushDiskType != "" {
		lines = append(lines, "flushDiskType="+c.FlushDiskType)
	}
	if c.AutoCreateTopics {
		lines = append(lines, "autoCreateTopicEnable=true")
	}
	if c.DefaultQueues != 0 {
		lines = append(lines, fmt.Sprintf("defaultTopicQueueNums=%d", c.DefaultQueues))
	}
	lines = append(lines,
		"adminListen="+c.AdminListen,
		fmt.Sprintf("maxHashSlotNum=%d", IndexHashSlots),
		fmt.Sprintf("maxIndexNum=%d", IndexMaxEntries),
	)
	if c.LogLevel != "" {
		lines = append(lines, "logLevel="+c.LogLevel)
	}
	return writeLines(path, append(withoutKeysOf(lines, c.Extra), c.Extra...))
}

// withoutKeysOf is lines without those whose key one of override's lines sets.
func withoutKeysOf(lines, override []string) []string {
	keyOf := func(line string) string { k, _, _ := strings.Cut(line, "="); return strings.TrimSpace(k) }
	set := make(map[string]bool, len(override))
	for _, l := range override {
		set[keyOf(l)] = true
	}
	return slices.DeleteFunc(lines, func(l string) bool { return set[keyOf(l)] })
}

// writeLines writes one line each, every line newline-terminated, so that a test
// can append keys to the file later.
func writeLines(path string, lines []string) error {
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
