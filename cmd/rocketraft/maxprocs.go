package main

import (
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/config"
)

// setBrokerMaxProcs sets the broker's GOMAXPROCS (decision 0023): maxProcs
// when the config gives one, else the cores Go chose for this process divided
// among the group's members that run on this host. The GOMAXPROCS variable,
// when set, wins, as GOGC does over the GC target.
func setBrokerMaxProcs(log hclog.Logger, cfg config.Broker) {
	if v := os.Getenv("GOMAXPROCS"); v != "" {
		log.Info("scheduler cores from GOMAXPROCS", "GOMAXPROCS", v)
		return
	}
	onHost := 1 // a config without this node among its peers fails Validate; count it alone
	if self, _, err := cfg.Self(); err == nil {
		onHost = membersOnHost(cfg.Peers, self, localAddrs())
	}
	cores := runtime.GOMAXPROCS(0)
	n := brokerMaxProcs(cfg.MaxProcs, cores, onHost)
	runtime.GOMAXPROCS(n)
	log.Info("scheduler cores", "GOMAXPROCS", n, "cores", cores, "maxProcs", cfg.MaxProcs, "groupMembersOnHost", onHost)
}

// brokerMaxProcs is the GOMAXPROCS for maxProcs (0 = automatic), the cores Go
// chose for this process (CPU affinity and cgroup quota already applied) and
// the number of the group's members on this host, this node included.
func brokerMaxProcs(maxProcs, cores, onHost int) int {
	if maxProcs > 0 {
		return maxProcs
	}
	if onHost <= 1 {
		return cores
	}
	return max(1, cores/onHost)
}

// membersOnHost counts the group's members whose raft address is on this host:
// this node, and every peer whose host is a loopback address, "localhost", an
// address of this machine's interfaces (local), or the same host as this
// node's. Other host names count as other hosts without a DNS lookup, so that a
// start never waits on a resolver; an operator whose peers share a host under
// other names sets maxProcs.
func membersOnHost(peers []config.Peer, self config.Peer, local []netip.Addr) int {
	selfHost := peerHost(self.Addr)
	n := 1
	for _, p := range peers {
		if p.ID == self.ID {
			continue
		}
		if h := peerHost(p.Addr); h != "" && (strings.EqualFold(h, selfHost) || isLocalHost(h, local)) {
			n++
		}
	}
	return n
}

// peerHost is addr's host part, "" when addr is not host:port.
func peerHost(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return h
}

// isLocalHost reports whether host names this machine without a lookup.
func isLocalHost(host string, local []netip.Addr) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	if ip.IsLoopback() {
		return true
	}
	for _, a := range local {
		if a.Unmap() == ip {
			return true
		}
	}
	return false
}

// localAddrs is the addresses of this machine's interfaces; none when they
// cannot be listed (then only loopback and same-host peers count).
func localAddrs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		if pfx, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, pfx.Addr())
		}
	}
	return out
}
