package admin

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/rocketraft/rocketraft/transport/sign"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// Sentinel errors; messages add the identifiers.
var (
	// ErrNoTarget: no broker matches the group, cluster or address asked for.
	ErrNoTarget = errors.New("admin: no broker target")
	// ErrBrokerResponse: a broker answered with a failure code.
	ErrBrokerResponse = errors.New("admin: broker refused")
	// ErrNotFound: the message, topic or group asked for does not exist.
	ErrNotFound = errors.New("admin: not found")
	// ErrBadAnswer: a broker or nameserver answered bytes this client cannot decode.
	ErrBadAnswer = errors.New("admin: undecodable answer")
)

// DefaultNamesrv is the nameserver address the CLI uses without --namesrv.
const DefaultNamesrv = "127.0.0.1:9876"

// Config says where the cluster is.
type Config struct {
	// NamesrvAddrs are tried in order until one answers.
	NamesrvAddrs []string
	// BrokerAddr, when set, is the only broker node spoken to: commands that
	// address a group use it instead of resolving the group through a nameserver.
	BrokerAddr string
	// Timeout bounds one request (default 5 s); membership changes get three times it.
	Timeout time.Duration
	// Credentials sign every request to a broker or nameserver (brokers with
	// aclEnable=true refuse unsigned ones; a nameserver with aclEnable refuses an
	// unsigned DELETE_TOPIC_IN_NAMESRV); zero sends unsigned requests.
	Credentials sign.Credentials
	// TLS, when set, makes every connection TLS, to brokers and nameservers
	// alike (clusters with tlsMode=enforcing refuse plaintext);
	// transport.ClientTLS builds it. nil dials plaintext.
	TLS    *tls.Config
	Logger hclog.Logger
}

// Client runs admin commands. Close it to drop its connections.
type Client struct {
	cfg Config
	tc  *transport.Client
	ns  *nameserver.Client
}

// New builds a client; it dials lazily.
func New(cfg Config) *Client {
	if len(cfg.NamesrvAddrs) == 0 {
		cfg.NamesrvAddrs = []string{DefaultNamesrv}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	tc := transport.NewClient(transport.ClientConfig{DialTimeout: cfg.Timeout, TLS: cfg.TLS, Logger: cfg.Logger.Named("admin")})
	return &Client{cfg: cfg, tc: tc, ns: nameserver.NewClient(tc).WithCredentials(cfg.Credentials)}
}

// Close closes every connection.
func (c *Client) Close() error { return c.tc.Close() }

// invoke sends one request to a broker and returns the answer of any code.
func (c *Client) invoke(ctx context.Context, addr string, code transport.RequestCode, ext map[string]string, timeout time.Duration) (*transport.Command, error) {
	if timeout <= 0 {
		timeout = c.cfg.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := c.tc.Invoke(ctx, addr, transport.NewRequest(code, c.cfg.Credentials.SignExt(ext, nil), nil))
	if err != nil {
		return nil, fmt.Errorf("%s broker=%s: %w", code, addr, err)
	}
	return resp, nil
}

// call is invoke that turns any code but SUCCESS into ErrBrokerResponse.
func (c *Client) call(ctx context.Context, addr string, code transport.RequestCode, ext map[string]string) (*transport.Command, error) {
	return c.callTimeout(ctx, addr, code, ext, 0)
}

func (c *Client) callTimeout(ctx context.Context, addr string, code transport.RequestCode, ext map[string]string, timeout time.Duration) (*transport.Command, error) {
	resp, err := c.invoke(ctx, addr, code, ext, timeout)
	if err != nil {
		return nil, err
	}
	if resp.ResponseCode() != transport.Success {
		return resp, fmt.Errorf("%s broker=%s: %s %s: %w", code, addr, resp.ResponseCode(), resp.Remark, ErrBrokerResponse)
	}
	return resp, nil
}

// namesrv runs f against each nameserver in turn until one succeeds.
func namesrv[T any](ctx context.Context, c *Client, f func(ctx context.Context, addr string) (T, error)) (T, error) {
	var errs []error
	for _, addr := range c.cfg.NamesrvAddrs {
		cctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		v, err := f(cctx, addr)
		cancel()
		if err == nil {
			return v, nil
		}
		errs = append(errs, err)
	}
	var zero T
	return zero, errors.Join(errs...)
}

// Group is one broker group (brokerName) as the nameserver knows it.
type Group struct {
	Cluster string
	Name    string
	// Addrs maps registered broker ids to addresses: 0 is the leader, i+1 the
	// follower at peer index i.
	Addrs map[nameserver.BrokerID]string
}

// Target is where group-addressed requests go: the leader if registered.
func (g Group) Target() string {
	if a, ok := g.Addrs[nameserver.MasterID]; ok {
		return a
	}
	for _, id := range slices.Sorted(maps.Keys(g.Addrs)) {
		return g.Addrs[id]
	}
	return ""
}

// Nodes lists the distinct addresses in broker id order.
func (g Group) Nodes() []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(g.Addrs)) {
		if a := g.Addrs[id]; !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// Groups lists the broker groups: the one --broker names (its brokerName read
// from the node) or every group the nameserver knows, sorted by cluster and name.
func (c *Client) Groups(ctx context.Context) ([]Group, error) {
	if c.cfg.BrokerAddr != "" {
		info, err := c.runtimeInfo(ctx, c.cfg.BrokerAddr)
		if err != nil {
			return nil, err
		}
		return []Group{{Cluster: info["brokerClusterName"], Name: info["brokerName"],
			Addrs: map[nameserver.BrokerID]string{nameserver.MasterID: c.cfg.BrokerAddr}}}, nil
	}
	ci, err := namesrv(ctx, c, c.ns.GetClusterInfo)
	if err != nil {
		return nil, fmt.Errorf("admin: cluster info: %w", err)
	}
	return groupsOf(ci), nil
}

// groupsOf flattens a cluster info answer.
func groupsOf(ci nameserver.ClusterInfo) []Group {
	var out []Group
	for name, bd := range ci.BrokerAddrTable {
		g := Group{Cluster: bd.Cluster, Name: name, Addrs: maps.Clone(bd.BrokerAddrs)}
		if g.Addrs == nil {
			g.Addrs = map[nameserver.BrokerID]string{}
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b Group) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// selectGroups keeps the groups named (by brokerName) or in cluster; both empty
// keeps all. It fails when nothing is left.
func selectGroups(all []Group, cluster, name string) ([]Group, error) {
	var out []Group
	for _, g := range all {
		if (cluster == "" || g.Cluster == cluster) && (name == "" || g.Name == name) {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: cluster=%q brokerName=%q (known: %d groups)", ErrNoTarget, cluster, name, len(all))
	}
	return out, nil
}

// group resolves one group by name; "" is allowed when exactly one exists.
func (c *Client) group(ctx context.Context, name string) (Group, error) {
	all, err := c.Groups(ctx)
	if err != nil {
		return Group{}, err
	}
	if name == "" && c.cfg.BrokerAddr == "" && len(all) > 1 {
		names := make([]string, len(all))
		for i, g := range all {
			names[i] = g.Name
		}
		return Group{}, fmt.Errorf("%w: %d groups (%v): name one with --broker-name", ErrNoTarget, len(all), names)
	}
	if c.cfg.BrokerAddr != "" {
		name = ""
	}
	gs, err := selectGroups(all, "", name)
	if err != nil {
		return Group{}, err
	}
	return gs[0], nil
}
