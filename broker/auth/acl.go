package auth

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// minKeyLength: Apache refuses access and secret keys of 6 characters or fewer
// (PlainPermissionManager), at load and at update.
const minKeyLength = 7

// Account is one access key and what it may do.
type Account struct {
	AccessKey string
	SecretKey string
	// White, when set, lets requests from matching addresses skip the signature
	// and permission checks (Apache's whiteRemoteAddress).
	White *AddrPattern
	// Admin may use the admin-only codes; an admin with no topic or group perms
	// may access every topic and group.
	Admin            bool
	DefaultTopicPerm Perm
	DefaultGroupPerm Perm
	// TopicPerms and GroupPerms name resources explicitly; groups by their plain
	// name (a %RETRY%<group> topic is checked as <group>).
	TopicPerms map[string]Perm
	GroupPerms map[string]Perm
}

// ACL is the access-control state of a broker: the global allow-list and the
// accounts by access key.
type ACL struct {
	globalWhite []AddrPattern
	accounts    map[string]*Account
}

// account returns the account of an access key.
func (a *ACL) account(accessKey string) (*Account, bool) {
	acc, ok := a.accounts[accessKey]
	return acc, ok
}

// AccessKeys lists the accounts' access keys, sorted (never their secrets).
func (a *ACL) AccessKeys() []string {
	out := make([]string, 0, len(a.accounts))
	for k := range a.accounts {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// plainACLFile is RocketMQ's plain_acl.yml.
type plainACLFile struct {
	GlobalWhiteRemoteAddresses []string          `yaml:"globalWhiteRemoteAddresses"`
	Accounts                   []plainACLAccount `yaml:"accounts"`
}

type plainACLAccount struct {
	AccessKey          string   `yaml:"accessKey"`
	SecretKey          string   `yaml:"secretKey"`
	WhiteRemoteAddress string   `yaml:"whiteRemoteAddress"`
	Admin              bool     `yaml:"admin"`
	DefaultTopicPerm   string   `yaml:"defaultTopicPerm"`
	DefaultGroupPerm   string   `yaml:"defaultGroupPerm"`
	TopicPerms         []string `yaml:"topicPerms"`
	GroupPerms         []string `yaml:"groupPerms"`
}

// LoadFile reads a plain_acl.yml. Every problem is reported at once, naming the
// account, the key, the value and the rule; secrets are never quoted.
func LoadFile(path string) (*ACL, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: aclFile=%q: %v", ErrBadACL, path, err)
	}
	acl, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("aclFile=%q: %w", path, err)
	}
	return acl, nil
}

// Parse decodes a plain_acl.yml document.
func Parse(data []byte) (*ACL, error) {
	var f plainACLFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadACL, err)
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	acl := &ACL{accounts: map[string]*Account{}}
	for i, s := range f.GlobalWhiteRemoteAddresses {
		if strings.TrimSpace(s) == "" {
			continue
		}
		p, err := ParseAddrPattern(s)
		if err != nil {
			bad("globalWhiteRemoteAddresses[%d]: %v", i, err)
			continue
		}
		acl.globalWhite = append(acl.globalWhite, p)
	}
	for i, a := range f.Accounts {
		where := fmt.Sprintf("accounts[%d]", i)
		if a.AccessKey != "" {
			where = fmt.Sprintf("accounts[%d] accessKey=%q", i, a.AccessKey)
		}
		acc := &Account{AccessKey: a.AccessKey, SecretKey: a.SecretKey, Admin: a.Admin,
			TopicPerms: map[string]Perm{}, GroupPerms: map[string]Perm{}}
		if len(a.AccessKey) < minKeyLength {
			bad("%s: accessKey must have at least %d characters", where, minKeyLength)
		}
		if len(a.SecretKey) < minKeyLength {
			bad("%s: secretKey must have at least %d characters", where, minKeyLength)
		}
		if _, dup := acl.accounts[a.AccessKey]; dup {
			bad("%s: accessKey appears twice", where)
		}
		if strings.TrimSpace(a.WhiteRemoteAddress) != "" {
			p, err := ParseAddrPattern(a.WhiteRemoteAddress)
			if err != nil {
				bad("%s: whiteRemoteAddress: %v", where, err)
			} else {
				acc.White = &p
			}
		}
		acc.DefaultTopicPerm = parseDefault(a.DefaultTopicPerm, where+": defaultTopicPerm", bad)
		acc.DefaultGroupPerm = parseDefault(a.DefaultGroupPerm, where+": defaultGroupPerm", bad)
		parseResourcePerms(a.TopicPerms, acc.TopicPerms, where+": topicPerms", bad)
		parseResourcePerms(a.GroupPerms, acc.GroupPerms, where+": groupPerms", bad)
		acl.accounts[a.AccessKey] = acc
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrBadACL, strings.Join(problems, "; "))
	}
	return acl, nil
}

// parseDefault reads a default perm; missing means DENY (Apache).
func parseDefault(s, where string, bad func(string, ...any)) Perm {
	if strings.TrimSpace(s) == "" {
		return PermDeny
	}
	p, err := ParsePerm(s)
	if err != nil {
		bad("%s: %v", where, err)
		return PermDeny
	}
	return p
}

// parseResourcePerms reads `name=PERM` entries; a %RETRY% prefix on a group is
// dropped (Apache stores groups that way, we key them by plain name).
func parseResourcePerms(entries []string, into map[string]Perm, where string, bad func(string, ...any)) {
	for i, e := range entries {
		name, perm, ok := strings.Cut(e, "=")
		name = strings.TrimPrefix(strings.TrimSpace(name), retryPrefix)
		if !ok || name == "" {
			bad("%s[%d]=%q: must be name=PERM", where, i, e)
			continue
		}
		p, err := ParsePerm(perm)
		if err != nil {
			bad("%s[%d] %s: %v", where, i, name, err)
			continue
		}
		into[name] = p
	}
}
