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

// TopicSpec is what topic create sends (UPDATE_AND_CREATE_TOPIC's header):
// every field, so on an existing topic it replaces the whole config, as
// mqadmin updateTopic does. TopicUpdate changes only some fields.
type TopicSpec struct {
	Name           string
	ReadQueueNums  int32
	WriteQueueNums int32
	Perm           int32 // PermName bits: 2 write, 4 read
	Order          bool
	// Cluster and BrokerName restrict the groups written; both empty means
	// every group.
	Cluster    string
	BrokerName string
}

// TopicCreate creates a topic on every selected group (an existing one gets
// every field of s).
func (c *Client) TopicCreate(ctx context.Context, s TopicSpec) ([]GroupResult, error) {
	ext := upsertExt(nameserver.TopicConfig{TopicName: s.Name, ReadQueueNums: s.ReadQueueNums, WriteQueueNums: s.WriteQueueNums,
		Perm: nameserver.Perm(s.Perm), TopicFilterType: "SINGLE_TAG", Order: s.Order})
	return c.eachGroup(ctx, s.Cluster, s.BrokerName, transport.UpdateAndCreateTopic, ext)
}

// upsertExt is UPDATE_AND_CREATE_TOPIC's header for the whole config tc.
func upsertExt(tc nameserver.TopicConfig) map[string]string {
	filter := tc.TopicFilterType
	if filter == "" {
		filter = "SINGLE_TAG"
	}
	return map[string]string{
		"topic":           tc.TopicName,
		"defaultTopic":    "TBW102",
		"readQueueNums":   strconv.Itoa(int(tc.ReadQueueNums)),
		"writeQueueNums":  strconv.Itoa(int(tc.WriteQueueNums)),
		"perm":            strconv.Itoa(int(tc.Perm)),
		"topicFilterType": filter,
		"topicSysFlag":    strconv.Itoa(int(tc.TopicSysFlag)),
		"order":           strconv.FormatBool(tc.Order),
	}
}

// TopicDelete deletes a topic from every group that serves it (or the selected
// ones) and then from every nameserver.
func (c *Client) TopicDelete(ctx context.Context, topic, cluster, brokerName string) ([]GroupResult, error) {
	groups, err := c.selected(ctx, cluster, brokerName)
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
	type topicDoc struct {
		Topic string `json:"topic"`
	}
	t := Table{Header: []string{"TOPIC"}}
	docs := []topicDoc{}
	for _, s := range topics {
		t.Rows = append(t.Rows, []string{s})
		docs = append(docs, topicDoc{s})
	}
	t.Doc = docs
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

// routeDoc is RouteTable in JSON: RocketMQ's TopicRouteData (what mqadmin
// topicRoute prints) with the topic's name, queues sorted by group.
type routeDoc struct {
	Topic          string                  `json:"topic"`
	OrderTopicConf string                  `json:"orderTopicConf,omitempty"`
	QueueDatas     []nameserver.QueueData  `json:"queueDatas"`
	BrokerDatas    []nameserver.BrokerData `json:"brokerDatas"`
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
	bds := slices.Clone(r.BrokerDatas)
	slices.SortFunc(bds, func(a, b nameserver.BrokerData) int { return cmpString(a.BrokerName, b.BrokerName) })
	t.Doc = routeDoc{Topic: topic, OrderTopicConf: r.OrderTopicConf, QueueDatas: rows(qds), BrokerDatas: rows(bds)}
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

// statusDoc is TopicStatusTable in JSON.
type statusDoc struct {
	Topic         string           `json:"topic"`
	TotalMessages int64            `json:"totalMessages"`
	Queues        []queueStatusDoc `json:"queues"`
}

type queueStatusDoc struct {
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
	MinOffset  int64  `json:"minOffset"`
	MaxOffset  int64  `json:"maxOffset"`
	Messages   int64  `json:"messages"`
	Error      string `json:"error,omitempty"`
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
	v, err := strconv.ParseInt(resp.Field("offset"), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s broker=%s offset=%q: %w", code, addr, resp.Field("offset"), ErrBadAnswer)
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
	doc := statusDoc{Topic: topic, Queues: []queueStatusDoc{}}
	for _, q := range qs {
		if q.Err != nil {
			t.Rows = append(t.Rows, []string{topic, q.Group, strconv.Itoa(int(q.QueueID)), "", "", "ERROR: " + q.Err.Error()})
			doc.Queues = append(doc.Queues, queueStatusDoc{BrokerName: q.Group, QueueID: q.QueueID, Error: q.Err.Error()})
			continue
		}
		n := q.MaxOffset - q.MinOffset
		doc.TotalMessages += n
		t.Rows = append(t.Rows, []string{topic, q.Group, strconv.Itoa(int(q.QueueID)),
			strconv.FormatInt(q.MinOffset, 10), strconv.FormatInt(q.MaxOffset, 10), strconv.FormatInt(n, 10)})
		doc.Queues = append(doc.Queues, queueStatusDoc{BrokerName: q.Group, QueueID: q.QueueID, MinOffset: q.MinOffset, MaxOffset: q.MaxOffset, Messages: n})
	}
	t.Footer = []string{fmt.Sprintf("total messages: %d in %d queues", doc.TotalMessages, len(qs))}
	t.Doc = doc
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
