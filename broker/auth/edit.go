package auth

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrNoAccount: DELETE_ACL_CONFIG (51) named an access key with no account.
var ErrNoAccount = errors.New("auth: no such account")

// AccountUpdate is UPDATE_AND_CREATE_ACL_CONFIG (50) as Apache's
// PlainPermissionManager.updateAccessConfig reads it. A nil field was absent
// from the request: an existing account keeps its value (a new one gets the
// default: no address, DENY, no resource perms). Admin is always written, as
// Apache writes its primitive boolean, so an update without admin=true demotes
// an admin. TopicPerms and GroupPerms are comma-joined `name=PERM` lists that
// replace the account's list; a blank one clears it.
type AccountUpdate struct {
	// AccessKey is required, at least 7 characters.
	AccessKey string
	// SecretKey is required, at least 7 characters, even for an update (Apache).
	SecretKey          string
	WhiteRemoteAddress *string
	Admin              bool
	DefaultTopicPerm   *string
	DefaultGroupPerm   *string
	TopicPerms         *string
	GroupPerms         *string
}

// WithAccount returns a copy of a with u's account created or updated. The
// result went through Document and Parse, so it is exactly what a node that
// parses its document will enforce; every error wraps ErrBadACL and names the
// key and the rule, never a secret.
func (a *ACL) WithAccount(u AccountUpdate) (*ACL, error) {
	if len(u.AccessKey) < minKeyLength {
		return nil, fmt.Errorf("%w: accessKey is required and must have at least %d characters", ErrBadACL, minKeyLength)
	}
	if len(u.SecretKey) < minKeyLength {
		return nil, fmt.Errorf("%w: accessKey=%s: secretKey is required (also for an update) and must have at least %d characters",
			ErrBadACL, u.AccessKey, minKeyLength)
	}
	f := a.toFile()
	i := slices.IndexFunc(f.Accounts, func(p plainACLAccount) bool { return p.AccessKey == u.AccessKey })
	if i < 0 {
		f.Accounts = append(f.Accounts, plainACLAccount{AccessKey: u.AccessKey, DefaultTopicPerm: "DENY", DefaultGroupPerm: "DENY"})
		i = len(f.Accounts) - 1
	}
	acc := &f.Accounts[i]
	acc.SecretKey, acc.Admin = u.SecretKey, u.Admin
	if u.WhiteRemoteAddress != nil {
		acc.WhiteRemoteAddress = strings.TrimSpace(*u.WhiteRemoteAddress)
	}
	if u.DefaultTopicPerm != nil && strings.TrimSpace(*u.DefaultTopicPerm) != "" {
		acc.DefaultTopicPerm = strings.TrimSpace(*u.DefaultTopicPerm)
	}
	if u.DefaultGroupPerm != nil && strings.TrimSpace(*u.DefaultGroupPerm) != "" {
		acc.DefaultGroupPerm = strings.TrimSpace(*u.DefaultGroupPerm)
	}
	if u.TopicPerms != nil {
		acc.TopicPerms = splitList(*u.TopicPerms)
	}
	if u.GroupPerms != nil {
		acc.GroupPerms = splitList(*u.GroupPerms)
	}
	return f.reparse()
}

// WithoutAccount returns a copy of a without the account of accessKey;
// ErrNoAccount when there is none.
func (a *ACL) WithoutAccount(accessKey string) (*ACL, error) {
	if _, ok := a.accounts[accessKey]; !ok {
		return nil, fmt.Errorf("%w: accessKey=%s", ErrNoAccount, accessKey)
	}
	f := a.toFile()
	f.Accounts = slices.DeleteFunc(f.Accounts, func(p plainACLAccount) bool { return p.AccessKey == accessKey })
	return f.reparse()
}

// WithGlobalWhite returns a copy of a whose global allow-list is addrs (blank
// entries dropped; an empty list trusts no address).
func (a *ACL) WithGlobalWhite(addrs []string) (*ACL, error) {
	f := a.toFile()
	f.GlobalWhiteRemoteAddresses = []string{}
	for _, s := range addrs {
		if s = strings.TrimSpace(s); s != "" {
			f.GlobalWhiteRemoteAddresses = append(f.GlobalWhiteRemoteAddresses, s)
		}
	}
	return f.reparse()
}

// Document renders a as a plain_acl.yml that Parse reads back to an equal ACL
// (secrets included: it is what the group replicates, never an answer to a
// client). Accounts are sorted by access key and resource perms by name, so
// equal ACLs render to equal bytes.
func (a *ACL) Document() ([]byte, error) {
	b, err := yaml.Marshal(a.toFile())
	if err != nil {
		return nil, fmt.Errorf("%w: render: %v", ErrBadACL, err)
	}
	return b, nil
}

// AccountInfo is an account as the admin codes and tools show it: everything
// but the secret.
type AccountInfo struct {
	AccessKey          string
	WhiteRemoteAddress string
	Admin              bool
	DefaultTopicPerm   string
	DefaultGroupPerm   string
	// TopicPerms and GroupPerms are `name=PERM`, sorted by name.
	TopicPerms []string
	GroupPerms []string
}

// Accounts lists the accounts sorted by access key, without their secrets.
func (a *ACL) Accounts() []AccountInfo {
	f := a.toFile()
	out := make([]AccountInfo, len(f.Accounts))
	for i, p := range f.Accounts {
		out[i] = AccountInfo{AccessKey: p.AccessKey, WhiteRemoteAddress: p.WhiteRemoteAddress, Admin: p.Admin,
			DefaultTopicPerm: p.DefaultTopicPerm, DefaultGroupPerm: p.DefaultGroupPerm,
			TopicPerms: p.TopicPerms, GroupPerms: p.GroupPerms}
	}
	return out
}

// GlobalWhite lists the global allow-list patterns as written.
func (a *ACL) GlobalWhite() []string {
	out := make([]string, len(a.globalWhite))
	for i, p := range a.globalWhite {
		out[i] = p.String()
	}
	return out
}

// toFile is a in plain_acl.yml form, deterministic (sorted).
func (a *ACL) toFile() plainACLFile {
	f := plainACLFile{GlobalWhiteRemoteAddresses: a.GlobalWhite(), Accounts: []plainACLAccount{}}
	for _, k := range a.AccessKeys() {
		acc := a.accounts[k]
		p := plainACLAccount{AccessKey: acc.AccessKey, SecretKey: acc.SecretKey, Admin: acc.Admin,
			DefaultTopicPerm: permText(acc.DefaultTopicPerm), DefaultGroupPerm: permText(acc.DefaultGroupPerm),
			TopicPerms: resourceTexts(acc.TopicPerms), GroupPerms: resourceTexts(acc.GroupPerms)}
		if acc.White != nil {
			p.WhiteRemoteAddress = acc.White.String()
		}
		f.Accounts = append(f.Accounts, p)
	}
	return f
}

// reparse renders f and parses it, so an edit is validated exactly as a load.
func (f plainACLFile) reparse() (*ACL, error) {
	b, err := yaml.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("%w: render: %v", ErrBadACL, err)
	}
	return Parse(b)
}

// permText spells an owned perm as ParsePerm reads it (Parse only produces the
// values it can spell; the zero Perm, never loaded, renders as missing = DENY).
func permText(p Perm) string {
	if p == 0 {
		return ""
	}
	return p.String()
}

func resourceTexts(m map[string]Perm) []string {
	out := make([]string, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, name+"="+permText(m[name]))
	}
	return out
}

// splitList is Apache's UtilAll.split(s, ","): blank is the empty list;
// entries are trimmed and blank ones dropped.
func splitList(s string) []string {
	out := []string{}
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}
