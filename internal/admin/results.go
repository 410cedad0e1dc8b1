package admin

import (
	"context"
	"fmt"

	"github.com/rocketraft/rocketraft/transport"
)

// GroupResult is the outcome of one request sent to one group.
type GroupResult struct {
	Group string
	Addr  string
	Err   error
}

// resultDoc is one row of ResultsTable in JSON.
type resultDoc struct {
	BrokerName string `json:"brokerName"`
	Addr       string `json:"addr"`
	Operation  string `json:"operation"`
	OK         bool   `json:"ok"`
	Error      string `json:"error,omitempty"`
}

// ResultsTable renders per-group outcomes; it is what create, delete, the ACL
// changes and the raft changes print.
func ResultsTable(op string, rs []GroupResult) Table {
	t := Table{Header: []string{"GROUP", "ADDR", "OPERATION", "RESULT"}}
	docs := []resultDoc{}
	for _, r := range rs {
		res := "OK"
		if r.Err != nil {
			res = "FAILED: " + r.Err.Error()
		}
		t.Rows = append(t.Rows, []string{r.Group, r.Addr, op, res})
		docs = append(docs, resultDoc{BrokerName: r.Group, Addr: r.Addr, Operation: op, OK: r.Err == nil, Error: errText(r.Err)})
	}
	t.Doc = docs
	return t
}

// FirstError is the first failure among rs, so the CLI exits non-zero.
func FirstError(rs []GroupResult) error {
	for _, r := range rs {
		if r.Err != nil {
			return fmt.Errorf("group %s: %w", r.Group, r.Err)
		}
	}
	return nil
}

// selected resolves the groups named by cluster and brokerName (both empty:
// every group).
func (c *Client) selected(ctx context.Context, cluster, brokerName string) ([]Group, error) {
	all, err := c.Groups(ctx)
	if err != nil {
		return nil, err
	}
	return selectGroups(all, cluster, brokerName)
}

// eachGroup sends one request to the leader of every selected group.
func (c *Client) eachGroup(ctx context.Context, cluster, brokerName string, code transport.RequestCode, ext map[string]string) ([]GroupResult, error) {
	groups, err := c.selected(ctx, cluster, brokerName)
	if err != nil {
		return nil, err
	}
	var out []GroupResult
	for _, g := range groups {
		addr := g.Target()
		_, err := c.call(ctx, addr, code, ext)
		out = append(out, GroupResult{Group: g.Name, Addr: addr, Err: err})
	}
	return out, nil
}
