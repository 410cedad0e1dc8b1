package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/rocketraft/rocketraft/transport"
)

// ACLAccount is one account as GET_BROKER_CLUSTER_ACL_CONFIG (54) lists it.
// It has no secret field: brokers send none, and nothing here could print one.
type ACLAccount struct {
	AccessKey          string   `json:"accessKey"`
	WhiteRemoteAddress string   `json:"whiteRemoteAddress"`
	Admin              bool     `json:"admin"`
	DefaultTopicPerm   string   `json:"defaultTopicPerm"`
	DefaultGroupPerm   string   `json:"defaultGroupPerm"`
	TopicPerms         []string `json:"topicPerms"`
	GroupPerms         []string `json:"groupPerms"`
}

// ACLConfig is one broker group's ACL in force; -o json prints it with the
// broker's names plus the group and the node asked.
type ACLConfig struct {
	BrokerGroup      string       `json:"brokerName"`
	Addr             string       `json:"addr"`
	GlobalWhiteAddrs []string     `json:"globalWhiteAddrs"`
	Accounts         []ACLAccount `json:"plainAccessConfigs"`
}

// ACLAccountSpec is what acl set sends (UPDATE_AND_CREATE_ACL_CONFIG, 50). A
// nil field is not sent: the broker keeps the account's value. Admin is always
// sent (as Apache's mqadmin does): leaving it false demotes an admin.
type ACLAccountSpec struct {
	AccessKey          string
	SecretKey          string
	Admin              bool
	WhiteRemoteAddress *string
	DefaultTopicPerm   *string
	DefaultGroupPerm   *string
	// TopicPerms and GroupPerms are comma-joined name=PERM lists.
	TopicPerms *string
	GroupPerms *string
}

func (s ACLAccountSpec) ext() map[string]string {
	ext := map[string]string{"accessKey": s.AccessKey, "secretKey": s.SecretKey, "admin": strconv.FormatBool(s.Admin)}
	for k, v := range map[string]*string{"whiteRemoteAddress": s.WhiteRemoteAddress, "defaultTopicPerm": s.DefaultTopicPerm,
		"defaultGroupPerm": s.DefaultGroupPerm, "topicPerms": s.TopicPerms, "groupPerms": s.GroupPerms} {
		if v != nil {
			ext[k] = *v
		}
	}
	return ext
}

// ACLList reads the ACL in force (54) from the leader of every selected group.
func (c *Client) ACLList(ctx context.Context, cluster, brokerGroup string) ([]ACLConfig, error) {
	groups, err := c.selected(ctx, cluster, brokerGroup)
	if err != nil {
		return nil, err
	}
	var out []ACLConfig
	for _, g := range groups {
		addr := g.Target()
		resp, err := c.call(ctx, addr, transport.GetBrokerClusterACLConfig, nil)
		if err != nil {
			return out, err
		}
		cfg := ACLConfig{BrokerGroup: g.Name, Addr: addr}
		if err := json.Unmarshal(resp.Body, &cfg); err != nil {
			return out, fmt.Errorf("acl list broker=%s: %v: %w", addr, err, ErrBadAnswer)
		}
		out = append(out, cfg)
	}
	return out, nil
}

// ACLListTable renders ACLList: one row per account (never a secret), and the
// global allow-list of each group as a footer.
func ACLListTable(cs []ACLConfig) Table {
	t := Table{Header: []string{"GROUP", "ACCESS-KEY", "ADMIN", "WHITE-ADDR", "DEFAULT-TOPIC", "DEFAULT-GROUP", "TOPIC-PERMS", "GROUP-PERMS"}}
	for _, c := range cs {
		for _, a := range c.Accounts {
			t.Rows = append(t.Rows, []string{c.BrokerGroup, a.AccessKey, strconv.FormatBool(a.Admin), a.WhiteRemoteAddress,
				a.DefaultTopicPerm, a.DefaultGroupPerm, strings.Join(a.TopicPerms, ","), strings.Join(a.GroupPerms, ",")})
		}
		t.Footer = append(t.Footer, fmt.Sprintf("%s global allow-list: [%s]", c.BrokerGroup, strings.Join(c.GlobalWhiteAddrs, ",")))
	}
	t.Doc = rows(cs)
	return t
}

// ACLSet creates or updates an account (50) on every selected group.
func (c *Client) ACLSet(ctx context.Context, s ACLAccountSpec, cluster, brokerGroup string) ([]GroupResult, error) {
	return c.eachGroup(ctx, cluster, brokerGroup, transport.UpdateAndCreateACLConfig, s.ext())
}

// ACLDelete deletes an account (51) on every selected group.
func (c *Client) ACLDelete(ctx context.Context, accessKey, cluster, brokerGroup string) ([]GroupResult, error) {
	return c.eachGroup(ctx, cluster, brokerGroup, transport.DeleteACLConfig, map[string]string{"accessKey": accessKey})
}

// ACLWhitelist replaces the global allow-list (53) on every selected group; an
// empty list trusts no address.
func (c *Client) ACLWhitelist(ctx context.Context, patterns []string, cluster, brokerGroup string) ([]GroupResult, error) {
	return c.eachGroup(ctx, cluster, brokerGroup, transport.UpdateGlobalWhiteAddrsConfig,
		map[string]string{"globalWhiteAddrs": strings.Join(patterns, ",")})
}
