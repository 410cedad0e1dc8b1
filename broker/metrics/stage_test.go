package metrics

import (
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

// The per-request series are resolved once per (request, response, long
// poll) and then reused: the counts land on the same labelled series as
// WithLabelValues would give, and a made-up request code is counted under
// "other" without growing the cache.
func TestObserveRequestReusesItsSeries(t *testing.T) {
	m := New(testOptions)
	send := transport.NewRequest(transport.SendMessageV2, nil, nil)
	ok := transport.NewResponse(transport.Success, "")
	for range 3 {
		m.observeRequest(send, ok, time.Millisecond)
	}
	pull := transport.NewRequest(transport.PullMessage, map[string]string{"sysFlag": "2"}, nil)
	m.observeRequest(pull, transport.NewResponse(transport.PullNotFound, ""), time.Second)
	m.observeRequest(pull, nil, time.Second)

	if got := counterValue(t, m.requests.WithLabelValues(transport.SendMessageV2.String(), transport.Success.String())); got != 3 {
		t.Fatalf("send SUCCESS counted %v times, want 3", got)
	}
	if got := counterValue(t, m.requests.WithLabelValues(transport.PullMessage.String(), transport.PullNotFound.String())); got != 1 {
		t.Fatalf("pull PULL_NOT_FOUND counted %v, want 1", got)
	}
	if got := counterValue(t, m.requests.WithLabelValues(transport.PullMessage.String(), "none")); got != 1 {
		t.Fatalf("pull without a response counted %v, want 1", got)
	}
	cached := func() int {
		n := 0
		m.series.Range(func(any, any) bool { n++; return true })
		return n
	}
	if n := cached(); n != 3 {
		t.Fatalf("%d cached series, want 3 (send/ok, pull/not found, pull/none)", n)
	}
	for code := range 50 {
		m.observeRequest(transport.NewRequest(transport.RequestCode(30000+code), nil, nil), ok, time.Millisecond)
	}
	if got := counterValue(t, m.requests.WithLabelValues("other", transport.Success.String())); got != 50 {
		t.Fatalf("made-up codes counted %v under other, want 50", got)
	}
	if n := cached(); n != 3 {
		t.Fatalf("%d cached series after made-up codes, want still 3", n)
	}
}
