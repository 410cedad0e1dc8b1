package console

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/rocketraft/rocketraft/internal/admin"
)

type groupSummary struct {
	Name          string   `json:"name"`
	System        bool     `json:"system"`
	BrokerNames   []string `json:"brokerNames"`
	Topics        []string `json:"topics"`
	Lag           *int64   `json:"lag"`
	Clients       *int     `json:"clients"`
	ConsumePerSec *float64 `json:"consumePerSec"`
	ConsumeEnable bool     `json:"consumeEnable"`
	RetryMaxTimes int32    `json:"retryMaxTimes"`
}

func (s *Server) listGroups(r *http.Request, _ user) (any, error) {
	ctx := r.Context()
	gs, err := s.adm.GroupList(ctx, "", "")
	if err != nil {
		return nil, err
	}
	byName := map[string]*groupSummary{}
	var names []string
	for _, g := range gs {
		d := byName[g.Name]
		if d == nil {
			d = &groupSummary{Name: g.Name, System: isSystemGroup(g.Name), BrokerNames: []string{}, Topics: []string{},
				ConsumeEnable: g.ConsumeEnable, RetryMaxTimes: g.RetryMaxTimes}
			byName[g.Name] = d
			names = append(names, g.Name)
		}
		d.BrokerNames = append(d.BrokerNames, g.BrokerGroup)
	}
	slices.Sort(names)
	out := []groupSummary{}
	for _, n := range names {
		d := byName[n]
		if !d.System {
			if qs, err := s.adm.GroupProgress(ctx, n, "", ""); err == nil {
				var lag int64
				for _, q := range qs {
					lag += q.Lag
					if !slices.Contains(d.Topics, q.Topic) && !isSystemTopic(q.Topic) {
						d.Topics = append(d.Topics, q.Topic)
					}
				}
				d.Lag = &lag
			}
			d.Clients = s.clientCount(r, n)
			d.ConsumePerSec = s.sampler.groupRate(n)
		}
		slices.Sort(d.Topics)
		out = append(out, *d)
	}
	return map[string]any{"groups": out}, nil
}

// clientCount is how many clients of group are connected: 0 when none is
// online, nil when the brokers could not be asked.
func (s *Server) clientCount(r *http.Request, group string) *int {
	cc, err := s.adm.ConsumerConnections(r.Context(), group, "")
	n := len(cc.Connections)
	if err != nil && !errors.Is(err, admin.ErrNotFound) {
		return nil
	}
	return &n
}

// knownGroup fails with a 404 naming the group when no broker has it.
func (s *Server) knownGroup(r *http.Request, group string) error {
	if group == "" {
		return badRequest("group", "group is required")
	}
	gs, err := s.adm.GroupList(r.Context(), "", "")
	if err != nil {
		return err
	}
	for _, g := range gs {
		if g.Name == group {
			return nil
		}
	}
	return notFound("group", "consumer group %q does not exist", group)
}

type groupQueueDoc struct {
	Topic          string `json:"topic"`
	BrokerName     string `json:"brokerName"`
	QueueID        int32  `json:"queueId"`
	BrokerOffset   int64  `json:"brokerOffset"`
	ConsumerOffset int64  `json:"consumerOffset"`
	Lag            int64  `json:"lag"`
}

type clientDoc struct {
	ClientID   string `json:"clientId"`
	Addr       string `json:"addr"`
	Language   string `json:"language"`
	Version    int32  `json:"version"`
	BrokerName string `json:"brokerName"`
}

type topicCount struct {
	Topic    string `json:"topic"`
	Messages int64  `json:"messages"`
}

func (s *Server) getGroup(r *http.Request, _ user) (any, error) {
	group := r.PathValue("group")
	if err := s.knownGroup(r, group); err != nil {
		return nil, err
	}
	ctx := r.Context()
	qs, err := s.adm.GroupProgress(ctx, group, "", "")
	if err != nil {
		return nil, err
	}
	queues := []groupQueueDoc{}
	var lag int64
	for _, q := range qs {
		queues = append(queues, groupQueueDoc{Topic: q.Topic, BrokerName: q.BrokerGroup, QueueID: q.QueueID,
			BrokerOffset: q.BrokerOffset, ConsumerOffset: q.ConsumerOffset, Lag: q.Lag})
		lag += q.Lag
	}
	clients := []clientDoc{}
	cc, err := s.adm.ConsumerConnections(ctx, group, "")
	if err != nil && !errors.Is(err, admin.ErrNotFound) {
		return nil, err
	}
	for _, c := range cc.Connections {
		clients = append(clients, clientDoc{ClientID: c.ClientID, Addr: c.ClientAddr, Language: c.Language, Version: c.Version, BrokerName: c.BrokerGroup})
	}
	return map[string]any{"name": group, "lag": lag, "consumePerSec": s.sampler.groupRate(group), "queues": queues,
		"clients": clients, "retry": s.countTopic(r, "%RETRY%"+group), "dlq": s.countTopic(r, "%DLQ%"+group)}, nil
}

// countTopic is the number of messages a topic holds (0 when it does not exist).
func (s *Server) countTopic(r *http.Request, topic string) topicCount {
	c := topicCount{Topic: topic}
	if qs, err := s.adm.TopicStatus(r.Context(), topic); err == nil {
		for _, q := range qs {
			c.Messages += q.MaxOffset - q.MinOffset
		}
	}
	return c
}

type resetBody struct {
	Topic     string `json:"topic"`
	Timestamp *int64 `json:"timestamp"`
	Confirm   *bool  `json:"confirm"`
}

func (b resetBody) check() error {
	if err := checkTopicName("topic", b.Topic); err != nil {
		return err
	}
	if b.Timestamp == nil {
		return badRequest("timestamp", "timestamp is required (unix ms; -1 = the end of each queue, 0 = the beginning)")
	}
	if *b.Timestamp < -1 {
		return badRequest("timestamp", "timestamp=%d: use unix ms, -1 for the end of each queue or 0 for the beginning", *b.Timestamp)
	}
	return nil
}

type resetQueueDoc struct {
	BrokerName    string `json:"brokerName"`
	QueueID       int32  `json:"queueId"`
	BrokerOffset  int64  `json:"brokerOffset"`
	CurrentOffset int64  `json:"currentOffset"`
	NewOffset     int64  `json:"newOffset"`
	LagBefore     int64  `json:"lagBefore"`
	LagAfter      int64  `json:"lagAfter"`
}

// resetPreview computes what a reset would do, queue by queue, as the broker
// will (the first offset stored at or after the time, the end for -1), and
// the lag it leaves.
func (s *Server) resetPreview(r *http.Request, _ user) (any, error) {
	group := r.PathValue("group")
	var b resetBody
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	if err := s.knownGroup(r, group); err != nil {
		return nil, err
	}
	rt, err := s.topicRoute(r, b.Topic)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	targets := map[string]string{}
	for _, bd := range rt.BrokerDatas {
		targets[bd.BrokerName] = admin.Group{Name: bd.BrokerName, Addrs: bd.BrokerAddrs}.Target()
	}
	current := map[string]int64{}
	if qs, err := s.adm.GroupProgress(ctx, group, b.Topic, ""); err == nil {
		for _, q := range qs {
			current[fmt.Sprintf("%s/%d", q.BrokerGroup, q.QueueID)] = q.ConsumerOffset
		}
	}
	statuses, err := s.adm.TopicStatus(ctx, b.Topic)
	if err != nil {
		return nil, err
	}
	ts := *b.Timestamp
	queues := []resetQueueDoc{}
	var before, after int64
	for _, q := range statuses {
		if q.Err != nil {
			return nil, q.Err
		}
		cur, ok := current[fmt.Sprintf("%s/%d", q.Group, q.QueueID)]
		if !ok || cur < 0 {
			cur = q.MinOffset // nothing committed: a consumer would start at the beginning or the end; show the beginning
		}
		nw := q.MaxOffset
		if ts >= 0 {
			if nw, err = s.adm.OffsetByTime(ctx, targets[q.Group], b.Topic, q.QueueID, ts); err != nil {
				return nil, err
			}
		}
		d := resetQueueDoc{BrokerName: q.Group, QueueID: q.QueueID, BrokerOffset: q.MaxOffset, CurrentOffset: cur,
			NewOffset: nw, LagBefore: max(q.MaxOffset-cur, 0), LagAfter: max(q.MaxOffset-nw, 0)}
		before += d.LagBefore
		after += d.LagAfter
		queues = append(queues, d)
	}
	var summary string
	switch {
	case after > before:
		summary = fmt.Sprintf("%s will re-consume %d messages of %s (lag %d → %d)", group, after-before, b.Topic, before, after)
	case after < before:
		summary = fmt.Sprintf("%s will skip %d messages of %s (lag %d → %d)", group, before-after, b.Topic, before, after)
	default:
		summary = fmt.Sprintf("%s keeps its lag of %d on %s", group, before, b.Topic)
	}
	return map[string]any{"topic": b.Topic, "timestamp": ts, "lagBefore": before, "lagAfter": after, "queues": queues, "summary": summary}, nil
}

func (s *Server) resetGroup(r *http.Request, u user) (any, error) {
	group := r.PathValue("group")
	var b resetBody
	if err := decodeBody(r, &b); err != nil {
		return nil, err
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	if err := confirmed(b.Confirm); err != nil {
		return nil, err
	}
	if err := s.knownGroup(r, group); err != nil {
		return nil, err
	}
	if _, err := s.topicRoute(r, b.Topic); err != nil {
		return nil, err
	}
	// force: the preview showed the offsets the broker computes; without it a
	// queue would only move backwards and the preview would have lied.
	rs, err := s.as(u).GroupResetOffset(r.Context(), group, b.Topic, *b.Timestamp, true, "")
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, q := range rs {
		out = append(out, map[string]any{"brokerName": q.BrokerGroup, "queueId": q.QueueID, "offset": q.Offset})
	}
	return map[string]any{"queues": out}, nil
}
