package auth

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func TestAddrPatternMatch(t *testing.T) {
	tests := []struct {
		pattern string
		yes, no []string
	}{
		{"*", []string{"1.2.3.4", "::1", "::ffff:1.2.3.4"}, nil},
		{"*.*.*.*", []string{"0.0.0.0", "fe80::1"}, nil},
		{"*:*:*:*:*:*:*:*", []string{"255.255.255.255", "2001:db8::1"}, nil},
		{"127.0.0.1", []string{"127.0.0.1", "::ffff:127.0.0.1"}, []string{"127.0.0.2", "::1", "::127.0.0.1"}},
		{" 10.0.0.1 ", []string{"10.0.0.1"}, nil},
		{"::1", []string{"::1", "0:0:0:0:0:0:0:1", "::1%lo"}, []string{"::2", "127.0.0.1"}},
		{"1050:0000:0000:0000:0005:0600:300C:326B", []string{"1050::5:600:300c:326b"}, []string{"1050::5:600:300c:326c"}},
		{"::ffff:1.2.3.4", []string{"1.2.3.4", "::ffff:1.2.3.4"}, []string{"1.2.3.5"}},
		{"127.0.0.1,127.0.0.2, 127.0.0.3", []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}, []string{"127.0.0.4", "127.0.0.0"}},
		{"1050::0005:0600:300c:1,::1", []string{"1050:0:0:0:5:600:300c:1", "::1"}, []string{"1050::5:600:300c:2"}},
		{"127.0.0.{1,2,3}", []string{"127.0.0.1", "127.0.0.3", "::ffff:127.0.0.2"}, []string{"127.0.0.4", "127.0.1.1"}},
		{"192.168.1.{1}", []string{"192.168.1.1"}, []string{"192.168.1.2"}},
		{"1050::0005:0600:300c:{1,2,3}", []string{"1050:0:0:0:5:600:300c:1", "1050::5:600:300c:3"}, []string{"1050::5:600:300c:4"}},
		{"127.0.0.1-200", []string{"127.0.0.1", "127.0.0.100", "127.0.0.200"}, []string{"127.0.0.0", "127.0.0.201", "127.0.1.1"}},
		{"127.0.0.*", []string{"127.0.0.0", "127.0.0.255"}, []string{"127.0.1.0", "128.0.0.1", "::1"}},
		{"1.2.*.*", []string{"1.2.0.0", "1.2.255.7", "::ffff:1.2.3.4"}, []string{"1.3.0.0", "2.2.0.0"}},
		{"127.*.*.*", []string{"127.255.0.1"}, []string{"126.0.0.1"}},
		{"127.0.1-200.*", []string{"127.0.1.0", "127.0.200.255"}, []string{"127.0.0.1", "127.0.201.0"}},
		{"192.100-150.*.*", []string{"192.130.0.2"}, []string{"192.99.0.2", "192.151.0.0"}},
		{"10.0.0.0-0", []string{"10.0.0.0"}, []string{"10.0.0.1"}},
		// IPv6 ranges: a "::" prefix fills to 8 groups with the wildcard groups.
		{"1050::0005:0600:300c:1-200", []string{"1050::5:600:300c:1", "1050::5:600:300c:200"}, []string{"1050::5:600:300c:0", "1050::5:600:300c:201"}},
		{"1050::0005:0600:300c:*", []string{"1050::5:600:300c:0", "1050::5:600:300c:ffff"}, []string{"1050::5:600:3001:1"}},
		{"1050::0005:0600:300c:1-200:*", []string{"1050::5:600:300c:1:0", "1050:0:0:5:600:300c:1:ffff"}, []string{"1050::5:600:300c:201:0"}},
		// Without "::" the prefix is its groups; later groups are not checked.
		{"1050:0005:0600:300c:3261:*", []string{"1050:5:600:300c:3261::", "1050:5:600:300c:3261:1:2:3"}, []string{"1050:5:600:300c:3262::"}},
		{"fe80:0:a-f:*", []string{"fe80:0:a::1", "fe80:0:f:1::"}, []string{"fe80:0:10::", "fe80:1:a::"}},
		// IPv6 ranges never match an IPv4 client, IPv4-mapped or not.
		{"0:0:0:0:0:*", []string{"::1", "::fffe:1:2"}, []string{"1.2.3.4", "::ffff:1.2.3.4"}},
		{"0:0:0:0:0:ffff:*", nil, []string{"1.2.3.4", "::ffff:1.2.3.4"}},
	}
	for _, tc := range tests {
		p, err := ParseAddrPattern(tc.pattern)
		if err != nil {
			t.Errorf("ParseAddrPattern(%q): %v", tc.pattern, err)
			continue
		}
		if p.String() != strings.TrimSpace(tc.pattern) {
			t.Errorf("ParseAddrPattern(%q).String() = %q", tc.pattern, p)
		}
		for _, want := range []bool{true, false} {
			list := tc.yes
			if !want {
				list = tc.no
			}
			for _, s := range list {
				if got := p.Match(netip.MustParseAddr(s)); got != want {
					t.Errorf("%q.Match(%s) = %v, want %v", tc.pattern, s, got, want)
				}
			}
		}
	}
}

// The whole 0..300 sweep of Apache's RemoteAddressStrategyTest for one range.
func TestAddrPatternRangeSweep(t *testing.T) {
	p, err := ParseAddrPattern("127.0.0.1-200")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 256 {
		if got, want := p.Match(netip.MustParseAddr(fmt.Sprintf("127.0.0.%d", i))), i >= 1 && i <= 200; got != want {
			t.Errorf("127.0.0.%d: Match = %v, want %v", i, got, want)
		}
	}
}

func TestAddrPatternMatchesNothing(t *testing.T) {
	for _, pattern := range []string{"*", "1.2.3.4", "1.2.3.*", "::1", "1050::5:*"} {
		p, _ := ParseAddrPattern(pattern)
		if p.Match(netip.Addr{}) {
			t.Errorf("%q matched the invalid address", pattern)
		}
	}
	if (AddrPattern{}).Match(netip.MustParseAddr("1.2.3.4")) {
		t.Error("the zero AddrPattern matched")
	}
}

func TestParseAddrPatternRefuses(t *testing.T) {
	tests := []struct{ pattern, rule string }{
		{"", "blank"},
		{"   ", "blank"},
		{"1.2.3.300", "not an exact IPv4 or IPv6 address"},
		{"256.0.0.1", "not an exact"},
		{"1.2.3.04", "not an exact"},
		{"::1ggg", "not an exact"},
		{"fe80::1%eth0,::1", "zone"},
		{"fe80::1%eth0", "zone"},
		{"1.2.x.4", "not an exact"},
		{"1.2.3.{}", "empty brace list"},
		{"1.2.3.{4,,5}", "empty entry"},
		{"1.2.3.{4-5}", "one segment"},
		{"1.2.{3,4}", "not an exact"},
		{"1.2.{3,4}.5", "not an exact"}, // no '}' at the end: a comma list
		{"{192.168.1.1}", "must follow"},
		{"127.0.0.1,2,3}", "brace list is prefix{"},
		{"1.2.3.4,", "empty entry in list"},
		{"1.2.3.*,1.2.4.*", "not an exact"},
		{"10-1", "4 segments"},
		{"1.2.*", "4 segments"},
		{"1.2.3.4.*", "4 segments"},
		{"1.2.3.10-1", "backwards"},
		{"127.0.0.-1-200", "not a decimal"},
		{"127.0.0.0-256", "not a decimal"},
		{"127.0.0.1-", "not a decimal"},
		{"127.0.0.1-2-3", "not a decimal"},
		{"1.2.*.4", "must be *"},
		{"1.2.3-4.5", "must be *"},
		{"*.1.2.3", "first segment"},
		{"1.2.3.1*", "not a decimal"},
		{"1050::*", "write out the groups"},
		{"::*", "write out the groups"},
		{"::1-5", "write out the groups"},
		{"*:1::", "may only be the last group"},
		{"1050:*:*:*:*:*:*:*", "may only be the last group"},
		{"1050:1-2:3", "n-m the last"},
		{"1:2:3:4:5:6:7:8:*", "more than 8 groups"},
		{"1:2:3:4:5:6::7:*", "not an IPv6 prefix"},
		{"1050:12345:*", "not a hex group"},
		{"::ffff:1.2.3.*", "hex groups only"},
		{"1050:0:ff-a:*", "backwards"},
	}
	for _, tc := range tests {
		_, err := ParseAddrPattern(tc.pattern)
		if !errors.Is(err, ErrBadACL) {
			t.Errorf("ParseAddrPattern(%q) error = %v, want ErrBadACL", tc.pattern, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("%q", tc.pattern)) || !strings.Contains(msg, tc.rule) {
			t.Errorf("ParseAddrPattern(%q) error %q: want the pattern and %q", tc.pattern, msg, tc.rule)
		}
	}
}

func TestRemoteIP(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" for not ok
	}{
		{"1.2.3.4:10911", "1.2.3.4"},
		{"[::1]:10911", "::1"},
		{"[fe80::1%eth0]:5", "fe80::1%eth0"},
		{"[::ffff:1.2.3.4]:5", "::ffff:1.2.3.4"},
		{"1.2.3.4", ""},
		{"::1:5", ""}, // unbracketed IPv6: ambiguous
		{"1.2.3.4:", ""},
		{"1.2.3.4:x", ""},
		{"1.2.3.4:70000", ""},
		{"[::1:5", ""},
		{":5", ""},
		{"", ""},
		{"host:5", ""},
	}
	for _, tc := range tests {
		a, ok := RemoteIP(tc.in)
		if got := map[bool]string{true: a.String(), false: ""}[ok]; got != tc.want {
			t.Errorf("RemoteIP(%q) = %q, %v; want %q", tc.in, a, ok, tc.want)
		}
	}
}
