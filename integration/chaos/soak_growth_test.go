package chaos

import (
	"strings"
	"testing"
	"time"
)

// soakGrowth judges the second fifth of a run against the last: flat series
// pass, and each kind of leak is named.
func TestSoakGrowthJudgesLeaks(t *testing.T) {
	total := 100 * time.Minute
	series := func(grow func(k int, s *soakSample)) []soakSample {
		var all []soakSample
		for k := range 100 {
			s := soakSample{at: time.Duration(k) * time.Minute, up: true, anonRSS: 100 << 20, goroutines: 200,
				fds: 60, raftBytes: int64(k) * 1000 * 300, storeBytes: int64(k) * 1000 * 700, acked: int64(k) * 1000}
			grow(k, &s)
			all = append(all, s)
		}
		return all
	}
	if p := soakGrowth(series(func(int, *soakSample) {}), total); len(p) != 0 {
		t.Fatalf("flat series judged as growth: %v", p)
	}
	for _, tc := range []struct {
		what string
		grow func(k int, s *soakSample)
	}{
		{"goroutines", func(k int, s *soakSample) { s.goroutines += 10 * k }},
		{"anonymous RSS", func(k int, s *soakSample) { s.anonRSS += int64(k) << 22 }},
		{"open files", func(k int, s *soakSample) { s.fds += 2 * k }},
		{"disk bytes per acknowledged message", func(k int, s *soakSample) { s.raftBytes += int64(k*k) * 50000 }},
	} {
		p := soakGrowth(series(tc.grow), total)
		if len(p) != 1 || !strings.Contains(p[0], tc.what) {
			t.Errorf("%s leak: problems %v, want one naming it", tc.what, p)
		}
	}
	if p := soakGrowth(nil, total); len(p) != 1 || !strings.Contains(p[0], "too few samples") {
		t.Errorf("no samples: %v", p)
	}
}
