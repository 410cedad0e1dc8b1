package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rocketraft/rocketraft/config"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// The per-node commands (broker status, broker config get/set) address nodes,
// not groups: Apache's runtime info and broker config are per broker address,
// and so is a live config change. -b names one node; otherwise every
// registered node of the groups -c/-B select.

// Node is one registered broker node.
type Node struct {
	Cluster  string
	Group    string
	BrokerID nameserver.BrokerID
	Addr     string
}

// Nodes lists every node of the selected groups (the one --broker names, when
// set), in group and broker id order.
func (c *Client) Nodes(ctx context.Context, cluster, brokerName string) ([]Node, error) {
	groups, err := c.selected(ctx, cluster, brokerName)
	if err != nil {
		return nil, err
	}
	var out []Node
	for _, g := range groups {
		seen := map[string]bool{}
		for _, id := range slices.Sorted(maps.Keys(g.Addrs)) {
			if a := g.Addrs[id]; !seen[a] {
				seen[a] = true
				out = append(out, Node{Cluster: g.Cluster, Group: g.Name, BrokerID: id, Addr: a})
			}
		}
	}
	return out, nil
}

// NodeRuntime is one node's GET_BROKER_RUNTIME_INFO table, or why it has none.
type NodeRuntime struct {
	Node
	Table map[string]string
	Err   error
}

// BrokerStatus reads the runtime table (mqadmin brokerStatus) of every
// selected node; a node that does not answer has Err.
func (c *Client) BrokerStatus(ctx context.Context, cluster, brokerName string) ([]NodeRuntime, error) {
	nodes, err := c.Nodes(ctx, cluster, brokerName)
	if err != nil {
		return nil, err
	}
	out := make([]NodeRuntime, len(nodes))
	for i, n := range nodes {
		out[i].Node = n
		out[i].Table, out[i].Err = c.runtimeInfo(ctx, n.Addr)
	}
	return out, nil
}

// nodeIdentity is the identity part of a per-node JSON row.
type nodeIdentity struct {
	Cluster    string `json:"cluster"`
	BrokerName string `json:"brokerName"`
	BrokerID   int64  `json:"brokerId"`
	Addr       string `json:"addr"`
	Error      string `json:"error,omitempty"`
}

func identity(n Node, err error) nodeIdentity {
	return nodeIdentity{Cluster: n.Cluster, BrokerName: n.Group, BrokerID: int64(n.BrokerID), Addr: n.Addr, Error: errText(err)}
}

// BrokerStatusTable renders BrokerStatus one key a line per node, sorted by
// key as mqadmin brokerStatus prints them; JSON: one object per node with the
// table under "table".
func BrokerStatusTable(rs []NodeRuntime) Table {
	type doc struct {
		nodeIdentity
		Table map[string]string `json:"table,omitempty"`
	}
	t := Table{Header: []string{"GROUP", "ADDR", "KEY", "VALUE"}}
	docs := []doc{}
	for _, r := range rs {
		docs = append(docs, doc{identity(r.Node, r.Err), r.Table})
		if r.Err != nil {
			t.Rows = append(t.Rows, []string{r.Group, r.Addr, "", "UNREACHABLE"})
			t.Footer = append(t.Footer, fmt.Sprintf("%s: %v", r.Addr, r.Err))
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(r.Table)) {
			t.Rows = append(t.Rows, []string{r.Group, r.Addr, k, r.Table[k]})
		}
	}
	t.Doc = docs
	return t
}

// StatusError is the first node that did not answer, so the CLI exits non-zero.
func StatusError(rs []NodeRuntime) error {
	for _, r := range rs {
		if r.Err != nil {
			return fmt.Errorf("node %s of %s: %w", r.Addr, r.Group, r.Err)
		}
	}
	return nil
}

// NodeConfig is one node's GET_BROKER_CONFIG answer: every key with its value
// in force, in the node's order, and the version of its settings.
type NodeConfig struct {
	Node
	Properties []config.Property
	// Version is the DataVersion the node answered (counter: live updates since it started).
	Version map[string]any
	Err     error
}

// BrokerConfig reads the settings of every selected node.
func (c *Client) BrokerConfig(ctx context.Context, cluster, brokerName string) ([]NodeConfig, error) {
	nodes, err := c.Nodes(ctx, cluster, brokerName)
	if err != nil {
		return nil, err
	}
	out := make([]NodeConfig, len(nodes))
	for i, n := range nodes {
		out[i] = NodeConfig{Node: n}
		resp, err := c.call(ctx, n.Addr, transport.GetBrokerConfig, nil)
		if err == nil {
			out[i].Properties, err = config.ParseProperties(string(resp.Body))
		}
		if err == nil {
			if err = json.Unmarshal([]byte(resp.Field("version")), &out[i].Version); err != nil {
				err = fmt.Errorf("broker config broker=%s: version %q: %v: %w", n.Addr, resp.Field("version"), err, ErrBadAnswer)
			}
		}
		out[i].Err = err
	}
	return out, nil
}

// BrokerConfigTable renders BrokerConfig, one key a line per node; JSON: one
// object per node with "config" (key → value) and "version".
func BrokerConfigTable(cs []NodeConfig) Table {
	type doc struct {
		nodeIdentity
		Config  map[string]string `json:"config,omitempty"`
		Version map[string]any    `json:"version,omitempty"`
	}
	t := Table{Header: []string{"GROUP", "ADDR", "KEY", "VALUE"}}
	docs := []doc{}
	for _, c := range cs {
		d := doc{nodeIdentity: identity(c.Node, c.Err), Version: c.Version}
		if c.Err != nil {
			t.Rows = append(t.Rows, []string{c.Group, c.Addr, "", "UNREACHABLE"})
			t.Footer = append(t.Footer, fmt.Sprintf("%s: %v", c.Addr, c.Err))
		} else {
			d.Config = map[string]string{}
		}
		for _, p := range c.Properties {
			t.Rows = append(t.Rows, []string{c.Group, c.Addr, p.Key, p.Value})
			d.Config[p.Key] = p.Value
		}
		docs = append(docs, d)
	}
	t.Doc = docs
	return t
}

// ConfigError is the first node whose config could not be read.
func ConfigError(cs []NodeConfig) error {
	for _, c := range cs {
		if c.Err != nil {
			return fmt.Errorf("node %s of %s: %w", c.Addr, c.Group, c.Err)
		}
	}
	return nil
}

// ConfigChange is one key a live update changed on one node.
type ConfigChange struct {
	Key string `json:"key"`
	Old string `json:"old"`
	New string `json:"new"`
}

// NodeUpdate is one node's answer to a live update.
type NodeUpdate struct {
	Node
	Changes []ConfigChange
	Err     error
}

// ParseSettings turns key=value arguments into properties, refusing an
// argument without '=' or with an empty key, naming it.
func ParseSettings(args []string) ([]config.Property, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("%w: no key=value given", ErrBadSetting)
	}
	out := make([]config.Property, 0, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%w: %q: want key=value", ErrBadSetting, a)
		}
		out = append(out, config.Property{Key: strings.TrimSpace(k), Value: v})
	}
	return out, nil
}

// ErrBadSetting: a key=value argument that is not one.
var ErrBadSetting = errors.New("admin: bad setting")

// UpdateBrokerConfig sends one UPDATE_BROKER_CONFIG with settings to every
// selected node. Each node applies all or none and keeps the change until it
// restarts; a node that refuses (a key that cannot change live, an unknown
// key, a bad value) has Err with its reason.
func (c *Client) UpdateBrokerConfig(ctx context.Context, cluster, brokerName string, settings []config.Property) ([]NodeUpdate, error) {
	nodes, err := c.Nodes(ctx, cluster, brokerName)
	if err != nil {
		return nil, err
	}
	body := []byte(config.WriteProperties(settings))
	out := make([]NodeUpdate, len(nodes))
	for i, n := range nodes {
		out[i] = NodeUpdate{Node: n}
		out[i].Changes, out[i].Err = c.updateNode(ctx, n.Addr, body)
	}
	return out, nil
}

func (c *Client) updateNode(ctx context.Context, addr string, body []byte) ([]ConfigChange, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req := transport.NewRequest(transport.UpdateBrokerConfig, c.cfg.Credentials.SignExt(nil, body), body)
	resp, err := c.tc.Invoke(ctx, addr, req)
	if err != nil {
		return nil, fmt.Errorf("%s broker=%s: %w", transport.UpdateBrokerConfig, addr, err)
	}
	if resp.ResponseCode() != transport.Success {
		return nil, fmt.Errorf("%s broker=%s: %s %s: %w", transport.UpdateBrokerConfig, addr, resp.ResponseCode(), resp.Remark, ErrBrokerResponse)
	}
	var answer struct {
		Changes []ConfigChange `json:"changes"`
	}
	if err := json.Unmarshal(resp.Body, &answer); err != nil {
		return nil, fmt.Errorf("%s broker=%s: %v: %w", transport.UpdateBrokerConfig, addr, err, ErrBadAnswer)
	}
	return answer.Changes, nil
}

// UpdateTable renders UpdateBrokerConfig: one line per changed key per node
// ("unchanged" when the values were in force already); JSON: one object per
// node with "ok" and "changes".
func UpdateTable(us []NodeUpdate) Table {
	type doc struct {
		nodeIdentity
		OK      bool           `json:"ok"`
		Changes []ConfigChange `json:"changes"`
	}
	t := Table{Header: []string{"GROUP", "ADDR", "KEY", "OLD", "NEW", "RESULT"}}
	docs := []doc{}
	for _, u := range us {
		docs = append(docs, doc{identity(u.Node, u.Err), u.Err == nil, rows(u.Changes)})
		switch {
		case u.Err != nil:
			t.Rows = append(t.Rows, []string{u.Group, u.Addr, "", "", "", "FAILED: " + u.Err.Error()})
		case len(u.Changes) == 0:
			t.Rows = append(t.Rows, []string{u.Group, u.Addr, "", "", "", "unchanged"})
		}
		for _, ch := range u.Changes {
			t.Rows = append(t.Rows, []string{u.Group, u.Addr, ch.Key, ch.Old, ch.New, "OK"})
		}
	}
	for _, u := range us {
		if len(u.Changes) > 0 {
			t.Footer = append(t.Footer, "Changed on these nodes until they restart; broker.conf is not rewritten.")
			break
		}
	}
	t.Doc = docs
	return t
}

// UpdateError is the first node that refused the update.
func UpdateError(us []NodeUpdate) error {
	for _, u := range us {
		if u.Err != nil {
			return fmt.Errorf("node %s of %s: %w", u.Addr, u.Group, u.Err)
		}
	}
	return nil
}
