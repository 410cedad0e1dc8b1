package console

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"

	"github.com/rocketraft/rocketraft/internal/admin"
	"github.com/rocketraft/rocketraft/nameserver"
)

// topicPattern is RocketMQ's topic rule (TopicValidator).
var topicPattern = regexp.MustCompile(`^[%|a-zA-Z0-9_-]+$`)

const maxTopicLen = 127

func checkTopicName(field, name string) error {
	switch {
	case name == "":
		return badRequest(field, "%s is required", field)
	case len(name) > maxTopicLen:
		return badRequest(field, "%s %q is %d characters; the limit is %d", field, name, len(name), maxTopicLen)
	case !topicPattern.MatchString(name):
		return badRequest(field, "%s %q may use only letters, digits, %%, |, _ and -", field, name)
	}
	return nil
}

// permText and parsePerm convert RocketMQ's perm bits (4 read, 2 write).
func permText(p nameserver.Perm) string {
	switch {
	case p&6 == 6:
		return "RW"
	case p&4 != 0:
		return "R"
	case p&2 != 0:
		return "W"
	}
	return "-"
}

func parsePerm(s string) (int32, error) {
	switch s {
	case "RW", "WR":
		return 6, nil
	case "R":
		return 4, nil
	case "W":
		return 2, nil
	case "-":
		return 0, nil
	}
	return 0, badRequest("perm", "perm %q must be one of R, W, RW or -", s)
}

type topicDoc struct {
	Name        string   `json:"name"`
	System      bool     `json:"system"`
	BrokerNames []string `json:"brokerNames"`
	ReadQueues  int32    `json:"readQueues"`
	WriteQueues int32    `json:"writeQueues"`
	Perm        string   `json:"perm"`
	Order       bool     `json:"order"`
	InPerSec    *float64 `json:"inPerSec"`
	OutPerSec   *float64 `json:"outPerSec"`
}

// systemTopic also counts the topics RocketMQ names after each broker group
// and cluster.
func (s *Server) systemTopic(name string, groups []admin.Group) bool {
	if isSystemTopic(name) {
		return true
	}
	for _, g := range groups {
		if name == g.Name || name == g.Cluster {
			return true
		}
	}
	return false
}

func (s *Server) listTopics(r *http.Request, _ user) (any, error) {
	ctx := r.Context()
	names, err := s.adm.TopicList(ctx)
	if err != nil {
		return nil, err
	}
	groups, _ := s.adm.Groups(ctx)
	slices.Sort(names)
	out := []topicDoc{}
	for _, n := range names {
		d := topicDoc{Name: n, System: s.systemTopic(n, groups), BrokerNames: []string{}, Perm: "-"}
		if rt, err := s.adm.TopicRoute(ctx, n); err == nil {
			for i, q := range rt.QueueDatas {
				d.BrokerNames = append(d.BrokerNames, q.BrokerName)
				if i == 0 {
					d.ReadQueues, d.WriteQueues, d.Perm = q.ReadQueueNums, q.WriteQueueNums, permText(q.Perm)
				}
			}
			slices.Sort(d.BrokerNames)
		}
		d.InPerSec, d.OutPerSec = s.sampler.topicRates(n)
		out = append(out, d)
	}
	return map[string]any{"topics": out}, nil
}

type topicConfigDoc struct {
	BrokerName  string `json:"brokerName"`
	ReadQueues  int32  `json:"readQueues"`
	WriteQueues int32  `json:"writeQueues"`
	Perm        string `json:"perm"`
	Order       bool   `json:"order"`
}

type queueDoc struct {
	BrokerName string `json:"brokerName"`
	QueueID    int32  `json:"queueId"`
	MinOffset  int64  `json:"minOffset"`
	MaxOffset  int64  `json:"maxOffset"`
	Error      string `json:"error,omitempty"`
}

// topicRoute is TopicRoute with a missing topic as a 404 naming the input.
func (s *Server) topicRoute(r *http.Request, topic string) (nameserver.TopicRouteData, error) {
	if err := checkTopicName("topic", topic); err != nil {
		return nameserver.TopicRouteData{}, err
	}
	rt, err := s.adm.TopicRoute(r.Context(), topic)
	if errors.Is(err, admin.ErrNotFound) {
		return rt, notFound("topic", "topic %q does not exist", topic)
	}
	return rt, err
}

func (s *Server) getTopic(r *http.Request, _ user) (any, error) {
	topic := r.PathValue("topic")
	rt, err := s.topicRoute(r, topic)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	groups, _ := s.adm.Groups(ctx)
	doc := map[string]any{"name": topic, "system": s.systemTopic(topic, groups)}
	configs := []topicConfigDoc{}
	for _, bd := range rt.BrokerDatas {
		addr := admin.Group{Name: bd.BrokerName, Addrs: bd.BrokerAddrs}.Target()
		tc, err := s.adm.TopicConfig(ctx, addr, topic)
		if err != nil {
			continue
		}
		configs = append(configs, topicConfigDoc{BrokerName: bd.BrokerName, ReadQueues: tc.ReadQueueNums,
			WriteQueues: tc.WriteQueueNums, Perm: permText(tc.Perm), Order: tc.Order})
	}
	slices.SortFunc(configs, func(a, b topicConfigDoc) int { return cmpStr(a.BrokerName, b.BrokerName) })
	queues := []queueDoc{}
	qs, err := s.adm.TopicStatus(ctx, topic)
	if err != nil {
		return nil, err
	}
	for _, q := range qs {
		d := queueDoc{BrokerName: q.Group, QueueID: q.QueueID, MinOffset: q.MinOffset, MaxOffset: q.MaxOffset}
		if q.Err != nil {
			d.Error = q.Err.Error()
		}
		queues = append(queues, d)
	}
	consumers, err := s.topicGroups(r, topic)
	if err != nil {
		return nil, err
	}
	in, out := s.sampler.topicRates(topic)
	doc["configs"], doc["queues"], doc["groups"], doc["inPerSec"], doc["outPerSec"] = configs, queues, consumers, in, out
	return doc, nil
}

// topicGroups lists the consumer groups with offsets on topic.
func (s *Server) topicGroups(r *http.Request, topic string) ([]string, error) {
	groups, err := s.adm.GroupList(r.Context(), "", "")
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, g := range groups {
		if slices.Contains(out, g.Name) || isSystemGroup(g.Name) {
			continue
		}
		qs, err := s.adm.GroupProgress(r.Context(), g.Name, topic, "")
		if err != nil {
			continue
		}
		for _, q := range qs {
			if q.Topic == topic && q.ConsumerOffset >= 0 {
				out = append(out, g.Name)
				break
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

type createTopicBody struct {
	Name        string `json:"name"`
	ReadQueues  *int32 `json:"readQueues"`
	WriteQueues *int32 `json:"writeQueues"`
	Perm        string `json:"perm"`
	Order       bool   `json:"order"`
	Cluster     string `json:"cluster"`
	BrokerName  string `json:"brokerName"`
	Confirm     *bool  `json:"confirm"`
}

// maxQueues is the broker's bound on a topic's queues (adminapi refuses more).
const maxQueues = 1024

func checkQueues(field string, v *int32) (int32, error) {
	if v == nil {
		return 4, nil
	}
	if *v < 1 || *v > maxQueues {
		return 0, badRequest(field, "%s=%d must be between 1 and %d", field, *v, maxQueues)
	}
	return *v, nil
}

type resultRow struct {
	BrokerName string `json:"brokerName"`
	OK         bool   `json:"ok"`
	Error      string `json:"error"`
}

func resultRows(rs []admin.GroupResult) []resultRow {
	out := []resultRow{}
	for _, r := range rs {
		row := resultRow{BrokerName: r.Group, OK: r.Err == nil}
		if r.Err != nil {
			row.Error = r.Err.Error()
		}
		out = append(out, row)
	}
	return out
}

func (s *Server) createTopic(r *http.Request, u user) (any, error) {
	var b createTopicBody
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	if err := checkTopicName("name", b.Name); err != nil {
		return nil, err
	}
	rq, err := checkQueues("readQueues", b.ReadQueues)
	if err != nil {
		return nil, err
	}
	wq, err := checkQueues("writeQueues", b.WriteQueues)
	if err != nil {
		return nil, err
	}
	perm := int32(6)
	if b.Perm != "" {
		if perm, err = parsePerm(b.Perm); err != nil {
			return nil, err
		}
	}
	if err := confirmed(b.Confirm); err != nil {
		return nil, err
	}
	if gs, err := s.adm.Groups(r.Context()); err == nil {
		// Ask the brokers, not the route: a topic created a moment ago is
		// registered with the nameserver only on the next heartbeat.
		for _, g := range gs {
			if (b.BrokerName == "" || g.Name == b.BrokerName) && (b.Cluster == "" || g.Cluster == b.Cluster) {
				if _, err := s.adm.TopicConfig(r.Context(), g.Target(), b.Name); err == nil {
					return nil, badRequest("name", "topic %q exists already on %s: change it with PATCH /api/v1/topics/%s", b.Name, g.Name, b.Name)
				}
			}
		}
	}
	rs, err := s.as(u).TopicCreate(r.Context(), admin.TopicSpec{Name: b.Name, ReadQueueNums: rq, WriteQueueNums: wq,
		Perm: perm, Order: b.Order, Cluster: b.Cluster, BrokerName: b.BrokerName})
	if err != nil {
		return nil, err
	}
	if err := admin.FirstError(rs); err != nil {
		return nil, err
	}
	return map[string]any{"results": resultRows(rs)}, nil
}

type updateTopicBody struct {
	ReadQueues  *int32  `json:"readQueues"`
	WriteQueues *int32  `json:"writeQueues"`
	Perm        *string `json:"perm"`
	Order       *bool   `json:"order"`
	Confirm     *bool   `json:"confirm"`
}

func (s *Server) updateTopic(r *http.Request, u user) (any, error) {
	topic := r.PathValue("topic")
	if _, err := s.topicRoute(r, topic); err != nil {
		return nil, err
	}
	var b updateTopicBody
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	var p admin.TopicPatch
	if b.ReadQueues != nil {
		v, err := checkQueues("readQueues", b.ReadQueues)
		if err != nil {
			return nil, err
		}
		p.ReadQueueNums = &v
	}
	if b.WriteQueues != nil {
		v, err := checkQueues("writeQueues", b.WriteQueues)
		if err != nil {
			return nil, err
		}
		p.WriteQueueNums = &v
	}
	if b.Perm != nil {
		v, err := parsePerm(*b.Perm)
		if err != nil {
			return nil, err
		}
		p.Perm = &v
	}
	p.Order = b.Order
	if p.Empty() {
		return nil, badRequest("body", "nothing to change: give readQueues, writeQueues, perm or order")
	}
	if err := confirmed(b.Confirm); err != nil {
		return nil, err
	}
	cs, err := s.as(u).TopicUpdate(r.Context(), topic, "", "", p)
	if err != nil {
		return nil, err
	}
	if err := admin.TopicUpdateError(cs); err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, c := range cs {
		if c.Absent {
			continue
		}
		row := map[string]any{"brokerName": c.Group, "changed": c.Outcome() == "updated", "error": "",
			"before": configOf(c.Group, c.Before), "after": configOf(c.Group, c.After)}
		out = append(out, row)
	}
	return map[string]any{"changes": out}, nil
}

func configOf(group string, tc nameserver.TopicConfig) topicConfigDoc {
	return topicConfigDoc{BrokerName: group, ReadQueues: tc.ReadQueueNums, WriteQueues: tc.WriteQueueNums, Perm: permText(tc.Perm), Order: tc.Order}
}

func (s *Server) deletePreview(r *http.Request, _ user) (any, error) {
	topic := r.PathValue("topic")
	rt, err := s.topicRoute(r, topic)
	if err != nil {
		return nil, err
	}
	var msgs int64
	var queues int32
	var where []string
	for _, q := range rt.QueueDatas {
		where = append(where, q.BrokerName)
		queues += q.ReadQueueNums
	}
	if qs, err := s.adm.TopicStatus(r.Context(), topic); err == nil {
		for _, q := range qs {
			msgs += q.MaxOffset - q.MinOffset
		}
	}
	groups, err := s.topicGroups(r, topic)
	if err != nil {
		return nil, err
	}
	summary := fmt.Sprintf("deletes topic %s on %v (%d queues, %d messages)", topic, where, queues, msgs)
	if len(groups) > 0 {
		summary += fmt.Sprintf("; consumer groups %v lose their position on it", groups)
	}
	return map[string]any{"summary": summary, "groups": groups, "messages": msgs}, nil
}

type confirmBody struct {
	Confirm *bool `json:"confirm"`
}

func (s *Server) deleteTopic(r *http.Request, u user) (any, error) {
	topic := r.PathValue("topic")
	if _, err := s.topicRoute(r, topic); err != nil {
		return nil, err
	}
	var b confirmBody
	if r.ContentLength != 0 {
		if err := decodeBody(r, &b); err != nil {
			return nil, err
		}
	}
	if err := confirmed(b.Confirm); err != nil {
		return nil, err
	}
	rs, err := s.as(u).TopicDelete(r.Context(), topic, "", "")
	if err != nil {
		return nil, err
	}
	if err := admin.FirstError(rs); err != nil {
		return nil, err
	}
	return map[string]any{"results": resultRows(rs)}, nil
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
