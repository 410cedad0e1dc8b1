package console

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// point is [unix ms, value], as the API sends it.
type point [2]float64

// series is one named, labelled time series (docs/console-api.md § Charts).
type series struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
	Points []point           `json:"points"`
}

// seriesStore keeps every series' points of the last window.
//
// Concurrency: all methods take mu; the sampler adds, handlers read.
type seriesStore struct {
	window time.Duration
	mu     sync.Mutex
	m      map[string]*series
}

func newSeriesStore(window time.Duration) *seriesStore {
	return &seriesStore{window: window, m: map[string]*series{}}
}

func seriesKey(name string, labels map[string]string) string {
	var b strings.Builder
	b.WriteString(name)
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		b.WriteString("\x00" + k + "=" + labels[k])
	}
	return b.String()
}

// add appends one point and drops the ones older than the window (of every
// series, so a series that stopped, say of a removed node, empties and goes).
func (st *seriesStore) add(name string, labels map[string]string, t time.Time, v float64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	k := seriesKey(name, labels)
	s := st.m[k]
	if s == nil {
		s = &series{Name: name, Labels: labels}
		st.m[k] = s
	}
	s.Points = append(s.Points, point{float64(t.UnixMilli()), v})
	cut := float64(t.Add(-st.window).UnixMilli())
	for key, s := range st.m {
		i := 0
		for i < len(s.Points) && s.Points[i][0] < cut {
			i++
		}
		s.Points = s.Points[i:]
		if len(s.Points) == 0 {
			delete(st.m, key)
		}
	}
}

// since returns copies of every series with the points after since (ms),
// sorted by name and labels; series with no such point are left out.
func (st *seriesStore) since(since int64) []series {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := []series{}
	for _, k := range slices.Sorted(maps.Keys(st.m)) {
		s := st.m[k]
		i, _ := slices.BinarySearchFunc(s.Points, float64(since), func(p point, t float64) int {
			return cmp.Compare(p[0], t+0.5) // strictly after since
		})
		if i < len(s.Points) {
			out = append(out, series{Name: s.Name, Labels: maps.Clone(s.Labels), Points: slices.Clone(s.Points[i:])})
		}
	}
	return out
}

// counter is one sample of a monotonic count.
type counter struct {
	t time.Time
	v float64
}

// rate is the per-second increase from prev to cur; nil without a previous
// sample, over no time, or when the count went down (a restarted broker
// starts its counters again).
func rate(prev, cur counter, ok bool) *float64 {
	dt := cur.t.Sub(prev.t).Seconds()
	if !ok || dt <= 0 || cur.v < prev.v {
		return nil
	}
	r := (cur.v - prev.v) / dt
	return &r
}

func (s *Server) getSeries(r *http.Request, _ user) (any, error) {
	var since int64
	if v := r.URL.Query().Get("since"); v != "" {
		var err error
		if since, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, badRequest("since", "since=%q is not a time in unix milliseconds", v)
		}
	}
	return map[string]any{"intervalMs": s.cfg.ClusterEvery.Milliseconds(), "windowMs": s.cfg.Window.Milliseconds(),
		"series": s.sampler.series.since(since)}, nil
}
