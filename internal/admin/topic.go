package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// TopicSpec is what topic create/update send (UPDATE_AND_CREATE_TOPIC's header).
type TopicSpec struct {
	Name           string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32 // PermName bits: 2 write, 4 read
	Order          bool
	// Cluster and Group restrict the groups written; both empty means every group.
	Cluster string
	Group   string
}

// GroupResult is the outcome of one request sent to one group.
type GroupResult struct {
	Group string
	Addr  string
	Err   error
}

// ResultsTable renders per-group outcomes; it is what create, update, delete and
// the raft changes print.
func ResultsTable(op string, rs []GroupResult) Table {
	t := Table{Header: []string{"GROUP", "ADDR", "OPERATION", "RESULT"}}
	for _, r := range rs {
		res := "OK"
		if r.Err != nil {
			res = "FAILED: " + r.Err.Error()
		}
		t.Rows = append(t.Rows, []string{r.Group, r.Addr, op, res})
	}
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

// TopicCreate creates or updates a topic on every selected group.
func (c *Client) TopicCreate(ctx context.Context, s TopicSpec) ([]GroupResult, error) {
	all, err := c.Groups(ctx)
	if err != nil {
		return nil, err
	}
	groups, err := selectGroups(all, s.Cluster, s.Group)
	if err != nil {
		return nil, err
	}
	ext := map[string]string{
		"topic":           s.Name,
		"defaultTopic":    "TBW102",
		"readQueueNums":   strconv.Itoa(int(s.ReadQueueNums)),
		"writeQueueNums":  strconv.Itoa(int(s.WriteQueueNums)),
		"perm":            strconv.Itoa(int(s.Perm)),
		"topicFilterType": "SINGLE_TAG",
		"topicSysFlag":    "0",
		"order":           strconv.FormatBool(s.Order),
	}
	var out []GroupResult
	for _, g := range groups {
		addr := g.Target()
		_, err := c.call(ctx, addr, transport.UpdateAndCreateTopic, ext)
		out = append(out, GroupResult{Group: g.Name, Addr: addr, Err: err})
	}
	return out, nil
}

// TopicDelete deletes a topic from every group that serves it (or the selected
// ones) and then from every nameserver.
func (c *Client) TopicDelete(ctx context.Context, topic, cluster, group string) ([]GroupResult, error) {
	all, err := c.Groups(ctx)
	if err != nil {
		return nil, err
	}
	groups, err := selectGroups(all, cluster, group)
	if err != nil {
		return nil, err
	}
	var out []GroupResult
	for _, g := range groups {
		addr := g.Target()
		_, err := c.call(ctx, addr, transport.DeleteTopicInBroker, map[string]string{"topic": topic})
		out = append(out, GroupResult{Group: g.Name, Addr: addr, Err: err})
	}
	if c.cfg.BrokerAddr == "" {
		for _, ns := range c.cfg.NamesrvAddrs {
			cctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
			err := c.ns.DeleteTopic(cctx, ns, topic, cluster)
			cancel()
			out = append(out, GroupResult{Group: "(nameserver)", Addr: ns, Err: err})
		}
	}
	return out, nil
}

// TopicList lists every topic the nameserver knows.
func (c *Client) TopicList(ctx context.Context) ([]string, error) {
	ts, err := namesrv(ctx, c, c.ns.GetTopicList)
	if err != nil {
		return nil, fmt.Errorf("admin: topic list: %w", err)
	}
	slices.Sort(ts)
	return ts, nil
}

// TopicListTable renders TopicList.
func TopicListTable(topics []string) Table {
	t := Table{Header: []string{"TOPIC"}}
	for _, s := range topics {
		t.Rows = append(t.Rows, []string{s})
	}
	return t
}

// TopicRoute reads a topic's route; a missing topic is ErrNotFound.
func (c *Client) TopicRoute(ctx context.Context, topic string) (nameserver.TopicRouteData, error) {
	r, err := namesrv(ctx, c, func(ctx context.Context, addr string) (nameserver.TopicRouteData, error) {
		return c.ns.GetRoute(ctx, addr, topic)
	})
	if errors.Is(err, nameserver.ErrTopicNotExist) {
		return r, fmt.Errorf("topic %s: %w: %w", topic, ErrNotFound, err)
	}
	return r, err
}

// RouteTable renders a route: one line per group with its queues and nodes.
func RouteTable(topic string, r nameserver.TopicRouteData) Table {
	t := Table{Header: []string{"TOPIC", "GROUP", "READ-QUEUES", "WRITE-QUEUES", "PERM", "BROKER-ADDRS"}}
	addrs := map[string]string{}
	for _, bd := range r.BrokerDatas {
		var s string
		for _, id := range sortedIDs(bd.BrokerAddrs) {
			if s != "" {
				s += " "
			}
			s += strconv.FormatInt(int64(id), 10) + "=" + bd.BrokerAddrs[id]
		}
		addrs[bd.BrokerName] = s
	}
	qds := slices.Clone(r.QueueDatas)
	slices.SortFunc(qds, func(a, b nameserver.QueueData) int { return cmpString(a.BrokerName, b.BrokerName) })
	for _, q := range qds {
		t.Rows = append(t.Rows, []string{topic, q.BrokerName, strconv.Itoa(int(q.ReadQueueNums)),
			strconv.Itoa(int(q.WriteQueueNums)), permString(q.Perm), addrs[q.BrokerName]})
	}
	return t
}

// permString is mqadmin's rendering: R, W, X (inherit) or -.
func permString(p nameserver.Perm) string {
	b := []byte("---")
	if p&nameserver.PermRead != 0 {
		b[0] = 'R'
	}
	if p&nameserver.PermWrite != 0 {
		b[1] = 'W'
	}
	if p&nameserver.PermInherit != 0 {
		b[2] = 'X'
	}
	return string(b) + "(" + strconv.Itoa(int(p)) + ")"
}

// QueueStatus is one queue of topic status.
type QueueStatus struct {
	Group     string
	QueueID   int32
	MinOffset int64
	MaxOffset int64
	Err       error
}

// TopicStatus reads min and max offsets of every read queue of a topic from
// each group's leader (or any node).
func (c *Client) TopicStatus(ctx context.Context, topic string) ([]QueueStatus, error) {
	r, err := c.TopicRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	targets := routeTargets(r)
	var out []QueueStatus
	qds := slices.Clone(r.QueueDatas)
	slices.SortFunc(qds, func(a, b nameserver.QueueData) int { return cmpString(a.BrokerName, b.BrokerName) })
	for _, qd := range qds {
		addr := targets[qd.BrokerName]
		for q := range qd.ReadQueueNums {
			qs := QueueStatus{Group: qd.BrokerName, QueueID: q}
			ext := map[string]string{"topic": topic, "queueId": strconv.Itoa(int(q))}
			qs.MinOffset, qs.Err = c.offset(ctx, addr, transport.GetMinOffset, ext)
			if qs.Err == nil {
				qs.MaxOffset, qs.Err = c.offset(ctx, addr, transport.GetMaxOffset, ext)
			}
			out = append(out, qs)
		}
	}
	return out, nil
}

func (c *Client) offset(ctx context.Context, addr string, code transport.RequestCode, ext map[string]string) (int64, error) {
	if addr == "" {
		return 0, fmt.Errorf("%w: group has no registered node", ErrNoTarget)
	}
	resp, err := c.call(ctx, addr, code, ext)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(resp.ExtFields["offset"], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s broker=%s offset=%q: %w", code, addr, resp.ExtFields["offset"], ErrBadAnswer)
	}
	return v, nil
}

// routeTargets maps each group in a route to its leader, or any node.
func routeTargets(r nameserver.TopicRouteData) map[string]string {
	out := map[string]string{}
	for _, bd := range r.BrokerDatas {
		out[bd.BrokerName] = Group{Name: bd.BrokerName, Addrs: bd.BrokerAddrs}.Target()
	}
	return out
}

// TopicStatusTable renders TopicStatus with a total message count.
func TopicStatusTable(topic string, qs []QueueStatus) Table {
	t := Table{Header: []string{"TOPIC", "GROUP", "QUEUE", "MIN-OFFSET", "MAX-OFFSET", "MESSAGES"}}
	var total int64
	for _, q := range qs {
		if q.Err != nil {
			t.Rows = append(t.Rows, []string{topic, q.Group, strconv.Itoa(int(q.QueueID)), "", "", "ERROR: " + q.Err.Error()})
			continue
		}
		n := q.MaxOffset - q.MinOffset
		total += n
		t.Rows = append(t.Rows, []string{topic, q.Group, strconv.Itoa(int(q.QueueID)),
			strconv.FormatInt(q.MinOffset, 10), strconv.FormatInt(q.MaxOffset, 10), strconv.FormatInt(n, 10)})
	}
	t.Footer = []string{fmt.Sprintf("total messages: %d in %d queues", total, len(qs))}
	return t
}

func sortedIDs(a nameserver.BrokerAddrs) []nameserver.BrokerID {
	ids := make([]nameserver.BrokerID, 0, len(a))
	for id := range a {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
