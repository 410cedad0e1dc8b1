package console

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// Bounds of a search: the default and the most messages one answer carries.
const (
	defaultSearchMax = 32
	maxSearchMax     = 256
)

type messageDoc struct {
	MsgID           string            `json:"msgId"`
	UniqKey         string            `json:"uniqKey"`
	Topic           string            `json:"topic"`
	BrokerName      string            `json:"brokerName"`
	QueueID         int32             `json:"queueId"`
	QueueOffset     int64             `json:"queueOffset"`
	CommitLogOffset int64             `json:"commitLogOffset"`
	BornTimestamp   int64             `json:"bornTimestamp"`
	StoreTimestamp  int64             `json:"storeTimestamp"`
	BornHost        string            `json:"bornHost"`
	StoreHost       string            `json:"storeHost"`
	Tags            string            `json:"tags"`
	Keys            string            `json:"keys"`
	ReconsumeTimes  int32             `json:"reconsumeTimes"`
	Properties      map[string]string `json:"properties"`
	BodySize        int               `json:"bodySize"`
	Body            *string           `json:"body,omitempty"`
	BodyText        *string           `json:"bodyText,omitempty"`
	BodyIsText      *bool             `json:"bodyIsText,omitempty"`
	Replicas        []replicaDoc      `json:"replicas,omitempty"`
}

type replicaDoc struct {
	Node            string `json:"node"`
	Addr            string `json:"addr"`
	Up              bool   `json:"up"`
	Stored          bool   `json:"stored"`
	CommitLogOffset *int64 `json:"commitLogOffset"`
	Error           string `json:"error"`
}

func docOf(m admin.MessageView, withBody bool) messageDoc {
	props := m.Properties
	if props == nil {
		props = map[string]string{}
	}
	d := messageDoc{MsgID: m.OffsetMsgID, UniqKey: m.MsgID, Topic: m.Topic, BrokerName: m.Group, QueueID: m.QueueID,
		QueueOffset: int64(m.QueueOffset), CommitLogOffset: int64(m.PhysOffset), BornTimestamp: m.BornTime.UnixMilli(),
		StoreTimestamp: m.StoreTime.UnixMilli(), BornHost: m.BornHost, StoreHost: m.StoreHost, Tags: m.Tags,
		Keys: strings.Join(m.Keys, " "), ReconsumeTimes: m.ReconsumeTimes, Properties: props, BodySize: m.BodySize}
	if withBody {
		b64 := base64.StdEncoding.EncodeToString(m.Body)
		isText := utf8.Valid(m.Body)
		d.Body, d.BodyIsText = &b64, &isText
		if isText {
			txt := string(m.Body)
			d.BodyText = &txt
		}
	}
	return d
}

// knownNodes maps every node address the console knows to its group.
func (s *Server) knownNodes(ctx context.Context) map[string]string {
	out := map[string]string{}
	if gs, err := s.adm.Groups(ctx); err == nil {
		for _, g := range gs {
			for _, a := range g.Nodes() {
				out[a] = g.Name
			}
		}
	}
	for a, n := range s.seen.all() {
		out[a] = n.group
	}
	return out
}

// checkMsgID accepts the two id shapes: 32 hex digits (a UNIQ_KEY or an IPv4
// offset id) and 40 (an IPv6 offset id).
func checkMsgID(id string) error {
	if len(id) != 32 && len(id) != 40 {
		return badRequest("msgId", "msgId %q is %d characters; a RocketMQ msgId is 32 hex digits (40 for an IPv6 store host)", id, len(id))
	}
	for _, c := range id {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return badRequest("msgId", "msgId %q has %q: a msgId is hex digits only", id, c)
		}
	}
	return nil
}

// findByID finds a message by offset msgId, at the node the id names when
// the console knows that node (it never dials an address taken from input),
// else as a UNIQ_KEY through the key index of topic, or of every user topic.
func (s *Server) findByID(ctx context.Context, id, topic string) ([]admin.MessageView, error) {
	if err := checkMsgID(id); err != nil {
		return nil, err
	}
	nodes := s.knownNodes(ctx)
	if addr, off, err := admin.ParseOffsetMsgID(id); err == nil {
		if group, ok := nodes[addr]; ok {
			// The node the id names first; its group's replicas hold the same
			// bytes at the same offset, so they answer when it is down.
			tries := []string{addr}
			for a, g := range nodes {
				if g == group && a != addr {
					tries = append(tries, a)
				}
			}
			slices.Sort(tries[1:])
			for _, a := range tries {
				if m, err := s.adm.MessageAt(ctx, a, off); err == nil && strings.EqualFold(m.OffsetMsgID, id) {
					m.Group = group
					return []admin.MessageView{m}, nil
				}
			}
		}
	}
	topics := []string{topic}
	if topic == "" {
		all, err := s.adm.TopicList(ctx)
		if err != nil {
			return nil, err
		}
		topics = slices.DeleteFunc(all, isSystemTopic)
	}
	var out []admin.MessageView
	for _, t := range topics {
		ms, err := s.adm.MessageByKey(ctx, t, id, defaultSearchMax)
		if errors.Is(err, admin.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if m.MsgID == id {
				out = append(out, m)
			}
		}
	}
	return out, nil
}

func intParam(q map[string][]string, name string, min, max int64) (int64, bool, error) {
	v := ""
	if vs := q[name]; len(vs) > 0 {
		v = vs[0]
	}
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < min || n > max {
		return 0, false, badRequest(name, "%s=%q must be an integer from %d to %d", name, v, min, max)
	}
	return n, true, nil
}

func (s *Server) searchMessages(r *http.Request, _ user) (any, error) {
	q := r.URL.Query()
	ctx := r.Context()
	limit, ok, err := intParam(q, "max", 1, maxSearchMax)
	if err != nil {
		return nil, err
	}
	if !ok {
		limit = defaultSearchMax
	}
	topic := q.Get("topic")
	var ms []admin.MessageView
	switch {
	case q.Get("msgId") != "":
		if topic != "" {
			if _, err := s.topicRoute(r, topic); err != nil {
				return nil, err
			}
		}
		ms, err = s.findByID(ctx, q.Get("msgId"), topic)
	case q.Get("key") != "":
		if _, err := s.topicRoute(r, topic); err != nil {
			return nil, err
		}
		ms, err = s.adm.MessageByKey(ctx, topic, q.Get("key"), int(limit))
		if errors.Is(err, admin.ErrNotFound) {
			ms, err = nil, nil
		}
	case q.Get("offset") != "" || q.Get("queueId") != "":
		ms, err = s.atQueueOffset(r, topic)
	case q.Get("begin") != "" || q.Get("end") != "":
		ms, err = s.inTimeRange(r, topic, int(limit))
	default:
		return nil, badRequest("query", "search by topic&key, msgId, topic&brokerName&queueId&offset or topic&begin&end")
	}
	if err != nil {
		return nil, err
	}
	out := []messageDoc{}
	for i, m := range ms {
		if i == int(limit) {
			break
		}
		out = append(out, docOf(m, false))
	}
	return map[string]any{"messages": out}, nil
}

// groupTarget is the address group-addressed reads go to for brokerName.
func (s *Server) groupTarget(r *http.Request, topic, brokerName string) (string, error) {
	rt, err := s.topicRoute(r, topic)
	if err != nil {
		return "", err
	}
	for _, bd := range rt.BrokerDatas {
		if bd.BrokerName == brokerName {
			return admin.Group{Name: bd.BrokerName, Addrs: bd.BrokerAddrs}.Target(), nil
		}
	}
	return "", notFound("brokerName", "topic %s is not served by broker group %q", topic, brokerName)
}

func (s *Server) atQueueOffset(r *http.Request, topic string) ([]admin.MessageView, error) {
	q := r.URL.Query()
	brokerName := q.Get("brokerName")
	if brokerName == "" {
		return nil, badRequest("brokerName", "brokerName is required with queueId and offset")
	}
	qid, ok, err := intParam(q, "queueId", 0, maxQueues-1)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, badRequest("queueId", "queueId is required with offset")
	}
	off, ok, err := intParam(q, "offset", 0, 1<<62)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, badRequest("offset", "offset is required with queueId")
	}
	addr, err := s.groupTarget(r, topic, brokerName)
	if err != nil {
		return nil, err
	}
	ms, err := s.adm.PeekMessages(r.Context(), addr, topic, int32(qid), off, 1)
	if err != nil {
		return nil, err
	}
	ms = slices.DeleteFunc(ms, func(m admin.MessageView) bool { return int64(m.QueueOffset) != off })
	for i := range ms {
		ms[i].Group = brokerName
	}
	return ms, nil
}

func (s *Server) inTimeRange(r *http.Request, topic string, limit int) ([]admin.MessageView, error) {
	q := r.URL.Query()
	begin, ok, err := intParam(q, "begin", 0, 1<<62)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, badRequest("begin", "begin (unix ms) is required with end")
	}
	end, ok, err := intParam(q, "end", 0, 1<<62)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, badRequest("end", "end (unix ms) is required with begin")
	}
	if end < begin {
		return nil, badRequest("end", "end=%d is before begin=%d", end, begin)
	}
	rt, err := s.topicRoute(r, topic)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	var out []admin.MessageView
	for _, bd := range rt.BrokerDatas {
		addr := admin.Group{Name: bd.BrokerName, Addrs: bd.BrokerAddrs}.Target()
		var queues int32
		for _, qd := range rt.QueueDatas {
			if qd.BrokerName == bd.BrokerName {
				queues = qd.ReadQueueNums
			}
		}
		for qid := range queues {
			from, err := s.adm.OffsetByTime(ctx, addr, topic, qid, begin)
			if err != nil {
				return nil, err
			}
			for len(out) < limit {
				ms, err := s.adm.PeekMessages(ctx, addr, topic, qid, from, min(limit-len(out), 32))
				if err != nil {
					return nil, err
				}
				if len(ms) == 0 {
					break
				}
				past := false
				for _, m := range ms {
					st := m.StoreTime.UnixMilli()
					if st > end {
						past = true
						break
					}
					if st >= begin {
						m.Group = bd.BrokerName
						out = append(out, m)
					}
				}
				if past {
					break
				}
				from = int64(ms[len(ms)-1].QueueOffset) + 1
			}
		}
	}
	slices.SortFunc(out, func(a, b admin.MessageView) int { return a.StoreTime.Compare(b.StoreTime) })
	return out, nil
}

func (s *Server) getMessage(r *http.Request, _ user) (any, error) {
	id := r.PathValue("msgId")
	topic := r.URL.Query().Get("topic")
	if topic != "" {
		if _, err := s.topicRoute(r, topic); err != nil {
			return nil, err
		}
	}
	ms, err := s.findByID(r.Context(), id, topic)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, notFound("msgId", "no message with msgId %s", id)
	}
	m := ms[0]
	d := docOf(m, true)
	d.Replicas = s.replicas(r.Context(), m)
	if d.BrokerName == "" && len(d.Replicas) > 0 {
		d.BrokerName = s.knownNodes(r.Context())[d.Replicas[0].Addr]
	}
	return d, nil
}

// replicas asks every node of the message's group directly whether it holds
// the message at the same CommitLog offset.
func (s *Server) replicas(ctx context.Context, m admin.MessageView) []replicaDoc {
	nodes := s.knownNodes(ctx)
	group := m.Group
	if group == "" {
		group = nodes[m.Addr]
	}
	var addrs []string
	for a, g := range nodes {
		if g == group {
			addrs = append(addrs, a)
		}
	}
	slices.Sort(addrs)
	ids := map[string]string{}
	if doc, err := s.snapshot(ctx); err == nil {
		for _, g := range doc.Groups {
			for _, n := range g.Nodes {
				ids[n.Addr] = n.Node
			}
		}
	}
	out := []replicaDoc{}
	for _, a := range addrs {
		rd := replicaDoc{Node: ids[a], Addr: a}
		got, err := s.adm.MessageAt(ctx, a, m.PhysOffset)
		switch {
		case err == nil && got.Topic == m.Topic && got.QueueOffset == m.QueueOffset && got.QueueID == m.QueueID:
			off := int64(got.PhysOffset)
			rd.Up, rd.Stored, rd.CommitLogOffset = true, true, &off
		case err == nil:
			rd.Up, rd.Error = true, "a different message is stored at this CommitLog offset"
		case errors.Is(err, admin.ErrNotFound):
			rd.Up, rd.Error = true, "not stored (yet) on this node: "+err.Error()
		default:
			rd.Error = err.Error()
		}
		out = append(out, rd)
	}
	return out
}
