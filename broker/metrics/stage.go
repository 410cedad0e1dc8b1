package metrics

import (
	"context"
	"strings"
	"time"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// Stage is the first stage of the route chain: it times the rest of the chain,
// turns its outcome into the final response (route.Respond) so the response
// code is the one the client gets, records the request, and returns that
// response with no error.
func (m *Metrics) Stage() route.Stage {
	return func(next route.Handler) route.Handler {
		return func(ctx context.Context, req *route.Request) (*transport.Command, error) {
			start := time.Now()
			resp := route.Respond(next(ctx, req))
			m.observeRequest(req.Command, resp, time.Since(start))
			return resp, nil
		}
	}
}

// requestLabel names a request code; codes outside the known tables collapse to
// "other" so a client cannot grow the label set.
func requestLabel(c transport.RequestCode) string {
	s := c.String()
	if strings.HasPrefix(s, "UNKNOWN") {
		return "other"
	}
	return s
}

func (m *Metrics) observeRequest(req, resp *transport.Command, elapsed time.Duration) {
	code := "none"
	if resp != nil {
		code = resp.ResponseCode().String()
	}
	rc := req.RequestCode()
	m.requests.WithLabelValues(requestLabel(rc), code).Inc()
	switch rc {
	case transport.SendMessage, transport.SendMessageV2, transport.SendBatchMessage:
		m.latency.WithLabelValues("send").Observe(elapsed.Seconds())
	case transport.PullMessage:
		m.latency.WithLabelValues("pull").Observe(elapsed.Seconds())
	}
	if route.Forwarded(req) {
		m.forwardedIn.Inc()
	}
}
