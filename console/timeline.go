package console

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// timelineEntry is one leadership observation of one node
// (docs/console-api.md § timeline).
type timelineEntry struct {
	Time           int64  `json:"time"`
	BrokerName     string `json:"brokerName"`
	Node           string `json:"node"`
	Term           uint64 `json:"term"`
	Leader         string `json:"leader"`
	PreviousLeader string `json:"previousLeader"`
	Cause          string `json:"cause"`
	Detail         string `json:"detail"`
}

func (e timelineEntry) key() string {
	return e.BrokerName + "\x00" + e.Node + "\x00" + strconv.FormatUint(e.Term, 10) + "\x00" + e.Leader + "\x00" + e.Cause + "\x00" + strconv.FormatInt(e.Time, 10)
}

// timelineKeep bounds what the console remembers: every node's ring (256)
// for a few groups.
const timelineKeep = 4096

// timeline accumulates the nodes' observations, so a node that died keeps
// its history on the page.
type timeline struct {
	mu      sync.Mutex
	entries map[string]timelineEntry
}

// add merges es and returns the ones not seen before, oldest first.
func (t *timeline) add(es []timelineEntry) []timelineEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.entries == nil {
		t.entries = map[string]timelineEntry{}
	}
	var fresh []timelineEntry
	for _, e := range es {
		if _, ok := t.entries[e.key()]; !ok {
			t.entries[e.key()] = e
			fresh = append(fresh, e)
		}
	}
	if len(t.entries) > timelineKeep {
		all := t.sortedLocked()
		for _, e := range all[timelineKeep:] {
			delete(t.entries, e.key())
		}
	}
	slices.SortFunc(fresh, func(a, b timelineEntry) int { return cmp.Compare(a.Time, b.Time) })
	return fresh
}

// sortedLocked is newest first.
func (t *timeline) sortedLocked() []timelineEntry {
	out := make([]timelineEntry, 0, len(t.entries))
	for _, e := range t.entries {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b timelineEntry) int {
		return cmp.Or(cmp.Compare(b.Time, a.Time), cmp.Compare(a.key(), b.key()))
	})
	return out
}

func (t *timeline) query(brokerName string, since int64, limit int) []timelineEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := []timelineEntry{}
	for _, e := range t.sortedLocked() {
		if (brokerName == "" || e.BrokerName == brokerName) && e.Time > since {
			out = append(out, e)
			if len(out) == limit {
				break
			}
		}
	}
	return out
}

// gatherTimeline asks every node of every group for its observations; nodes
// that do not answer are skipped (their earlier entries stay).
func (s *Server) gatherTimeline(ctx context.Context, doc clusterDoc) []timelineEntry {
	var out []timelineEntry
	for _, g := range doc.Groups {
		for _, n := range g.Nodes {
			if !n.Up {
				continue
			}
			h, err := s.adm.LeadershipHistory(ctx, n.Addr)
			if err != nil {
				continue
			}
			out = append(out, entriesOf(g.BrokerName, h)...)
		}
	}
	return out
}

func entriesOf(group string, h admin.NodeLeadership) []timelineEntry {
	out := make([]timelineEntry, 0, len(h.Events))
	for _, e := range h.Events {
		out = append(out, timelineEntry{Time: e.TimeMs, BrokerName: cmp.Or(h.BrokerName, group), Node: h.Node, Term: e.Term,
			Leader: e.Leader, PreviousLeader: e.PreviousLeader, Cause: e.Cause, Detail: e.Detail})
	}
	return out
}

// timelineLimit is the most entries one answer carries.
const timelineLimit = 500

func (s *Server) getTimeline(r *http.Request, _ user) (any, error) {
	q := r.URL.Query()
	var since int64
	if v := q.Get("since"); v != "" {
		var err error
		if since, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, badRequest("since", "since=%q is not a time in unix milliseconds", v)
		}
	}
	// Fresh from the nodes, so a change of the last second is there too.
	if doc, err := s.snapshot(r.Context()); err == nil {
		s.sampler.timeline.add(s.gatherTimeline(r.Context(), doc))
	}
	return map[string]any{"events": s.sampler.timeline.query(q.Get("brokerName"), since, timelineLimit)}, nil
}
