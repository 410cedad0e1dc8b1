package auth

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// IP patterns of plain_acl.yml (globalWhiteRemoteAddresses,
// whiteRemoteAddress), read as RocketMQ's RemoteAddressStrategyFactory reads
// them, tried in this order:
//
//	*  *.*.*.*  *:*:*:*:*:*:*:*       every address
//	1.2.3.{4,5}  1050::5:{1,2}        brace list: prefix + each entry
//	1.2.3.4,::1,10.0.0.1              comma list of exact addresses
//	1.2.3.*  1.2.*.*  1.2.3.1-10      the first * or n-m segment bounds that
//	1050:5:*  1050::5:1-ff[:*]        segment; later segments are not checked
//	1.2.3.4  1050::5                  one exact address
//
// Where Apache loads a pattern with a surprising meaning, ParseAddrPattern
// refuses it: a segment other than * after the wildcard one (Apache ignores
// it: 1.2.*.4 would mean 1.2.*.*), a wildcard first segment, an IPv4 pattern
// without 4 segments, an IPv6 wildcard right after "::" (Apache reads 1050::*
// as 1050:0:*), an empty list entry, a zone.
//
// Addresses compare as addresses, not text: IPv6 canonically, a client's zone
// ignored, an IPv4-mapped client as its IPv4 address (it matches IPv4
// patterns; an IPv6 range never matches an IPv4 client).

type addrKind uint8

const (
	addrNone   addrKind = iota // the zero AddrPattern: matches nothing
	addrAll                    // every address
	addrSet                    // one of set
	addrRange4                 // IPv4 range: see AddrPattern.seg
	addrRange6                 // IPv6 range: see AddrPattern.seg
)

// AddrPattern is a parsed IP pattern. The zero value matches nothing.
type AddrPattern struct {
	text string
	kind addrKind
	// set holds the addresses of an exact pattern or a list.
	// Invariant: unmapped (an IPv4-mapped address is stored as IPv4), no zone.
	set []netip.Addr
	// A range matches an address whose first seg segments (octets for IPv4,
	// 16-bit groups for IPv6) equal prefix and whose segment seg lies in
	// [lo, hi]; the segments after seg are not checked.
	// Invariant: 1 ≤ seg ≤ 3 and hi ≤ 255 for IPv4, 1 ≤ seg ≤ 7 for IPv6; lo ≤ hi.
	prefix [8]uint16
	seg    int
	lo, hi uint16
}

// ParseAddrPattern reads one IP pattern. A blank pattern is an error (what
// blank means — Apache: match nothing — is for the caller to decide), and so
// is anything malformed; errors wrap ErrBadACL and name the pattern and the
// rule it breaks.
func ParseAddrPattern(s string) (AddrPattern, error) {
	t := strings.TrimSpace(s)
	var p AddrPattern
	var err error
	switch {
	case t == "":
		err = errors.New("blank")
	case t == "*" || t == "*.*.*.*" || t == "*:*:*:*:*:*:*:*":
		p.kind = addrAll
	case strings.HasSuffix(t, "}"):
		p, err = parseBraces(t)
	case strings.Contains(t, ","):
		p, err = parseList(strings.Split(t, ","), "list")
	case strings.ContainsAny(t, "*-") && strings.Contains(t, ":"):
		p, err = parseRange6(t)
	case strings.ContainsAny(t, "*-"):
		p, err = parseRange4(t)
	default:
		p, err = parseList([]string{t}, "")
	}
	if err != nil {
		return AddrPattern{}, fmt.Errorf("%w: IP pattern %q: %v", ErrBadACL, s, err)
	}
	p.text = t
	return p, nil
}

// parseList reads exact addresses: the entries of a list named what, or one
// address when what is "".
func parseList(entries []string, what string) (AddrPattern, error) {
	p := AddrPattern{kind: addrSet}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		a, err := netip.ParseAddr(e)
		where := fmt.Sprintf("%s entry %q", what, e)
		if what == "" {
			where = "it"
		}
		switch {
		case e == "":
			return AddrPattern{}, fmt.Errorf("empty entry in %s", what)
		case err != nil:
			return AddrPattern{}, fmt.Errorf("%s is not an exact IPv4 or IPv6 address", where)
		case a.Zone() != "":
			return AddrPattern{}, fmt.Errorf("%s has a zone, and zones are not compared", where)
		}
		p.set = append(p.set, a.Unmap())
	}
	return p, nil
}

// parseBraces reads prefix{a,b,...}: the addresses prefix+a, prefix+b, ...,
// where prefix ends with '.' (IPv4) or ':' (IPv6) and each entry is one segment.
func parseBraces(t string) (AddrPattern, error) {
	open := strings.IndexByte(t, '{')
	if open < 0 || strings.Count(t, "{") != 1 || strings.Count(t, "}") != 1 {
		return AddrPattern{}, errors.New("a brace list is prefix{a,b,...} at the end of the pattern")
	}
	prefix, inner := t[:open], t[open+1:len(t)-1]
	if !strings.HasSuffix(prefix, ".") && !strings.HasSuffix(prefix, ":") {
		return AddrPattern{}, errors.New("the brace list must follow a '.' (IPv4) or ':' (IPv6)")
	}
	if strings.TrimSpace(inner) == "" {
		return AddrPattern{}, errors.New("empty brace list")
	}
	entries := strings.Split(inner, ",")
	for i, e := range entries {
		if e = strings.TrimSpace(e); strings.ContainsAny(e, ".:*-") {
			return AddrPattern{}, fmt.Errorf("brace entry %q must be one segment", e)
		} else if e != "" {
			entries[i] = prefix + e
		}
	}
	return parseList(entries, "brace list")
}

// parseRange4 reads a.b.c.d where the first * or n-m segment, not the first
// segment, is the range and every segment after it is *.
func parseRange4(t string) (AddrPattern, error) {
	segs := strings.Split(t, ".")
	if len(segs) != 4 {
		return AddrPattern{}, errors.New("an IPv4 pattern has 4 segments")
	}
	p := AddrPattern{kind: addrRange4}
	for i, s := range segs {
		var err error
		switch {
		case p.seg > 0 && s != "*":
			return AddrPattern{}, fmt.Errorf("segment %d (%q) follows the wildcard segment and must be * (Apache ignores it)", i+1, s)
		case p.seg > 0:
		case i == 0 && (s == "*" || strings.Contains(s, "-")):
			return AddrPattern{}, errors.New("the first segment must be a number (* or *.*.*.* matches every address)")
		case s == "*" || strings.Contains(s, "-"):
			p.seg = i
			p.lo, p.hi, err = parseSpan(s, 10, 255)
		default:
			p.prefix[i], err = parseSegment(s, 10, 255)
		}
		if err != nil {
			return AddrPattern{}, err
		}
	}
	return p, nil
}

// parseRange6 reads P:*, P:n-m or P:n-m:* with hex groups. A P without "::"
// is exactly its groups (later groups are not checked); in a P with "::" the
// "::" stands for as many zero groups as make 8 with the wildcard groups.
func parseRange6(t string) (AddrPattern, error) {
	if strings.ContainsAny(t, ".%") {
		return AddrPattern{}, errors.New("an IPv6 range has hex groups only (no embedded IPv4, no zone)")
	}
	segs := strings.Split(t, ":")
	p := AddrPattern{kind: addrRange6, lo: 0, hi: 0xffff}
	wild := 0 // the trailing wildcard groups: a *, an n-m, or n-m:*
	if segs[len(segs)-1] == "*" {
		wild++
	}
	if r := segs[len(segs)-1-wild]; strings.Contains(r, "-") {
		wild++
		var err error
		if p.lo, p.hi, err = parseSpan(r, 16, 0xffff); err != nil {
			return AddrPattern{}, err
		}
	}
	pre := strings.Join(segs[:len(segs)-wild], ":")
	switch {
	case wild == 0 || strings.ContainsAny(pre, "*-"):
		return AddrPattern{}, errors.New("in an IPv6 range * may only be the last group, n-m the last or the one before a last *")
	case pre == "" || strings.HasSuffix(pre, ":"):
		return AddrPattern{}, errors.New("write out the groups before the wildcard (Apache reads 1050::* as 1050:0:*)")
	case strings.Contains(pre, "::"):
		a, err := netip.ParseAddr(pre + strings.Repeat(":0", wild))
		if err != nil {
			return AddrPattern{}, fmt.Errorf("%q is not an IPv6 prefix of %d groups", pre, 8-wild)
		}
		b := a.As16()
		for p.seg = 0; p.seg < 8-wild; p.seg++ {
			p.prefix[p.seg] = uint16(b[2*p.seg])<<8 | uint16(b[2*p.seg+1])
		}
	case len(segs) > 8:
		return AddrPattern{}, errors.New("more than 8 groups")
	default:
		for _, s := range segs[:len(segs)-wild] {
			v, err := parseSegment(s, 16, 0xffff)
			if err != nil {
				return AddrPattern{}, err
			}
			p.prefix[p.seg] = v
			p.seg++
		}
	}
	return p, nil
}

// parseSpan reads * (0..max) or n-m with n ≤ m.
func parseSpan(s string, base int, max uint64) (lo, hi uint16, err error) {
	if s == "*" {
		return 0, uint16(max), nil
	}
	a, b, _ := strings.Cut(s, "-")
	if lo, err = parseSegment(a, base, max); err == nil {
		hi, err = parseSegment(b, base, max)
	}
	if err == nil && lo > hi {
		err = fmt.Errorf("range %q runs backwards", s)
	}
	return lo, hi, err
}

// parseSegment reads a decimal octet (no leading zero, as in an address) or a
// hex group of 1–4 digits.
func parseSegment(s string, base int, max uint64) (uint16, error) {
	v, err := strconv.ParseUint(s, base, 16)
	if base == 10 && (err != nil || v > max || len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("segment %q is not a decimal 0-255", s)
	}
	if base == 16 && (err != nil || len(s) > 4) {
		return 0, fmt.Errorf("segment %q is not a hex group 0-ffff", s)
	}
	return uint16(v), nil
}

// Match reports whether ip matches the pattern. An invalid ip matches nothing,
// not even *.
func (p AddrPattern) Match(ip netip.Addr) bool {
	if !ip.IsValid() {
		return false
	}
	ip = ip.WithZone("").Unmap()
	var seg func(i int) uint16
	switch {
	case p.kind == addrAll:
		return true
	case p.kind == addrSet:
		return slices.Contains(p.set, ip)
	case p.kind == addrRange4 && ip.Is4():
		b := ip.As4()
		seg = func(i int) uint16 { return uint16(b[i]) }
	case p.kind == addrRange6 && ip.Is6():
		b := ip.As16()
		seg = func(i int) uint16 { return uint16(b[2*i])<<8 | uint16(b[2*i+1]) }
	default:
		return false
	}
	for i := range p.seg {
		if seg(i) != p.prefix[i] {
			return false
		}
	}
	v := seg(p.seg)
	return p.lo <= v && v <= p.hi
}

// String is the pattern as written (spaces trimmed).
func (p AddrPattern) String() string { return p.text }

// RemoteIP is the source address of a connection whose remote address is
// "ip:port", as Go's net writes it: everything up to the last colon, as Apache
// takes it, with an IPv6 address in brackets. An unbracketed IPv6 host is
// refused, since "::1:5" could be ::1 port 5 or ::1:5 without a port.
func RemoteIP(remoteAddr string) (netip.Addr, bool) {
	i := strings.LastIndexByte(remoteAddr, ':')
	if i < 0 {
		return netip.Addr{}, false
	}
	host, port := remoteAddr[:i], remoteAddr[i+1:]
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return netip.Addr{}, false
	}
	if len(host) >= 2 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	} else if strings.Contains(host, ":") {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(host)
	return a, err == nil
}
