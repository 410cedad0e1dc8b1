package auth

import (
	"errors"
	"strings"
	"testing"
)

func TestParsePerm(t *testing.T) {
	tests := []struct {
		in   string
		want Perm
	}{
		{"DENY", PermDeny},
		{"PUB", PermPub},
		{"SUB", PermSub},
		{"PUB|SUB", PermPub | PermSub},
		{"SUB|PUB", PermPub | PermSub},
		{"  PUB|SUB\t", PermPub | PermSub},
	}
	for _, tc := range tests {
		got, err := ParsePerm(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParsePerm(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// Apache loads each of these as DENY; rocketraft refuses them.
func TestParsePermRefuses(t *testing.T) {
	for _, in := range []string{"ANY", "", " ", "pub", "Sub", "PUB | SUB", "PUB|PUB", "PUB|SUB|DENY", "DENY|PUB", "NONE", "4"} {
		_, err := ParsePerm(in)
		if !errors.Is(err, ErrBadACL) {
			t.Errorf("ParsePerm(%q) error = %v, want ErrBadACL", in, err)
			continue
		}
		for _, s := range []string{`"` + in + `"`, "DENY, PUB, SUB, PUB|SUB, SUB|PUB"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("ParsePerm(%q) error %q does not name %s", in, err, s)
			}
		}
	}
}

func TestPermString(t *testing.T) {
	tests := []struct {
		p    Perm
		want string
	}{
		{0, "NONE"},
		{PermDeny, "DENY"},
		{PermAny, "ANY"},
		{PermPub, "PUB"},
		{PermSub, "SUB"},
		{PermSub | PermPub, "PUB|SUB"},
		{PermDeny | PermPub, "DENY|PUB"},
		{PermPub | 0x30, "PUB|0x30"},
	}
	for _, tc := range tests {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("Perm(%d).String() = %q, want %q", uint8(tc.p), got, tc.want)
		}
	}
	for _, s := range []string{"DENY", "PUB", "SUB", "PUB|SUB"} {
		if p, _ := ParsePerm(s); p.String() != s {
			t.Errorf("ParsePerm(%q).String() = %q", s, p)
		}
	}
}

func TestAllows(t *testing.T) {
	const pubSub = PermPub | PermSub
	tests := []struct {
		owned, needed Perm
		want          bool
	}{
		{PermPub, PermPub, true},
		{PermSub, PermSub, true},
		{PermPub, PermSub, false},
		{PermSub, PermPub, false},
		{pubSub, PermPub, true},
		{pubSub, PermSub, true},
		{PermDeny, PermPub, false},
		{PermDeny, PermDeny, false}, // an owned DENY denies even a needed DENY
		{PermDeny | pubSub, PermPub, false},
		{PermDeny | pubSub, PermAny, false},
		{PermPub, PermAny, true},
		{PermSub, PermAny, true},
		{pubSub, PermAny, true},
		{0, PermAny, false},
		{PermAny, PermAny, false}, // ANY is not owned as PUB or SUB
		{0, PermPub, false},
		{pubSub, 0, false}, // nothing needed: no bit in common, as Apache
		{PermPub, PermAny | PermSub, true},
	}
	for _, tc := range tests {
		if got := Allows(tc.owned, tc.needed); got != tc.want {
			t.Errorf("Allows(owned=%v, needed=%v) = %v, want %v", tc.owned, tc.needed, got, tc.want)
		}
	}
}
