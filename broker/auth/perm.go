package auth

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadACL is wrapped by every error about ACL configuration: a permission,
// an IP pattern or an account that cannot be read.
var ErrBadACL = errors.New("auth: bad ACL")

// Perm is a set of RocketMQ ACL 1.0 permission bits (Permission.java). An
// account owns a Perm per topic and group; a request needs one.
type Perm uint8

// The bits, with Apache's values.
const (
	// PermDeny, when owned, denies everything, whatever other bits are set.
	PermDeny Perm = 1
	// PermAny is only ever needed, never owned: it is met by PUB or by SUB.
	// No spelling in plain_acl.yml loads it (see ParsePerm).
	PermAny Perm = 2
	PermPub Perm = 4
	PermSub Perm = 8
)

// permSpellings are the values plain_acl.yml may hold, in the order an error
// lists them.
var permSpellings = []struct {
	text string
	perm Perm
}{
	{"DENY", PermDeny},
	{"PUB", PermPub},
	{"SUB", PermSub},
	{"PUB|SUB", PermPub | PermSub},
	{"SUB|PUB", PermPub | PermSub},
}

// ParsePerm reads a permission as plain_acl.yml spells it: exactly DENY, PUB,
// SUB, PUB|SUB or SUB|PUB, case-sensitive, surrounding spaces ignored.
// Anything else is an error wrapping ErrBadACL. Apache instead loads any other
// string as DENY — ANY, "pub" and "PUB | SUB" included — which turns a typo
// into a silent denial; rocketraft refuses to load it.
func ParsePerm(s string) (Perm, error) {
	t := strings.TrimSpace(s)
	for _, sp := range permSpellings {
		if t == sp.text {
			return sp.perm, nil
		}
	}
	accepted := make([]string, len(permSpellings))
	for i, sp := range permSpellings {
		accepted[i] = sp.text
	}
	return 0, fmt.Errorf("%w: permission %q: want one of %s (Apache would load it as DENY)",
		ErrBadACL, s, strings.Join(accepted, ", "))
}

// permNames are the bits in the order String writes them.
var permNames = []struct {
	bit  Perm
	name string
}{
	{PermDeny, "DENY"},
	{PermAny, "ANY"},
	{PermPub, "PUB"},
	{PermSub, "SUB"},
}

// String names the bits joined by "|" (PUB|SUB), NONE for no bit, and any
// bit outside the four as hex; the values ParsePerm accepts print as one of
// its spellings.
func (p Perm) String() string {
	if p == 0 {
		return "NONE"
	}
	var parts []string
	rest := p
	for _, n := range permNames {
		if p&n.bit != 0 {
			parts = append(parts, n.name)
			rest &^= n.bit
		}
	}
	if rest != 0 {
		parts = append(parts, fmt.Sprintf("%#02x", uint8(rest)))
	}
	return strings.Join(parts, "|")
}

// Allows reports whether owning owned satisfies needing needed, by Apache's
// Permission.checkPermission: an owned DENY bit denies; a needed ANY is met by
// PUB or SUB; otherwise some needed bit must be owned.
func Allows(owned, needed Perm) bool {
	if owned&PermDeny != 0 {
		return false
	}
	if needed&PermAny != 0 {
		return owned&(PermPub|PermSub) != 0
	}
	return needed&owned != 0
}
