package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// storeHostLookupTimeout bounds resolving a brokerIP1 host name at start. The
// name is normally the pod's own (in its /etc/hosts) or a local one, so a
// resolver that needs longer is broken rather than slow.
const storeHostLookupTimeout = 5 * time.Second

// lookupFunc resolves a host name to its addresses (net.Resolver.LookupNetIP
// with network "ip"); a parameter so the tests need no DNS.
type lookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

func systemLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// storeHost is the STOREHOST written into this node's records for
// clientAddr (brokerIP1:listenPort). The stored record and the offset msgId
// derived from it hold an IPv4 or IPv6 address, never a name, so a host name
// is resolved here, once at start, like the Java broker's InetSocketAddress
// does. Registration and routes keep the name as written: clients resolve it
// themselves, so only msgIds of records written before an address change
// carry the old address. An IPv4 answer wins over IPv6 (RocketMQ's default,
// 8-byte host layout).
func storeHost(clientAddr string, lookup lookupFunc) (netip.AddrPort, error) {
	host, portText, err := net.SplitHostPort(clientAddr)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("brokerIP1:listenPort %q: %w", clientAddr, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return netip.AddrPort{}, fmt.Errorf("listenPort=%q: must be 1-65535", portText)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeHostLookupTimeout)
	defer cancel()
	addrs, err := lookup(ctx, host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no addresses")
	}
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("brokerIP1=%q: resolving the host name for the records' STOREHOST: %w", host, err)
	}
	pick := addrs[0].Unmap()
	for _, a := range addrs {
		if a.Unmap().Is4() {
			pick = a.Unmap()
			break
		}
	}
	if pick.IsUnspecified() {
		return netip.AddrPort{}, fmt.Errorf("brokerIP1=%q resolves to %s, which clients cannot connect to", host, pick)
	}
	return netip.AddrPortFrom(pick, uint16(port)), nil
}
