package metrics

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
			req.Started()
			req.After((*requestObserver)(m))
			return next(ctx, req)
		}
	}
}

// requestObserver is Metrics as the After that records each answer.
type requestObserver Metrics

func (o *requestObserver) After(req *route.Request, resp *transport.Command, err error) (*transport.Command, error) {
	resp = route.Respond(resp, err)
	(*Metrics)(o).observeRequest(req.Command, resp, req.Elapsed())
	return resp, nil
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

// requestSeriesKey identifies the two series one request is counted in. resp
// is the response code, or noResponse.
type requestSeriesKey struct {
	req      transport.RequestCode
	resp     int32
	longPoll bool
}

const noResponse = int32(-1) << 20

// requestSeries are a requestSeriesKey's counter and latency histogram.
type requestSeries struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

func (m *Metrics) observeRequest(req, resp *transport.Command, elapsed time.Duration) {
	key := requestSeriesKey{req: req.RequestCode(), resp: noResponse}
	if resp != nil {
		key.resp = int32(resp.ResponseCode())
	}
	if key.req == transport.PullMessage {
		flag, _ := strconv.Atoi(req.Field("sysFlag"))
		key.longPoll = flag&pullFlagSuspend != 0
	}
	s := m.seriesOf(key)
	s.count.Inc()
	s.latency.Observe(elapsed.Seconds())
	if route.Forwarded(req) {
		m.forwardedIn.Inc()
	}
}

// seriesOf returns key's series, resolved once: formatting, lower-casing and
// hashing four labels per request was ~5 % of a leader's CPU under the async
// benchmark. Only known request codes are kept, so a client sending made-up
// codes cannot grow the cache (their labels collapse to "other" anyway);
// response codes are the broker's own.
func (m *Metrics) seriesOf(key requestSeriesKey) requestSeries {
	if s, ok := m.series.Load(key); ok {
		return s.(requestSeries)
	}
	code, rmqCode := "none", "none"
	if key.resp != noResponse {
		code = transport.ResponseCode(key.resp).String()
		rmqCode = rocketmqCodeName(code)
	}
	s := requestSeries{
		count:   m.requests.WithLabelValues(requestLabel(key.req), code),
		latency: m.rpcLatency.WithLabelValues(protocolRemoting, rocketmqCodeName(key.req.String()), rmqCode, boolLabel(key.longPoll)),
	}
	if requestLabel(key.req) != "other" {
		m.series.Store(key, s)
	}
	return s
}
