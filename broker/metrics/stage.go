package metrics

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// protocolRemoting is rocketmq_rpc_latency's protocol_type (RocketMQ 5 also has grpc).
const protocolRemoting = "remoting"

// pullFlagSuspend is PullSysFlag's long-polling bit.
const pullFlagSuspend = 0x2

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

// rocketmqCodeName is a code as RocketMQ's rpc_latency labels it: the constant's
// name in lower case ("SEND_MESSAGE(10)" → "send_message"); unknown codes are
// "other".
func rocketmqCodeName(s string) string {
	if strings.HasPrefix(s, "UNKNOWN") {
		return "other"
	}
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = s[:i]
	}
	return strings.ToLower(s)
}

func (m *Metrics) observeRequest(req, resp *transport.Command, elapsed time.Duration) {
	code, rmqCode := "none", "none"
	if resp != nil {
		code = resp.ResponseCode().String()
		rmqCode = rocketmqCodeName(code)
	}
	rc := req.RequestCode()
	m.requests.WithLabelValues(requestLabel(rc), code).Inc()
	longPoll := false
	if rc == transport.PullMessage {
		flag, _ := strconv.Atoi(req.ExtFields["sysFlag"])
		longPoll = flag&pullFlagSuspend != 0
	}
	m.rpcLatency.WithLabelValues(protocolRemoting, rocketmqCodeName(rc.String()), rmqCode, boolLabel(longPoll)).Observe(elapsed.Seconds())
	if route.Forwarded(req) {
		m.forwardedIn.Inc()
	}
}
